"""Depthwise convolution on a simulated NeuronCore, rebuilt in literate notebooks: no PE array, just multiply and reduce.

Modules:

- `dwlit.apps.cli`: `dwlit explain` plans a shape you type, or a layer of a real network, without running it: the kernel that would run, how its channels are shared among SPMD programs, the size of every instruction, the SBUF it needs and, when it does not fit, the least change that would; and the command line that puts it and the tour behind one command.
- `dwlit.apps.layers`: One depthwise layer of a published network, from its preset to a checked result: the kernel call it becomes, the SPMD programs it needs to fit SBUF on trn1, trn2 and trn3, a traced run priced by the cost model, and a check against JAX's own convolution that a compiler crash cannot take down.
- `dwlit.apps.networks`: Every depthwise layer of Mamba, the Conformer, a speech front end, MobileNetV2, ConvNeXt-T and EfficientNet-B0 put through the kernels and checked against XLA: what decides the programs in 1D and the time in 2D on trn1, trn2 and trn3, and the two kinds of real layer the kernels refuse, a long convolution and stride 2.
- `dwlit.apps.tour`: `dwlit tour` runs every depthwise kernel of the book in the simulator, on small shapes, and checks each against a reference written separately in plain NumPy and against its own plan: the first command to run after installing dwlit.
- `dwlit.sim.core`: How the simulator counts memory: an allocator per memory that refuses what does not fit and keeps the peak, and a `NeuronCore` that owns one SBUF and one PSUM and knows which SPMD program it runs; one core is current at a time.
- `dwlit.sim.launch`: How `simulate_kernel` and `@kernel` run a kernel: NumPy arguments placed in HBM, one program per SPMD rank on a fresh core, the result checked and handed back as NumPy; and the one seam where a faster way to run a launch plugs in, the executor.
- `dwlit.sim.nki1`: The first generation of NKI (`neuronxcc.nki`) returns a new tile from every instruction; the current one writes into a `dst` given first. One `nisa` serves both: each instruction tells the two forms apart by its arguments, and the first generation's allocates its result and issues the current form.
- `dwlit.sim.nki_dynamic`: Both generations of NKI also index HBM with values computed on chip: one row per partition chosen by an index tile, or one offset read from a tile or a register. dwlit reads them when the instruction runs, as the hardware does.
- `dwlit.sim.nki_index`: The first generation of NKI (`neuronxcc.nki`) indexes a tile with `nl.arange` and `nl.mgrid` expressions and limits an instruction with `mask=`; both become dwlit access patterns, so an indexed tile is a view, never a copy.
- `dwlit.sim.nki_isa`: The Vector-engine instructions public kernels use beyond the book's: `reciprocal`, `bn_stats` and `bn_aggr`, the selects (`tensor_copy_predicated`, `affine_select`, `select_reduce`, `range_select`) and the engine's accumulators (`tensor_scalar_cumulative`): each written as check, compute, record, in both generations' forms.
- `dwlit.sim.nki_isa2`: Reductions across partitions, DMA transposes, identity matrices, registers and dynamic loops, `nonzero_with_count`, `nc_stream_shuffle`, `max8`, `nc_find_index8` and `activate2`: each written as check, compute, record, in both generations' forms.
- `dwlit.sim.nki_launch`: How a kernel of either generation is launched (`nki.jit` and its options, grids `kernel[a, b]`, the target NKI's simulator picks) and how every public name of NKI is either modelled or a stand-in that says it is not.
- `dwlit.sim.nki_tiles`: `nl.add`, `nl.exp`, `nl.sum`, `nl.matmul`, `nl.load` and `nl.store` take tiles and give a tile, with NumPy's broadcasting; the first generation also computes with `a + b`, writes with `t[...] = v` and `t += v`, and keeps tiles in block axes (`nl.par_dim`). Each becomes one or two instructions of chapter 4.
- `dwlit.sim.target`: The one home of every number the simulator takes from the hardware, each with its source (the partitions, SBUF and PSUM per partition on trn1, trn2 and trn3, the 2 KiB PSUM bank of 512 fp32 elements, the Tensor engine's tile limits), and of the simulator's own budgets, which keep any call bounded in time and memory."""

__version__ = "0.1.0"

import importlib

# The simulator: errors and budgets, memory, access patterns, instructions, the launcher.
from .sim.checks import SimulatorError, SimulatorTypeError, AccessPatternError, AllocationError, NotModelledError
from .sim.target import TARGETS, get_target, set_target, using_target, MAX_PROGRAMS, MAX_HBM_BYTES, MAX_INSTRUCTIONS
from .sim.core import NeuronCore, current_core, use_core, reset_default_core
from .sim.memory import Tensor
from .sim.ap import View, touch_counts
from .sim import language as nl, isa as nisa
from .sim.tracing import trace, Trace, Instruction
from .sim.launch import simulate_kernel, kernel

# Everything else, imported when first asked for: name -> module.
_LAZY = {
    'conv1d_depthwise_default': 'kernels.conv1d', 'conv1d_depthwise_f_packing': 'kernels.conv1d',
    'conv1d_depthwise_bf01_oi01_bf01': 'kernels.conv1d', 'conv1d_plan': 'kernels.conv1d_plan',
    'conv2d_depthwise_f01b_o01i_bf01': 'kernels.conv2d', 'conv2d_plan': 'kernels.conv2d',
    'parse_conv_labels': 'kernels.layouts', 'convert_layout': 'kernels.layouts', 'predict': 'analysis.timeline',
    'LAYERS': 'apps.layers', 'Layer': 'apps.layers', 'get_layer': 'apps.layers', 'run_layer': 'apps.layers',
    'explain_args': 'apps.layers', 'framework_reference': 'apps.layers', 'NotDone': 'exercises',
    'EXERCISES': 'exercises'}


def __getattr__(name):
    if name in _LAZY: return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'dwlit' has no attribute {name!r}")


def __dir__(): return sorted(set(globals()) | set(_LAZY))
