"""Chapter 18's taps-on-partitions design (dwlit.contenders.implicit_gemm): right on random shapes, S tiles summed by
nc_matmul's default accumulation as in the public kernel, and bad calls refused by name."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dwlit.contenders.implicit_gemm import conv1d_depthwise_implicit_gemm
from dwlit.kernels.reference import depthwise1d, output_width
from dwlit.sim import SimulatorError, trace


@settings(max_examples=20, deadline=None)
@given(N=st.integers(1, 2), C=st.integers(1, 140), W=st.integers(1, 40), W_f=st.integers(1, 12),
       pad=st.tuples(st.integers(0, 3), st.integers(0, 3)), seed=st.integers(0, 9))
def test_right_on_random_shapes(N, C, W, W_f, pad, seed):
    W_out = output_width(W, W_f, pad)
    assume(W_out >= 1)
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((N, C, 1, W)).astype(np.float32)
    filt = rng.standard_normal((C, 1, 1, W_f)).astype(np.float32)
    y = conv1d_depthwise_implicit_gemm(img, filt, ((0, 0), pad), (N, C, 1, W_out))
    np.testing.assert_allclose(y, depthwise1d(img, filt, pad), rtol=1e-4, atol=1e-4)


def test_long_rows_and_big_filters_as_the_public_kernel():
    rng = np.random.default_rng(3)
    img = rng.standard_normal((1, 3, 1, 2600)).astype(np.float32)
    filt = rng.standard_normal((3, 1, 1, 260)).astype(np.float32)       # > 128 taps: three S tiles
    with trace() as tr: y = conv1d_depthwise_implicit_gemm(img, filt, ((0, 0), (1, 2)), (1, 3, 1, 2344))
    np.testing.assert_allclose(y, depthwise1d(img, filt, (1, 2)), rtol=1e-4, atol=1e-3)
    mm = tr.where(op='nc_matmul')
    assert mm and all(i.attrs.get('accumulate') is None for i in mm)     # S tiles summed by the default alone
    assert len(mm) == 3 * 3 * 5                                         # channels x S tiles x Q tiles of 512


def test_bad_calls_are_named():
    x, f = np.ones((1, 2, 1, 8), np.float32), np.ones((2, 1, 1, 3), np.float32)
    for call, words in [(lambda: conv1d_depthwise_implicit_gemm(x, f, ((0, 0), (0, -1)), (1, 2, 1, 5)), "padding must be >= 0"),
                        (lambda: conv1d_depthwise_implicit_gemm(x, f, ((0, 0), (0, 0)), (1, 2, 1, 5)), "out_shape must be"),
                        (lambda: conv1d_depthwise_implicit_gemm(x, f, ((0, 0), (0, 0)), None), "out_shape is required"),
                        (lambda: conv1d_depthwise_implicit_gemm(x, 'f', ((0, 0), (0, 0)), (1, 2, 1, 6)), "filter must be a simulated tensor")]:
        with pytest.raises(SimulatorError, match="conv1d_depthwise_implicit_gemm") as e: call()
        assert words in str(e.value), str(e.value)
