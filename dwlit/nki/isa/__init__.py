"""NKI's `nki.isa` (`nisa`): `dwlit.sim.isa` under NKI's module name."""
from ...sim import isa as _isa
from ...sim.isa import *  # noqa: F401,F403  (the instructions dwlit models)

__all__ = _isa.__all__


def __getattr__(name):
    "Any other NKI name: what `dwlit.sim.isa` says of it (a stand-in that refuses when used, or an error)."
    return getattr(_isa, name)
