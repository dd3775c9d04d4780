"""NKI's `nki.isa` (`nisa`) for both generations: each instruction takes the current form (dst first) or the first
generation's (returns a new tile), told apart by its arguments (`dwlit.sim.nki1`); the enums and the wider instructions
come from `dwlit.sim.isa`, `dwlit.sim.nki_isa` and `dwlit.sim.nki_isa2`. Any other public NKI name is a stand-in that refuses when used."""
from ...sim.isa import (engine, dge_mode, oob_mode, reduce_cmd, matmul_perf_mode, nc_version, get_nc_version,
                        get_nc_sub_version, tensor_engine, vector_engine, scalar_engine, gpsimd_engine, unknown_engine)
from ...sim.nki1 import (tensor_tensor, tensor_scalar, tensor_reduce, tensor_tensor_scan, nc_matmul, nc_transpose,
                         iota, memset, tensor_copy, dma_copy)
from ...sim.nki_isa import (reciprocal_ as reciprocal, bn_stats_ as bn_stats, bn_aggr_ as bn_aggr,
                            affine_select_ as affine_select, tensor_copy_predicated_ as tensor_copy_predicated,
                            select_reduce_ as select_reduce, range_select_ as range_select, tensor_scalar_cumulative)
from ...sim.nki_isa2 import (tensor_partition_reduce_ as tensor_partition_reduce, dma_transpose_ as dma_transpose,
                             nonzero_with_count, register_alloc, register_load, register_move, register_store, VirtualRegister,
                             nc_stream_shuffle, max8_ as max8, nc_find_index8_ as nc_find_index8, activate2,
                             tensor_copy_dynamic_src, tensor_copy_dynamic_dst, fp32, activation_ as activation,
                             activation_reduce_ as activation_reduce)
from ...sim.nki_launch import nki_name as _nki_name
from . import constants

__all__ = [n for n in dir() if not n.startswith('_')]


def __getattr__(name):
    "Any other public NKI name: a stand-in that refuses when used; a name NKI lacks (dwlit's own dve_transpose too): an error."
    return _nki_name('nisa', name)
