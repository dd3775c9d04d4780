"""NKI's `nki.typing`: `tensor`, the type of a kernel's tensor arguments; any other name of it is refused by name."""
from ...sim.checks import NotModelledError as _NotModelledError
from ...sim.memory import Tensor as tensor

__all__ = ['tensor']


def __getattr__(name):
    "Any other name of nki.typing: a NotModelledError that names it (dunder names stay Python's AttributeError)."
    if name.startswith('__'): raise AttributeError(name)
    raise _NotModelledError(f"nki.typing.{name} is not a name dwlit models; its nki.typing has tensor only")
