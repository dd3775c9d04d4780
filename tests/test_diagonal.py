"""Chapter 17's diagonal-weight designs (dwlit.contenders.diagonal): right on random shapes in 1D and 2D, tiled over long
rows and big filters, and bad calls refused by name."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dwlit.contenders.diagonal import DIAG_BUDGET_BYTES, conv1d_depthwise_diagonal_pe, conv2d_depthwise_diagonal_pe
from dwlit.kernels.reference import depthwise1d, depthwise2d, output_width
from dwlit.sim import SimulatorError, trace


@settings(max_examples=20, deadline=None)
@given(N=st.integers(1, 2), C=st.integers(1, 140), W=st.integers(1, 40), W_f=st.integers(1, 12),
       pad=st.tuples(st.integers(0, 3), st.integers(0, 3)), seed=st.integers(0, 9))
def test_1d_right_on_random_shapes(N, C, W, W_f, pad, seed):
    W_out = output_width(W, W_f, pad)
    assume(W_out >= 1)
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((N, C, 1, W)).astype(np.float32)
    filt = rng.standard_normal((C, 1, 1, W_f)).astype(np.float32)
    y = conv1d_depthwise_diagonal_pe(img, filt, ((0, 0), pad), (N, C, 1, W_out))
    np.testing.assert_allclose(y, depthwise1d(img, filt, pad), rtol=1e-4, atol=1e-4)


def test_1d_tiles_long_rows_and_big_filters():
    rng = np.random.default_rng(3)
    img = rng.standard_normal((1, 3, 1, 2600)).astype(np.float32)       # W_out > 4 banks x 512: two accumulation blocks
    filt = rng.standard_normal((3, 1, 1, 260)).astype(np.float32)       # > 192 taps: two tap groups
    with trace() as tr: y = conv1d_depthwise_diagonal_pe(img, filt, ((0, 0), (1, 2)), (1, 3, 1, 2344))
    np.testing.assert_allclose(y, depthwise1d(img, filt, (1, 2)), rtol=1e-4, atol=1e-3)
    assert DIAG_BUDGET_BYTES // (128 * 4) < 260                          # the kernel did need two groups
    assert tr.counts()['tensor_scalar'] == 260 * 2                       # rebuilt per group and accumulation block


@settings(max_examples=20, deadline=None)
@given(C=st.integers(1, 140), H=st.integers(1, 7), W=st.integers(1, 12), N=st.integers(1, 2), kH=st.integers(1, 3),
       kW=st.integers(1, 3), pad=st.tuples(*[st.integers(0, 2)] * 4), seed=st.integers(0, 9))
def test_2d_right_on_random_shapes(C, H, W, N, kH, kW, pad, seed):
    padding = ((pad[0], pad[1]), (pad[2], pad[3]))
    assume(H + pad[0] + pad[1] >= kH and W + pad[2] + pad[3] >= kW)
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((C, H, W, N)).astype(np.float32)
    filt = rng.standard_normal((C, kH, kW, 1)).astype(np.float32)
    with trace() as tr: y = conv2d_depthwise_diagonal_pe(img, filt, padding)
    np.testing.assert_allclose(y, depthwise2d(img, filt, padding), rtol=1e-4, atol=1e-4)
    assert 'nc_matmul' in tr.counts()


def test_bf16_in_both():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 20, 1, 90)).astype(ml_dtypes.bfloat16); f = rng.standard_normal((20, 1, 1, 5)).astype(ml_dtypes.bfloat16)
    np.testing.assert_allclose(conv1d_depthwise_diagonal_pe(x, f, ((0, 0), (2, 2)), (1, 20, 1, 90)).astype(np.float64),
                               depthwise1d(x, f, (2, 2)), atol=0.1)
    x2 = rng.standard_normal((20, 5, 30, 1)).astype(ml_dtypes.bfloat16); f2 = rng.standard_normal((20, 3, 3, 1)).astype(ml_dtypes.bfloat16)
    np.testing.assert_allclose(conv2d_depthwise_diagonal_pe(x2, f2, ((1, 1), (1, 1))).astype(np.float64),
                               depthwise2d(x2, f2, ((1, 1), (1, 1))), atol=0.1)


def test_bad_calls_are_named():
    x, f = np.ones((1, 2, 1, 8), np.float32), np.ones((2, 1, 1, 3), np.float32)
    img = np.ones((4, 3, 3, 1), np.float32)
    cases = [(lambda: conv1d_depthwise_diagonal_pe(x, f, ((0, 0), (0, -1)), (1, 2, 1, 5)), "padding must be >= 0"),
             (lambda: conv1d_depthwise_diagonal_pe(x, f, ((0, 0), (0, 0)), (1, 2, 1, 5)), "out_shape must be"),
             (lambda: conv1d_depthwise_diagonal_pe(None, f, ((0, 0), (0, 0)), (1, 2, 1, 6)), "img must be a simulated tensor"),
             (lambda: conv1d_depthwise_diagonal_pe(x, None, ((0, 0), (0, 0)), (1, 2, 1, 6)), "filter must be a simulated tensor"),
             (lambda: conv2d_depthwise_diagonal_pe(img, np.ones((4, 4, 4, 1), np.float32)), "larger than the padded image"),
             (lambda: conv2d_depthwise_diagonal_pe(np.ones((1, 1, 600, 1), np.float32), np.ones((1, 1, 1, 1), np.float32)), "must fit one PSUM bank"),
             (lambda: conv2d_depthwise_diagonal_pe(img, np.ones((4, 2, 2, 1), ml_dtypes.bfloat16)), "dtypes differ"),
             (lambda: conv2d_depthwise_diagonal_pe(None, np.ones((4, 2, 2, 1), np.float32)), "img must be a simulated tensor")]
    for call, words in cases:
        with pytest.raises(SimulatorError, match="conv[12]d_depthwise_diagonal_pe") as e: call()
        assert words in str(e.value), str(e.value)
