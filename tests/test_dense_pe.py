"""Chapter 15's dense design (dwlit.contenders.dense_pe): right on any tile it takes, one useful multiply in C, and every
bad argument refused with a SimulatorError that names it."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dwlit.contenders.dense_pe import (
    MAX_DENSE,
    conv1d_dense_on_pe_array,
    depthwise_as_dense,
    pe_macs,
)
from dwlit.kernels.reference import depthwise1d, output_width
from dwlit.sim import SimulatorError, SimulatorTypeError, kernel, simulate_kernel, trace


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 128), st.integers(1, 2), st.integers(1, 9), st.integers(0, 3))
def test_right_and_one_useful_multiply_in_C(C, N, W_f, p):
    rng = np.random.default_rng(C)
    x = rng.standard_normal((N, C, 1, 40)).astype(np.float32)
    f = rng.standard_normal((C, 1, 1, W_f)).astype(np.float32)
    W_out = output_width(40, W_f, (p, p))
    with trace() as tr: y = conv1d_dense_on_pe_array(x, depthwise_as_dense(f), ((0, 0), (p, p)), (N, C, 1, W_out))
    np.testing.assert_allclose(y, depthwise1d(x, f, (p, p)), rtol=1e-4, atol=1e-4)
    assert pe_macs(tr) == C * (N * C * W_out * W_f)            # useful fraction exactly 1/C
    assert tr.counts()['nc_matmul'] == N * W_f


def test_a_dense_weight_is_a_dense_convolution():
    "Not only depthwise: a full (C_out, C_in) weight gives the dense convolution, summed across partitions."
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 6, 1, 20)).astype(np.float32); w = rng.standard_normal((4, 6, 1, 3)).astype(np.float32)
    y = conv1d_dense_on_pe_array(x, w, ((0, 0), (1, 1)), (1, 4, 1, 20))
    xp = np.pad(x[0, :, 0].astype(np.float64), ((0, 0), (1, 1)))
    ref = np.array([[sum(xp[i, t + k] * w[o, i, 0, k] for i in range(6) for k in range(3)) for t in range(20)] for o in range(4)])
    np.testing.assert_allclose(y[0, :, 0], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("filt", [None, [[[[1.0]]]], np.zeros((3, 1, 3)), np.zeros((3, 2, 1, 3)), np.zeros((3, 1, 1, 0)),
                                  np.zeros((5000, 1, 1, 9), np.float32), 'filt', {1}])
def test_depthwise_as_dense_refuses(filt):
    with pytest.raises(SimulatorError, match=r"\bfilt"): depthwise_as_dense(filt)
    assert 5000 * 5000 * 9 > MAX_DENSE


BAD = {'padding': [((0, 0), {1}), ((0, 0), (-1, 1)), (1, 1), None, ((0, 0), (1.0, 1)), ((0, 0), (10**9, 0)), ((1, 0), (1, 1))],
       'out_shape': [10, None, (1, 8, 1, 11), (1, 8, 2, 10), (1, 8, 1, 10**9), (1, 8, 10)],
       'img': [None, [[1.0]], np.ones((1, 8, 10), np.float32), np.ones((1, 9, 1, 10), np.float32),
               np.ones((1, 8, 1, 0), np.float32), 3.0, np.ones((1, 200, 1, 10), np.float32)],
       'weight': [None, [[1.0]], np.ones((8, 8, 1), np.float32), np.ones((8, 7, 1, 3), np.float32),
                  np.ones((8, 8, 1, 30), np.float32), np.ones((8, 8, 2, 3), np.float32), 'w']}


@pytest.mark.parametrize("arg,value", [(a, v) for a, vs in BAD.items() for v in vs])
def test_bad_arguments_are_named(arg, value):
    x = np.ones((1, 8, 1, 10), np.float32); w = depthwise_as_dense(np.ones((8, 1, 1, 3), np.float32))
    args = dict(img=x, weight=w, padding=((0, 0), (1, 1)), out_shape=(1, 8, 1, 10)); args[arg] = value
    @kernel
    def call(img, weight): return conv1d_dense_on_pe_array(img, weight, args['padding'], args['out_shape'])
    with pytest.raises(SimulatorError) as e: simulate_kernel(call, args['img'], args['weight'])
    msg = str(e.value)
    assert any(n in msg for n in (arg, arg.replace('_shape', '.shape'), 'img.shape', 'weight.shape', 'out_shape', 'W_out', 'C')), msg


def test_pe_macs_needs_a_trace():
    with pytest.raises(SimulatorTypeError, match="tr must be a Trace"): pe_macs([])


def test_plot_matmul_checks_its_sizes():
    from dwlit.contenders.dense_pe import plot_matmul
    with pytest.raises(SimulatorError, match="K must be <= 128"): plot_matmul(129, 1, 8, np.ones((129, 1)), 't')
    with pytest.raises(SimulatorError, match="N must be <= 512"): plot_matmul(4, 4, 10**9, np.eye(4), 't')
    with pytest.raises(SimulatorError, match=r"useful must be a \(K, M\) = \(4, 4\) mask"): plot_matmul(4, 4, 8, np.eye(3), 't')
