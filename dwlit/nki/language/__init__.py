"""NKI's `nki.language` (`nl`) for both generations: `dwlit.sim.language` (the book's `nl`), with the tile functions of
either generation (`dwlit.sim.nki_tiles`), index expressions (`dwlit.sim.nki_index`), launch grids (`dwlit.sim.nki_launch`)
and the wider instructions (`dwlit.sim.nki_isa2`). Any other public NKI name is a stand-in that refuses when used."""
from ...sim.language import (affine_range, sequential_range, static_range, ds, tile_size, sbuf, psum, hbm, private_hbm,
                             shared_hbm, float32, float16, bfloat16, float8_e4m3, float8_e5m2, float8_e4m3fn, int8, uint8,
                             int16, uint16, int32, uint32, bool_, is_hbm, is_on_chip, is_psum, is_sbuf, NKIObject, NkiTensor)
from ...sim.nki_tiles import (ndarray, zeros, ones, full, zeros_like, empty_like, load, store, load_transpose2d, matmul, transpose,
                         broadcast_to, par_dim, device_print, add, subtract, multiply, maximum, minimum, divide, equal,
                         not_equal, less, less_equal, greater, greater_equal, copy, exp, log, tanh, sigmoid, relu, silu,
                         gelu_apprx_tanh, square, sqrt, rsqrt, reciprocal, abs, sin, softplus, gelu, erf, sign, arctan, mish,
                         sum, max, min, prod, mean, negative)
from ...sim.nki_tiles import atomic_rmw
from ...sim.nki_index import arange, mgrid
from ...sim.nki_isa2 import (shared_identity_matrix, dynamic_range, fp32, finfo, static_cast, where, bypass, var, softmax,
                             expand_dims, no_reorder)
from ...sim.nki_launch import program_id, num_programs, program_ndim, nc, spmd_dim, nki_name as _nki_name

__all__ = [n for n in dir() if not n.startswith('_')]


def __getattr__(name):
    "Any other public NKI name: a stand-in that refuses when used (a table may hold it); a name NKI lacks: an error."
    return _nki_name('nl', name)
