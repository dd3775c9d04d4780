"""NKI's front end as dwlit models it: `import dwlit.nki as nki`, `import dwlit.nki.language as nl`,
`import dwlit.nki.isa as nisa` and `from dwlit.nki.typing import tensor` give dwlit's `dwlit.language` and
`dwlit.isa` under NKI's names (chapter 21)."""
import functools, sys, types
from .. import language, isa
from ..language import jit, simulate_kernel
from ..memory import Tensor

sys.modules[__name__ + '.language'] = language
sys.modules[__name__ + '.isa'] = isa

typing = types.ModuleType(__name__ + '.typing', "NKI's `nki.typing`: `tensor`, the type of a kernel's tensor arguments.")
typing.tensor = Tensor
sys.modules[__name__ + '.typing'] = typing


def simulate(kernel):
    "NKI's `nki.simulate(kernel)(*arrays)`: run `kernel` (or `kernel[n]`) on the simulator, NumPy in and out."
    def run(*args, **kwargs):
        if isinstance(kernel, functools.partial): return kernel(*args, **kwargs)      # kernel[n]: already a launcher
        return simulate_kernel(kernel, *args, **kwargs)
    return run
