"""Chapter 16's older 2D variant (dwlit.contenders.identity_matmul): right on random shapes and paddings, a matmul for
every multiply, and bad calls refused by name."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dwlit.contenders.identity_matmul import conv2d_depthwise_identity_matmul
from dwlit.kernels.reference import depthwise2d
from dwlit.sim import SimulatorError, trace


@settings(max_examples=25, deadline=None)
@given(C=st.integers(1, 140), H=st.integers(1, 6), W=st.integers(1, 9), N=st.integers(1, 2),
       kH=st.integers(1, 3), kW=st.integers(1, 3), pad=st.tuples(*[st.integers(0, 2)] * 4), seed=st.integers(0, 9))
def test_right_on_random_shapes(C, H, W, N, kH, kW, pad, seed):
    padding = ((pad[0], pad[1]), (pad[2], pad[3]))
    assume(H + pad[0] + pad[1] >= kH and W + pad[2] + pad[3] >= kW)
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((C, H, W, N)).astype(np.float32)
    filt = rng.standard_normal((C, kH, kW, 1)).astype(np.float32)
    with trace() as tr: got = conv2d_depthwise_identity_matmul(img, filt, padding=padding)
    np.testing.assert_allclose(got, depthwise2d(img, filt, padding), rtol=1e-4, atol=1e-4)
    out_H, out_W = H + pad[0] + pad[1] - kH + 1, W + pad[2] + pad[3] - kW + 1
    blocks = -(-out_H // max(1, 512 // out_W))
    assert tr.engines()['Tensor'] == tr.counts()['tensor_tensor'] == kH * kW * N * -(-C // 128) * blocks


@pytest.mark.parametrize("img,filt,padding,words", [
    (np.ones((2, 3, 3, 1), np.float32), np.ones((2, 2, 2, 1), np.float32), ((0, 0), (-1, 0)), "got W_padding_l=-1"),
    (np.ones((2, 3, 3, 1), np.float32), np.ones((3, 2, 2, 1), np.float32), ((0, 0), (0, 0)), "a depthwise filter is (C, k_H, k_W, 1)"),
    (np.ones((2, 3, 3, 1), np.float16), np.ones((2, 2, 2, 1), np.float32), ((0, 0), (0, 0)), "dtypes differ"),
    (np.ones((2, 3, 600, 1), np.float32), np.ones((2, 1, 1, 1), np.float32), ((0, 0), (0, 0)), "out_W must be <= 512"),
    (np.ones((2, 3, 3, 1), np.float32), np.ones((2, 4, 4, 1), np.float32), ((0, 0), (0, 0)), "larger than the padded image"),
    (None, np.ones((2, 2, 2, 1), np.float32), ((0, 0), (0, 0)), "img must be a simulated tensor"),
    (np.ones((2, 3, 3, 1), np.float32), np.ones((2, 2, 2, 1), np.float32), (1, 1), "padding[0] must be an ordered sequence"),
    (np.ones((2, 3, 3), np.float32), np.ones((2, 2, 2, 1), np.float32), ((0, 0), (0, 0)), "img.shape must have 4 dimensions")])
def test_bad_calls_are_named(img, filt, padding, words):
    with pytest.raises(SimulatorError, match="conv2d_depthwise_identity_matmul") as e:
        conv2d_depthwise_identity_matmul(img, filt, padding)
    assert words in str(e.value), str(e.value)


def test_identity_sbuf_checks_its_size():
    from dwlit.contenders.identity_matmul import identity_sbuf
    with pytest.raises(SimulatorError, match="n must be <= 128"): identity_sbuf(10**6)
