"""Current NKI's `nki.collectives` (communication between devices): stand-ins that refuse when used."""
from ...sim.nki_launch import nki_name as _nki_name

__all__ = []


def __getattr__(name): return _nki_name('nki.collectives', name, '; dwlit simulates one NeuronCore at a time')
