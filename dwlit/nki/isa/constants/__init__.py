"""The first generation's `neuronxcc.nki.isa.constants`: the enums of `nisa` (engine, dge_mode, oob_mode, ...)."""
from ....sim.isa import engine, dge_mode, oob_mode, reduce_cmd, matmul_perf_mode, nc_version
from ....sim.nki_launch import nki_name as _nki_name

__all__ = ['engine', 'dge_mode', 'oob_mode', 'reduce_cmd', 'matmul_perf_mode', 'nc_version']


def __getattr__(name): return _nki_name('nisa.constants', name)
