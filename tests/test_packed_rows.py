"""Chapter 19's packed Vector kernel (dwlit.contenders.packed_rows): right on random shapes with either multiply and any
share on the Scalar engine, never on the PE array, and its options checked."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dwlit.contenders.packed_rows import conv2d_depthwise_packed_vector
from dwlit.kernels.reference import depthwise2d
from dwlit.sim import SimulatorError, SimulatorTypeError, trace


@settings(max_examples=20, deadline=None)
@given(C=st.integers(1, 140), H=st.integers(1, 7), W=st.integers(1, 12), N=st.integers(1, 2), kH=st.integers(1, 3),
       kW=st.integers(1, 3), pad=st.tuples(*[st.integers(0, 2)] * 4), seed=st.integers(0, 9),
       how=st.sampled_from([dict(), dict(multiply='tensor_scalar'), dict(multiply='tensor_scalar', scalar_every=2)]))
def test_right_on_random_shapes(C, H, W, N, kH, kW, pad, seed, how):
    padding = ((pad[0], pad[1]), (pad[2], pad[3]))
    assume(H + pad[0] + pad[1] >= kH and W + pad[2] + pad[3] >= kW)
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((C, H, W, N)).astype(np.float32)
    filt = rng.standard_normal((C, kH, kW, 1)).astype(np.float32)
    with trace() as tr: y = conv2d_depthwise_packed_vector(img, filt, padding, **how)
    np.testing.assert_allclose(y, depthwise2d(img, filt, padding), rtol=1e-4, atol=1e-4)
    assert 'Tensor' not in tr.engines()
    assert ('Scalar' in tr.engines()) == (how.get('scalar_every') == 2 and kH * kW >= 2)


@pytest.mark.parametrize("kw,cls,words", [(dict(multiply='matmul'), SimulatorError, "multiply must be one of"),
                                          (dict(scalar_every=-1), SimulatorError, "scalar_every must be >= 0"),
                                          (dict(scalar_every=1.5), SimulatorTypeError, "scalar_every must be an integer"),
                                          (dict(scalar_every=2), SimulatorError, "scalar_every needs multiply='tensor_scalar'")])
def test_options_are_checked(kw, cls, words):
    img, f = np.ones((4, 3, 3, 1), np.float32), np.ones((4, 2, 2, 1), np.float32)
    with pytest.raises(cls, match="conv2d_depthwise_packed_vector") as e: conv2d_depthwise_packed_vector(img, f, **kw)
    assert words in str(e.value)
