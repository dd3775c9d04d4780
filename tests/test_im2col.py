"""Virtual im2col: the window view is the im2col matrix without a copy, and each element of a padded row is read up to W_f times."""
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dwlit.kernels.im2col import broadcast_ap, read_map, window_ap
from dwlit.sim import NeuronCore, SimulatorError, float32, ndarray, trace, use_core


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
    assume(n >= W_f)
    idx, counts = read_map(W, W_f, l, r)
    W_out = n - W_f + 1
    expect = np.zeros(n, int)
    for w in range(W_out):
        for k in range(W_f): expect[w + k] += 1
    assert np.array_equal(counts, expect)
    assert np.array_equal(idx, np.add.outer(np.arange(W_out), np.arange(W_f)))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 120), st.integers(1, 40), st.integers(0, 15), st.integers(0, 15))
def test_reads_add_up_to_the_im2col_matrix(W, W_f, l, r):
    "Reads per element add up to W_out x W_f, and no element is read more than min(W_f, W_out) times."
    assume(l + W + r >= W_f)
    idx, counts = read_map(W, W_f, l, r)
    W_out = idx.shape[0]
    assert counts.sum() == W_out * W_f
    assert counts.max() == min(W_f, W_out)


@pytest.mark.parametrize("kw, msg", [(dict(W_out=7, W_f=3), "would read elements 0..8 of each partition's row, but t holds 8"),
                                     (dict(W_out=6, W_f=3, offset=1), "W_out=6, W_f=3, offset=1"),
                                     (dict(W_out=10**9, W_f=3), "W_out=1,000,000,000")])
def test_a_view_past_the_row_is_refused_by_name(kw, msg):
    with use_core(NeuronCore()):
        t = ndarray((4, 8), float32, name='t')
        with pytest.raises(SimulatorError, match=re.escape(msg)):
            window_ap(t, **kw)
        f = ndarray((4, 3), float32, name='f')
        with pytest.raises(SimulatorError, match="filter view would read elements 0..3"):
            broadcast_ap(f, 5, 4)
