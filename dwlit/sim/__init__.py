"""The simulated NeuronCore: the part every other part of dwlit stands on, and the names they use of it.

Modules, from the bottom up: `checks` (errors and argument checks), `target` (the hardware's figures and the
simulator's budgets), `core` (allocators and cores), `ap` (access patterns), `memory` (buffers, dtypes, tensors),
`isa` (the instructions), `tracing` (what a run issued), `launch` (`@kernel`, `simulate_kernel` and the executor
seam), `language` (NKI's `nl`: allocation, SPMD programs, tile functions), `replay` (the executor that runs a launch
again), and NKI's two generations as `dwlit.nki` serves them: `nki_index` (index expressions, masks), `nki_dynamic`
(indices read at run time), `nki1` (the first generation's tile-returning forms), `nki_tiles` (nl's tile functions,
tiles as values), `nki_isa` and `nki_isa2` (the wider instructions), `nki_launch` (grids, `nki.jit`, every public
name). Other parts import from here, `from dwlit.sim import ...`, never from a
module of it, so that the inside of the simulator can change without touching them."""
from . import checks, target, core, ap, memory, isa, tracing, launch, language, replay  # noqa: F401
from . import nki_index, nki_dynamic, nki1, nki_tiles, nki_isa, nki_isa2, nki_launch  # noqa: F401  (appendix 34b-34h)
from .checks import (SimulatorError, SimulatorTypeError, AccessPatternError, AllocationError, NotModelledError, check_instance, check_items,
                     PADDING_FORM, check_bool, check_choice, check_int, check_ints, check_number, check_padding,
                     check_shape, check_unit, errors_from, shown)
from .target import (KiB, Target, TARGETS, get_target, set_target, using_target, PARTITIONS, PSUM_BANK_BYTES, PSUM_BANKS,
                     PSUM_BANK_FP32, GEMM_STATIONARY_FMAX, GEMM_MOVING_FMAX, MAX_FREE_DIMS, MAX_HBM_BYTES, MAX_PROGRAMS,
                     MAX_INSTRUCTIONS, MAX_FREE_ELEMENTS, MAX_VIEW_ELEMENTS)
from .core import Allocator, NeuronCore, current_core, use_core, reset_default_core
from .memory import (Buffer, sbuf, psum, hbm, private_hbm, shared_hbm, float32, float16, bfloat16, DTYPES, KERNEL_DTYPES,
                     as_dtype, kernel_dtype, Tensor, ndarray, hbm_tensor, check_tensor)
from .ap import View, touch_counts
from .isa import ENGINES, PE_ARRAY
from .tracing import trace, Trace, Instruction, Access, plot_trace
from .launch import KernelFunction, Launch, Job, Executor, kernel, simulate_kernel
from .nki_launch import coverage_table
