"""The first generation's `neuronxcc.nki.compiler`: its compiler controls (decorators that leave a simulated kernel as it
is); its allocation APIs are stand-ins that refuse when used."""
from ...sim.nki_launch import (skip_middle_end_transformations, enable_stack_allocator, force_auto_alloc,
                               nki_name as _nki_name)
from ...sim.nki_isa2 import no_reorder

__all__ = ['skip_middle_end_transformations', 'enable_stack_allocator', 'force_auto_alloc', 'no_reorder']


def __getattr__(name): return _nki_name('nki.compiler', name, '; dwlit allocates tiles itself (nl.ndarray(..., address=) places one)')
