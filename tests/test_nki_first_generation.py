"""NKI's first generation (`neuronxcc.nki`) on dwlit: kernels of our own, written the way the first generation's
tutorials write theirs (nl.arange / nl.mgrid indices, masks, tile-returning instructions, operators on tiles, block
axes, 2-D grids), each checked against an independent NumPy computation on its own inputs."""
import math

import numpy as np
import pytest

import dwlit.neuronxcc.nki as nki  # the first generation's package name, served by dwlit
import dwlit.neuronxcc.nki.isa as nisa
import dwlit.neuronxcc.nki.language as nl
from dwlit import AccessPatternError, NotModelledError
from dwlit.neuronxcc.nki.language import par_dim

RNG = np.random.default_rng(29)


@nki.jit
def row_norm(x):
    "Each row divided by its root mean square, 128 rows a tile; the last tile masked to the rows that exist."
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.arange(128)[:, None], nl.arange(x.shape[1])[None, :]
    for t in nl.affine_range(math.ceil(x.shape[0] / 128)):
        rows = t * 128 + i_p
        a = nl.load(x[rows, i_f], mask=(rows < x.shape[0]))
        ms = nl.mean(nl.square(a, mask=(rows < x.shape[0])), axis=1, mask=(rows < x.shape[0]))
        nl.store(out[rows, i_f], value=a * nl.rsqrt(ms + 1e-6), mask=(rows < x.shape[0]))
    return out


