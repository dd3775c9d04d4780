"""Depthwise convolution on a simulated NeuronCore, rebuilt in literate notebooks: no PE array, just multiply and reduce.

Modules:

- `dwlit.apps.cli`: `dwlit explain` plans a shape you type, or a layer of a real network, without running it: the kernel that would run, how its channels are shared among SPMD programs, the size of every instruction, the SBUF it needs and, when it does not fit, the least change that would; and the command line that puts it and the tour behind one command.
- `dwlit.apps.layers`: One depthwise layer of a published network, from its preset to a checked result: the kernel call it becomes, the SPMD programs it needs to fit SBUF on trn1, trn2 and trn3, a traced run priced by the cost model, and a check against JAX's own convolution that a compiler crash cannot take down.
- `dwlit.apps.networks`: Every depthwise layer of Mamba, the Conformer, a speech front end, MobileNetV2, ConvNeXt-T and EfficientNet-B0 put through the kernels and checked against XLA: what decides the programs in 1D and the time in 2D on trn1, trn2 and trn3, and the two kinds of real layer the kernels refuse, a long convolution and stride 2.
- `dwlit.apps.tour`: `dwlit tour` runs every depthwise kernel of the book in the simulator, on small shapes, and checks each against a reference written separately in plain NumPy and against its own plan: the first command to run after installing dwlit.
- `dwlit.sim.core`: How the simulator counts memory: an allocator per memory that refuses what does not fit and keeps the peak, and a `NeuronCore` that owns one SBUF and one PSUM and knows which SPMD program it runs; one core is current at a time.
- `dwlit.sim.launch`: How `simulate_kernel` and `@kernel` run a kernel: NumPy arguments placed in HBM, one program per SPMD rank on a fresh core, the result checked and handed back as NumPy; and the one seam where a faster way to run a launch plugs in, the executor.
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
