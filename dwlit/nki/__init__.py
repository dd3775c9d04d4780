"""NKI's front end over `dwlit.sim`: a kernel written for NKI runs after changing only its import lines
(`import dwlit.nki as nki`, `import dwlit.nki.language as nl`, `import dwlit.nki.isa as nisa`,
`from dwlit.nki.typing import tensor`). Chapter 27 runs public-style kernels through it.

This package is written by hand (nbdev exports modules, not packages): each of its modules is a few lines that give
`dwlit.sim`'s names under NKI's module names."""
import functools
from . import language, isa, typing
from ..sim.launch import jit, simulate_kernel

__all__ = ['language', 'isa', 'typing', 'jit', 'simulate']


def simulate(kernel):
    "NKI's `nki.simulate(kernel)(*arrays)`: run `kernel` (or `kernel[n]`) on the simulator, NumPy in and out."
    def run(*args, **kwargs):
        if isinstance(kernel, functools.partial): return kernel(*args, **kwargs)      # kernel[n]: already a launcher
        return simulate_kernel(kernel, *args, **kwargs)
    return run