def test_masked_tail_tiles_and_tile_arithmetic():
    x = RNG.standard_normal((300, 40)).astype(np.float32)
    ref = x / np.sqrt((x.astype(np.float64) ** 2).mean(1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(row_norm(x), ref, rtol=1e-4, atol=1e-5)


@nki.jit
def even_odd_transposed(x):
    "out_even[f, p] = x[p, 2f], out_odd = x[p, 2f + 1]: strided index expressions and a transposed store."
    P, F = x.shape
    even = nl.ndarray((F // 2, P), x.dtype, buffer=nl.shared_hbm)
    odd = nl.ndarray((F // 2, P), x.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:P, 0:F // 2]
    t = nl.load(x)
    nl.store(even[i_f, i_p], t[i_p, 2 * i_f])
    nl.store(odd[i_f, i_p], t[i_p, 2 * i_f + 1])
    return even, odd


def test_strided_indices_and_transposed_stores():
    x = RNG.standard_normal((16, 12)).astype(np.float32)
    even, odd = even_odd_transposed(x)
    np.testing.assert_array_equal(even, x[:, 0::2].T)
    np.testing.assert_array_equal(odd, x[:, 1::2].T)


@nki.jit
def attention_block(q_t, k_t, v):
    "softmax(q k^T) v for one 128-row block, with the first generation's tile-returning instructions and NumPy operators."
    d, n = q_t.shape
    out = nl.ndarray((n, v.shape[1]), nl.float32, buffer=nl.shared_hbm)
    s = nisa.nc_matmul(nl.load(q_t), nl.load(k_t))                     # (n, n) in PSUM
    neg_max = nisa.tensor_reduce(np.max, s, axis=(1,), negate=True, keepdims=True)
    e = nisa.activation(np.exp, s, bias=neg_max)
    total = nisa.tensor_reduce(np.add, e, axis=1, keepdims=True)
    p = nisa.tensor_scalar(e, np.divide, total)
    pt = nisa.tensor_copy(nisa.nc_transpose(p))                          # PE transpose into PSUM, then SBUF
    o = nl.zeros((n, v.shape[1]), nl.float32, buffer=nl.psum)
    o += nisa.nc_matmul(pt, nl.load(v))
    nl.store(out, o)                                                     # a PSUM tile: copied to SBUF first
    return out


def test_tile_returning_instructions_and_psum_accumulation():
    q_t, k_t = RNG.standard_normal((64, 128)).astype(np.float32), RNG.standard_normal((64, 128)).astype(np.float32)
    v = RNG.standard_normal((128, 32)).astype(np.float32)
    s = q_t.T.astype(np.float64) @ k_t
    p = np.exp(s - s.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
    np.testing.assert_allclose(attention_block(q_t, k_t, v), p @ v, rtol=1e-4, atol=1e-4)


@nki.jit
def blocked_scan(a, b):
    "h = a * h + b along the free axis, in tiles of 64 columns kept in block axes; each tile starts from the last column."
    P, F = a.shape
    out = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm)
    n = F // 64
    h = nl.ndarray((n, par_dim(P), 64), nl.float32)
    at, bt = nl.load(a), nl.load(b)
    for j in nl.sequential_range(n):
        init = 0.0 if j == 0 else h[j - 1][:, 63:64]
        h[j] = nisa.tensor_tensor_scan(at[:, j * 64:(j + 1) * 64], bt[:, j * 64:(j + 1) * 64], initial=init,
                                       op0=np.multiply, op1=np.add)
        nl.store(out[:, j * 64:(j + 1) * 64], h[j])
    return out


def test_block_axes_and_scans_chained_by_initial():
    a = RNG.uniform(0.5, 1.0, (32, 256)).astype(np.float32)
    b = RNG.standard_normal((32, 256)).astype(np.float32)
    ref, h = np.zeros((32, 256)), np.zeros(32)
    for i in range(256): h = a[:, i] * h + b[:, i]; ref[:, i] = h
    np.testing.assert_allclose(blocked_scan(a, b), ref, rtol=1e-4, atol=1e-4)


@nki.jit
def grid_matmul(a, b):
    "C = A @ B on a 2-D grid of programs: program (i, j) writes the (128, 256) block (i, j) with nl.matmul."
    M, K = a.shape
    N = b.shape[1]
    c = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
    i, j = nl.program_id(0), nl.program_id(1)
    assert nl.program_ndim() == 2 and nl.num_programs() == nl.num_programs(0) * nl.num_programs(1)
    blk = nl.matmul(nl.load(a[i * 128:(i + 1) * 128, :]), nl.load(b[:, j * 256:(j + 1) * 256]))
    nl.store(c[i * 128:(i + 1) * 128, j * 256:(j + 1) * 256], nl.copy(blk))
    return c


def test_two_dimensional_grid_and_nl_matmul():
    a, b = RNG.standard_normal((256, 96)).astype(np.float32), RNG.standard_normal((96, 768)).astype(np.float32)
    np.testing.assert_allclose(grid_matmul[2, 3](a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(grid_matmul[nl.spmd_dim(nl.nc(2), 1), 3](a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


@nki.jit
def gather_rows_and_add(table, idx, extra):
    "out = table[idx] + extra, the rows chosen by an int32 index tile (one indirect DMA); then extra added back into table."
    out = nl.ndarray((idx.shape[0], table.shape[1]), table.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.arange(idx.shape[0])[:, None], nl.arange(table.shape[1])[None, :]
    rows = nl.load(idx[i_p])
    got = nl.load(table[rows, i_f])
    nl.store(out, got + nl.load(extra))
    nl.atomic_rmw(table[rows, i_f], value=nl.load(extra), op=np.add)
    return out


def test_indirect_rows_and_atomic_add():
    table = RNG.standard_normal((50, 8)).astype(np.float32)
    idx = np.array([3, 41, 7, 0], np.int32)
    extra = RNG.standard_normal((4, 8)).astype(np.float32)
    before = table.copy()
    np.testing.assert_allclose(gather_rows_and_add(table, idx, extra), before[idx] + extra, rtol=1e-6)
    after = before.copy(); after[idx] += extra
    np.testing.assert_allclose(table, after, rtol=1e-6)                  # the input was written back, as NKI's simulator does


def test_iota_memset_and_broadcasting_follow_numpy():
    @nki.jit
    def k(row):
        out = nl.ndarray((16, 8), nl.float32, buffer=nl.shared_hbm)
        p = nisa.iota(nl.arange(16)[:, None] * 8 + nl.arange(8)[None, :], dtype=nl.int32)     # 0..127 in row-major order
        ones = nisa.memset((16, 8), 1, nl.int32)
        r = nl.load(row)                                                 # (1, 8): broadcast across partitions
        nl.store(out, nl.add(nl.multiply(p, ones, dtype=nl.float32), r))
        return out
    row = RNG.standard_normal((1, 8)).astype(np.float32)
    np.testing.assert_allclose(k(row), np.arange(128).reshape(16, 8) + row, rtol=1e-6)


def test_integer_promotion_and_exact_copies():
    @nki.jit
    def k(a, b):
        out = nl.ndarray(a.shape, nl.int16, buffer=nl.shared_hbm)
        s = nl.load(a) + nl.load(b)                                      # (int8, uint8) -> int16 (NKI's promotion)
        assert s.dtype == np.int16
        nl.store(out, s)
        return out
    a = RNG.integers(-100, 100, (4, 6)).astype(np.int8)
    b = RNG.integers(0, 200, (4, 6)).astype(np.uint8)
    np.testing.assert_array_equal(k(a, b), a.astype(np.int16) + b)

    @nki.jit
    def copy_i32(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_copy(nl.load(x)))                       # same dtype: bit for bit
        return out
    x = np.array([[2**31 - 1, -2**31, 2**24 + 1, 7]], np.int32)
    np.testing.assert_array_equal(copy_i32(x), x)


def test_first_generation_refusals_name_the_feature():
    x = np.zeros((4, 8), np.float32)

    @nki.jit
    def two_axes_mask(x):
        i_p, i_f = nl.mgrid[0:4, 0:8]
        t = nl.load(x)
        return nl.exp(t, mask=(i_p + i_f < 5))
    with pytest.raises(NotModelledError, match="ties grid axes \\[0, 1\\] together: it is not a box"):
        two_axes_mask(x)

    @nki.jit
    def product(x):
        i_p, i_f = nl.mgrid[0:4, 0:8]
        return nl.load(x[i_p, i_p * i_f])
    with pytest.raises(NotModelledError, match="product of two nl.arange expressions is not an affine index"):
        product(x)

    @nki.jit
    def outside(x):
        return nl.load(x[nl.arange(8)[:, None], nl.arange(8)[None, :]])
    with pytest.raises(AccessPatternError, match="runs over 0..7; a mask"):
        outside(x)
