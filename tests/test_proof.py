"""The no-PE-array checks: they pass on Vector-only code, fail on PE-array code, and the contrast kernels are correct."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dwlit import nl, nisa, trace, kernel, SimulatorError
from dwlit.sim.isa import nc_matmul as _mm_alias
from dwlit.analysis.proof import isa_call_sites, assert_no_pe_static, assert_no_pe_dynamic, engine_histogram, INTRINSIC_ENGINE, conv2d_depthwise_identity_matmul


def _helper(dst, a, b):
    _mm_alias(dst, a, b)                        # aliased PE-array call, one call away


@kernel
def _sneaky(x):
    a = nl.ndarray((4, 4), nl.float32, buffer=nl.sbuf, name='a')
    o = nl.ndarray((4, 4), nl.float32, buffer=nl.psum, name='o')
    nisa.dma_copy(a, x)
    _helper(o, a, a)
    return x


@kernel
def _clean(x):
    a = nl.ndarray((4, 4), nl.float32, buffer=nl.sbuf, name='a')
    nisa.dma_copy(a, x)
    nisa.tensor_tensor(a, a, a, nl.multiply)   # L251
    nisa.tensor_reduce(a[:, :1], nl.add, a, axis=1)
    return x


def test_static_finds_aliased_pe_call_in_helper():
    sites = isa_call_sites(_sneaky)
    assert [(s.function, s.intrinsic, s.engine) for s in sites] == [('_helper', 'nc_matmul', 'Tensor'),
                                                                      ('_sneaky', 'dma_copy', 'DMA')]
    with pytest.raises(AssertionError, match="nc_matmul at _helper"): assert_no_pe_static(sites)
    # without following calls the helper is invisible: the check would wrongly pass
    assert assert_no_pe_static(isa_call_sites(_sneaky, follow=False))


def test_static_passes_clean_and_reads_op_axis_and_original_line():
    sites = isa_call_sites(_clean)
    assert assert_no_pe_static(sites)
    tt = [s for s in sites if s.intrinsic == 'tensor_tensor'][0]
    red = [s for s in sites if s.intrinsic == 'tensor_reduce'][0]
    assert (tt.op, tt.original, red.op, red.axis, red.original) == ('nl.multiply', 'L251', 'nl.add', '1', None)
    assert 'file=' not in repr(tt)                 # no temporary paths in what a reader sees
    assert tt.line == red.line - 1


def test_dynamic_check_both_ways():
    x = np.ones((4, 4), np.float32)
    with trace() as good: _clean(x)
    with trace() as bad: _sneaky(x)
    assert assert_no_pe_dynamic(good) and engine_histogram(good)['Tensor'] == 0
    assert engine_histogram(bad)['Tensor'] == 1
    with pytest.raises(AssertionError, match="1 PE-array instructions in the trace: {'nc_matmul': 1}"):
        assert_no_pe_dynamic(bad)


def test_engine_table_matches_simulator():
    assert INTRINSIC_ENGINE['nc_matmul'] == INTRINSIC_ENGINE['nc_transpose'] == 'Tensor'
    assert {INTRINSIC_ENGINE[k] for k in ('tensor_tensor', 'tensor_reduce', 'memset', 'dve_transpose')} == {'Vector'}


def _ref(img, filt, padding):
    "Plain-loop depthwise 2D reference, image CHWN, filter (C,kH,kW,1), output NCHW."
    (pt, pb), (pl, pr) = padding
    C, H, W, N = img.shape
    _, kH, kW, _ = filt.shape
    x = np.zeros((C, H + pt + pb, W + pl + pr, N)); x[:, pt:pt + H, pl:pl + W, :] = img
    oH, oW = x.shape[1] - kH + 1, x.shape[2] - kW + 1
    out = np.zeros((N, C, oH, oW))
    for n in range(N):
        for c in range(C):
            for i in range(oH):
                for j in range(oW):
                    out[n, c, i, j] = np.sum(x[c, i:i + kH, j:j + kW, n] * filt[c, :, :, 0])
    return out


@settings(max_examples=25, deadline=None)
@given(C=st.integers(1, 140), H=st.integers(1, 6), W=st.integers(1, 9), N=st.integers(1, 2),
       kH=st.integers(1, 3), kW=st.integers(1, 3), pad=st.tuples(*[st.integers(0, 2)] * 4), seed=st.integers(0, 9))
def test_identity_matmul_contrast_is_correct(C, H, W, N, kH, kW, pad, seed):
    padding = ((pad[0], pad[1]), (pad[2], pad[3]))
    if H + pad[0] + pad[1] < kH or W + pad[2] + pad[3] < kW: return
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((C, H, W, N)).astype(np.float32)
    filt = rng.standard_normal((C, kH, kW, 1)).astype(np.float32)
    with trace() as tr: got = conv2d_depthwise_identity_matmul(img, filt, padding=padding)
    np.testing.assert_allclose(got, _ref(img, filt, padding), rtol=1e-4, atol=1e-4)
    assert engine_histogram(tr)['Tensor'] == tr.counts()['tensor_tensor'] == kH * kW * N * -(-C // 128) * -(-(H + pad[0] + pad[1] - kH + 1) // max(1, 512 // (W + pad[2] + pad[3] - kW + 1)))


def test_identity_matmul_contrast_errors():
    img = np.ones((2, 3, 3, 1), np.float32)
    with pytest.raises(SimulatorError, match="got W_padding_l=-1"):
        conv2d_depthwise_identity_matmul(img, np.ones((2, 2, 2, 1), np.float32), padding=((0, 0), (-1, 0)))
    with pytest.raises(SimulatorError, match="depthwise needs filter"):
        conv2d_depthwise_identity_matmul(img, np.ones((3, 2, 2, 1), np.float32))
    with pytest.raises(SimulatorError, match="dtypes differ"):
        conv2d_depthwise_identity_matmul(img.astype(np.float16), np.ones((2, 2, 2, 1), np.float32))


from dwlit.analysis.proof import original_correspondence, k_replication, ORIGINAL_COMPUTE_SITES
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01
from dwlit.kernels.im2col import conv1d_dense_on_pe_array


def test_dwlit_kernels_match_the_original_compute_sites():
    sites = isa_call_sites(conv1d_depthwise_bf01_oi01_bf01, conv2d_depthwise_f01b_o01i_bf01)
    assert assert_no_pe_static(sites)
    rows = original_correspondence(sites)
    assert [r[0] for r in rows] == ['L251', 'L276', 'L357', 'L381', 'L587', 'L594', 'L634', 'L641', 'L1015', 'L1046']
    # a compute site without a counterpart in the original, or a site of the original without one of ours, fails
    with pytest.raises(AssertionError, match="has no counterpart in the original"):
        original_correspondence(sites + isa_call_sites(conv1d_dense_on_pe_array))
    with pytest.raises(AssertionError, match="original L1015 has 0 dwlit sites"):
        original_correspondence(isa_call_sites(conv1d_depthwise_bf01_oi01_bf01))
    wrong = dict(ORIGINAL_COMPUTE_SITES, L276=('tensor_reduce', 'nl.add', '1'))
    with pytest.raises(AssertionError, match="original L276 is tensor_reduce"):
        original_correspondence(sites, wrong)


@pytest.mark.parametrize("C,taps,r,passes", [(16, 8, 8, 1), (16, 9, 8, 2), (128, 9, 1, 9), (1, 3, 3, 1), (200, 5, 1, 10)])
def test_k_replication_by_hand(C, taps, r, passes):
    d = k_replication(C, taps)
    assert (d['r'], d['passes']) == (r, passes)
    assert d['rows_busy'] <= 128


def test_k_replication_errors():
    with pytest.raises(SimulatorError, match="taps must be an integer >= 1, got taps=0"): k_replication(4, 0)


@pytest.mark.parametrize("name", ['1D diagonal', '1D implicit GEMM', '2D diagonal'])
def test_both_checks_fail_on_every_pe_design_of_chapter_12(name):
    from dwlit.contenders.engines import conv1d_depthwise_diagonal_pe, conv1d_depthwise_implicit_gemm, conv2d_depthwise_diagonal_pe
    x1, f1 = np.ones((1, 3, 1, 9), np.float32), np.ones((3, 1, 1, 4), np.float32)
    fn, args = {'1D diagonal': (conv1d_depthwise_diagonal_pe, (x1, f1, ((0, 0), (0, 0)), (1, 3, 1, 6))),
                '1D implicit GEMM': (conv1d_depthwise_implicit_gemm, (x1, f1, ((0, 0), (0, 0)), (1, 3, 1, 6))),
                '2D diagonal': (conv2d_depthwise_diagonal_pe, (np.ones((3, 4, 5, 1), np.float32), np.ones((3, 2, 2, 1), np.float32)))}[name]
    with trace() as tr: y = fn(*args)
    assert np.all(y == 4)                                  # four taps of ones over ones
    with pytest.raises(AssertionError, match="nc_matmul at"): assert_no_pe_static(isa_call_sites(fn))
    with pytest.raises(AssertionError, match="PE-array instructions in the trace"): assert_no_pe_dynamic(tr)


def test_k_replication_argument_stops_below_128_channels():
    # with fewer than 128 channels there is room for copies: the "partitions are full" reason does not hold
    assert [k_replication(c, 9)['r'] for c in (32, 64, 127, 128)] == [4, 2, 1, 1]
