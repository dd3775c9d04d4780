"""NKI's front end over `dwlit.sim`, for both generations of NKI: a kernel written for the current NKI (`import nki`) or
for its first generation (`import neuronxcc.nki`, also served as `dwlit.neuronxcc.nki`) runs after changing only its
import lines (`import dwlit.nki as nki`, `import dwlit.nki.language as nl`, `import dwlit.nki.isa as nisa`,
`from dwlit.nki.typing import tensor`). Chapter 27 runs public-style kernels of both through it.

This package is written by hand (nbdev exports modules, not packages): each of its modules gives the simulator's names
(`dwlit.sim`, the appendix chapters 34b-34e) under NKI's module names. A public NKI name dwlit does not model is a
stand-in that raises `NotModelledError` naming it when it is used."""
import numpy as _np
from . import language, isa, typing, compiler, collectives
from ..sim.nki_launch import jit, simulate, simulate_kernel_nki as simulate_kernel, nki_name as _nki_name
from ..sim.memory import Tensor as tensor

dtype = _np.dtype           # current NKI's annotation type of a dtype argument (`dtype: nki.dtype = nl.bfloat16`)
baremetal = jit             # the first generation's "compile and run on a NeuronDevice": here, the simulator runs it
trace = jit                 # the first generation's older name of jit, which its own tests still use

__all__ = ['language', 'isa', 'typing', 'compiler', 'collectives', 'jit', 'simulate', 'simulate_kernel', 'tensor', 'dtype',
           'baremetal', 'trace']


def __getattr__(name):
    "Any other public NKI name: a stand-in that refuses when used (`nki.benchmark`, `nki.profile`, ...); else an error."
    return _nki_name('nki', name, '; dwlit simulates kernels (nki.jit, nki.simulate), it does not measure hardware')
