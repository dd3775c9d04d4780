"""Virtual im2col: the window view is the im2col matrix without a copy; the PE-array contrast wastes 1 - 1/C."""
import numpy as np
from hypothesis import given, settings, strategies as st

from dwlit import trace, NeuronCore
from dwlit.sim.core import use_core
from dwlit.sim.memory import ndarray, float32
from dwlit.kernels.im2col import window_ap, broadcast_ap, read_map, conv1d_dense_on_pe_array, depthwise_as_dense, pe_macs


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 128), st.integers(1, 60), st.integers(1, 20), st.integers(0, 5))
def test_window_is_im2col_and_shares_memory(P, W, W_f, off):
    W_f = min(W_f, W)
    W_out = W - W_f + 1 - min(off, W - W_f)
    off = min(off, W - W_f)
    rng = np.random.default_rng(P * 1000 + W)
    with use_core(NeuronCore()), trace() as tr:
        t = ndarray((P, W), float32); t.write(rng.standard_normal((P, W)))
        f = ndarray((P, W_f), float32); f.write(rng.standard_normal((P, W_f)))
        v, b = window_ap(t, W_out, W_f, offset=off), broadcast_ap(f, W_out, W_f)
        rows = t.numpy()
        for c in range(0, P, max(1, P // 7)):
            expect = np.array([[rows[c, off + w + k] for k in range(W_f)] for w in range(W_out)])
            assert np.array_equal(v.numpy()[c], expect)
            assert np.array_equal(b.numpy()[c], np.broadcast_to(f.numpy()[c], (W_out, W_f)))
        assert np.shares_memory(v.array, t.storage) and np.shares_memory(b.array, f.storage)
    assert len(tr) == 0


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 50), st.integers(1, 12), st.integers(0, 4), st.integers(0, 4))
def test_read_counts(W, W_f, l, r):
    n = l + W + r
    if n < W_f: return
    idx, counts = read_map(W, W_f, l, r)
    W_out = n - W_f + 1
    expect = np.zeros(n, int)
    for w in range(W_out):
        for k in range(W_f): expect[w + k] += 1
    assert np.array_equal(counts, expect)
    assert np.array_equal(idx, np.add.outer(np.arange(W_out), np.arange(W_f)))


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 128), st.integers(1, 2), st.integers(1, 9), st.integers(0, 3))
def test_pe_array_contrast(C, N, W_f, p):
    rng = np.random.default_rng(C)
    W = 40
    x = rng.standard_normal((N, C, 1, W)).astype(np.float32)
    f = rng.standard_normal((C, 1, 1, W_f)).astype(np.float32)
    W_out = W + 2 * p - W_f + 1
    with trace() as tr:
        y = conv1d_dense_on_pe_array(x, depthwise_as_dense(f), ((0, 0), (p, p)), (N, C, 1, W_out))
    xp = np.pad(x[:, :, 0].astype(np.float64), ((0, 0), (0, 0), (p, p)))
    ref = np.stack([[np.correlate(xp[n, c], f[c, 0, 0].astype(np.float64), 'valid') for c in range(C)] for n in range(N)])
    np.testing.assert_allclose(y[:, :, 0], ref, rtol=1e-4, atol=1e-4)
    assert pe_macs(tr) == C * (N * C * W_out * W_f)            # useful fraction exactly 1/C
