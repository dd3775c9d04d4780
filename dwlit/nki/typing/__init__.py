"""NKI's `nki.typing`: `tensor`, the type of a kernel's tensor arguments."""
from ...sim.memory import Tensor as tensor

__all__ = ['tensor']
