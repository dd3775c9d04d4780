"""Depthwise convolution on a simulated NeuronCore, rebuilt in literate notebooks: no PE array, just multiply and reduce."""

__version__ = "0.1.0"

# The public API (see README): `from dwlit import nl, nisa`, `dwlit.simulate_kernel`, `dwlit.trace`, errors.
from .memory import (SimulatorError, SimulatorTypeError, AccessPatternError, AllocationError, Tensor, NeuronCore, TARGETS,
                     get_target, set_target, using_target, current_core, use_core, reset_default_core)
from . import ap as _ap  # noqa: F401  (gives Tensor its .ap and slicing)
from .ap import View, touch_counts
from .isa import nl, nisa, trace, Trace, Instruction, simulate_kernel, kernel

# The kernels and what plans them without running them (chapters 05-09), and the cost model (chapter 11).
from .conv1d import conv1d_depthwise_default, conv1d_depthwise_f_packing, conv1d_depthwise_bf01_oi01_bf01
from .conv1d_plan import conv1d_plan
from .conv2d import conv2d_depthwise_f01b_o01i_bf01, conv2d_plan
from .layouts import parse_conv_labels, convert_layout
from .cost import predict
