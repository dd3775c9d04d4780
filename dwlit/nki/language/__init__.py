"""NKI's `nki.language` (`nl`): `dwlit.sim.language` under NKI's module name."""
from ...sim import language as _language
from ...sim.language import *  # noqa: F401,F403  (the names NKI's nl has and dwlit models)

__all__ = _language.__all__


def __getattr__(name):
    "Any other NKI name: what `dwlit.sim.language` says of it (a stand-in that refuses when used, or an error)."
    return getattr(_language, name)
