__version__ = "0.1.0"

# The public API (see README): `from dwlit import nl, nisa`, `dwlit.simulate_kernel`, `dwlit.trace`, errors.
from .memory import (SimulatorError, AccessPatternError, AllocationError, Tensor, NeuronCore, TARGETS,
                     get_target, set_target, using_target, current_core, use_core, reset_default_core)
from . import ap as _ap  # noqa: F401  (gives Tensor its .ap and slicing)
from .ap import View, touch_counts
from .isa import nl, nisa, trace, Trace, Instruction, simulate_kernel, kernel
