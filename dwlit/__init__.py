"""Depthwise convolution on a simulated NeuronCore, rebuilt in literate notebooks: no PE array, just multiply and reduce.

Modules:

- `dwlit.cost`: A per-instruction cost model read from the trace, an engine timeline, and what they say about the ~512-wide vector step, Vector-engine utilisation and the hard-coded `dtype_size`.
- `dwlit.proof`: The claim that the depthwise kernels never touch the systolic array, proved three ways (reading the source, watching the engines, and showing both checks fail on kernels that do use it), and why depthwise has nothing to gain from the dense path's K-replication trick."""

__version__ = "0.1.0"

# The public API (see README): `from dwlit import nl, nisa`, `dwlit.simulate_kernel`, `dwlit.trace`, errors.
from .memory import (SimulatorError, AccessPatternError, AllocationError, Tensor, NeuronCore, TARGETS,
                     get_target, set_target, using_target, current_core, use_core, reset_default_core)
from . import ap as _ap  # noqa: F401  (gives Tensor its .ap and slicing)
from .ap import View, touch_counts
from .isa import nl, nisa, trace, Trace, Instruction, simulate_kernel, kernel
