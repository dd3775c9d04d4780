"""The first generation's `neuronxcc.nki.compiler` (allocation and compiler controls): stand-ins that refuse when used."""
from ...sim.nki_launch import nki_name as _nki_name

__all__ = []


def __getattr__(name): return _nki_name('nki.compiler', name, '; dwlit allocates tiles itself (nl.ndarray(..., address=) places one)')
