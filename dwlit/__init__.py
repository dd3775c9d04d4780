"""Depthwise convolution on a simulated NeuronCore, rebuilt in literate notebooks: no PE array, just multiply and reduce.

Modules:

- `dwlit.book`: Where every fact in this book comes from: the original kernel file and what "L251" means, the public relatives of that file, the NKI documentation behind each hardware figure, XLA's convolution semantics, and the papers of the real layers.
- `dwlit.layers`: The depthwise layers of Mamba, the Conformer, a speech front end, MobileNetV2, ConvNeXt-T and EfficientNet-B0 put through the kernels: dispatch, SPMD programs and SBUF per target, instructions by engine, predicted time, and a check against XLA's own convolution; and the two kinds of layer the kernels refuse."""

__version__ = "0.1.0"

# The public API (see README): `from dwlit import nl, nisa`, `dwlit.simulate_kernel`, `dwlit.trace`, errors.
from .memory import (SimulatorError, SimulatorTypeError, AccessPatternError, AllocationError, Tensor, NeuronCore, TARGETS,
                     get_target, set_target, using_target, current_core, use_core, reset_default_core,
                     MAX_PROGRAMS, MAX_HBM_BYTES)
from . import ap as _ap  # noqa: F401  (gives Tensor its .ap and slicing)
from .ap import View, touch_counts
from .isa import nl, nisa, trace, Trace, Instruction, simulate_kernel, kernel, NotModelledError

# The kernels and what plans them without running them (chapters 05-09), and the cost model (chapter 11).
from .conv1d import conv1d_depthwise_default, conv1d_depthwise_f_packing, conv1d_depthwise_bf01_oi01_bf01
from .conv1d_plan import conv1d_plan
from .conv2d import conv2d_depthwise_f01b_o01i_bf01, conv2d_plan
from .layouts import parse_conv_labels, convert_layout
from .cost import predict

# Real layers (chapter 13): the presets, a layer through the kernels, and the framework reference (JAX, else NumPy).
from .layers import LAYERS, Layer, get_layer, run_layer, explain_args, framework_reference

# The exercises (chapter 14): a stub raises NotDone until you answer it; each check_... in dwlit.exercises runs your code.
from .exercises import NotDone, EXERCISES
