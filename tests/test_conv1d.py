"""The 1D depthwise kernels against an independent NumPy implementation, over random shapes, dtypes and programs."""
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dwlit import AllocationError, SimulatorError, simulate_kernel
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01, conv1d_depthwise_default, conv1d_depthwise_f_packing

DTYPES = {'float32': (np.float32, 1e-5), 'float16': (np.float16, 2e-3), 'bfloat16': (ml_dtypes.bfloat16, 1.6e-2)}


def correlate_ref(img, filt, pad_l, pad_r):
    "Depthwise cross-correlation in float64: zero-pad each row, np.correlate per (n, c)."
    x = np.pad(img[:, :, 0, :].astype(np.float64), ((0, 0), (0, 0), (pad_l, pad_r)))
    f = filt[:, 0, 0, :].astype(np.float64)
    N, C, _ = x.shape
    out = np.empty((N, C, x.shape[2] - f.shape[1] + 1))
    for n in range(N):
        for c in range(C):
            out[n, c] = np.correlate(x[n, c], f[c], mode='valid')
    return out[:, :, None, :]


def check_close(y, img, filt, pad_l, pad_r, tol):
    "Error relative to the sum of |terms| of each output (the scale fp rounding works at)."
    ref = correlate_ref(img, filt, pad_l, pad_r)
    scale = correlate_ref(np.abs(img.astype(np.float64)), np.abs(filt.astype(np.float64)), pad_l, pad_r)
    assert y.shape == ref.shape and y.dtype == img.dtype
    # float16 products and sums that fall below its normal range (6e-5) keep an absolute error of up to half the
    # subnormal spacing 2^-24 each: one per product and one for the stored sum
    atol = 2.0 ** -25 * (filt.shape[3] + 1) if img.dtype == np.float16 else 0.0
    err = np.abs(y.astype(np.float64) - ref) - atol
    assert np.isfinite(y.astype(np.float64)).all()
    assert (err <= tol * scale).all(), f"max error beyond atol {err.max()}, relative {(err / np.maximum(scale, 1e-30)).max()} > {tol}"


@st.composite
def conv_case(draw, max_chunks=24):
    N = draw(st.integers(1, 3))
    C = draw(st.one_of(st.integers(1, 300), st.sampled_from([1, 127, 128, 129, 255, 256, 257, 384])))
    W_f = draw(st.one_of(st.integers(1, 40), st.integers(1, 511)))
    pad_l, pad_r = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    F = -(-512 // W_f)
    W_out = draw(st.integers(1, min(3000, F * max_chunks)))
    W = W_out + W_f - 1 - pad_l - pad_r
    if W < 1:                       # padding longer than needed: shrink W_out to what W = 1 gives
        W = 1; W_out = W + pad_l + pad_r - W_f + 1
        if W_out < 1: pad_r += 1 - W_out; W_out = 1
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    tiles = -(-C // 128)
    k = draw(st.integers(1, tiles + 2))
    seed = draw(st.integers(0, 2**16))
    return N, C, W, W_f, pad_l, pad_r, W_out, dtype, k, seed


def make(N, C, W, W_f, dtype, seed):
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((N, C, 1, W)).astype(dtype)
    filt = rng.standard_normal((C, 1, 1, W_f)).astype(dtype)
    return img, filt


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_case())
def test_entry_point_matches_correlate(case):
    N, C, W, W_f, pl, pr, W_out, dtype, k, seed = case
    dt, tol = DTYPES[dtype]
    img, filt = make(N, C, W, W_f, dt, seed)
    y = simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, ((0, 0), (pl, pr)),
                        out_shape=(N, C, 1, W_out), num_programs=k)
    check_close(y, img, filt, pl, pr, tol)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_case(max_chunks=6), st.sampled_from(['default', 'f_packing']))
def test_each_kernel_matches_correlate_on_any_shape(case, which):
    "Either kernel, called directly, is right whatever the dispatcher would have chosen."
    N, C, W, W_f, pl, pr, W_out, dtype, k, seed = case
    dt, tol = DTYPES[dtype]
    img, filt = make(N, C, W, W_f, dt, seed)
    kern = conv1d_depthwise_default if which == 'default' else conv1d_depthwise_f_packing
    out = np.zeros((N, C, 1, W_out), dt)
    y = simulate_kernel(kern, img, filt, out, ((0, 0), (pl, pr)), num_programs=k)
    check_close(y, img, filt, pl, pr, tol)


@pytest.mark.parametrize('C,W,W_f,pad,k', [(512, 4096, 3, (1, 1), 1), (384, 3000, 31, (15, 15), 2),
                                           (129, 1024, 511, (0, 0), 3), (1, 5000, 1, (0, 0), 1),
                                           (260, 170, 3, (1, 1), 4)])
def test_big_deterministic(C, W, W_f, pad, k):
    img, filt = make(2, C, W, W_f, np.float32, 7)
    W_out = W + sum(pad) - W_f + 1
    y = simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, ((0, 0), pad), out_shape=(2, C, 1, W_out),
                        num_programs=k)
    check_close(y, img, filt, *pad, 1e-5)


def test_direct_numpy_call_and_grid_syntax():
    img, filt = make(2, 3, 50, 4, np.float32, 1)
    ref = correlate_ref(img, filt, 1, 2)
    y1 = conv1d_depthwise_bf01_oi01_bf01(img, filt, ((0, 0), (1, 2)), out_shape=(2, 3, 1, 50))
    y2 = conv1d_depthwise_bf01_oi01_bf01[3](img, filt, ((0, 0), (1, 2)), out_shape=(2, 3, 1, 50))
    np.testing.assert_allclose(y1, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y1, y2)


def test_reference_is_a_real_check():
    "The comparison fails on a wrong answer (a result shifted by one position)."
    img, filt = make(1, 2, 30, 3, np.float32, 2)
    y = conv1d_depthwise_bf01_oi01_bf01(img, filt, ((0, 0), (1, 1)), out_shape=(1, 2, 1, 30))
    with pytest.raises(AssertionError):
        check_close(np.roll(y, 1, axis=3), img, filt, 1, 1, 1e-5)


OK = dict(img=np.zeros((2, 4, 1, 10), np.float32), filt=np.zeros((4, 1, 1, 3), np.float32), pad=((0, 0), (1, 1)),
          out_shape=(2, 4, 1, 10))


def call(img=None, filt=None, pad=None, **kw):
    kw.setdefault('out_shape', OK['out_shape'])
    return conv1d_depthwise_bf01_oi01_bf01(OK['img'] if img is None else img, OK['filt'] if filt is None else filt,
                                           OK['pad'] if pad is None else pad, **kw)


@pytest.mark.parametrize('kw,msg', [
    (dict(img=np.zeros((2, 4, 3, 10), np.float32)), "need H == 1 (an image of one row), got H=3"),
    (dict(filt=np.zeros((4, 1, 2, 3), np.float32)), "need H_f == 1 (a filter of one row), got H_f=2"),
    (dict(out_shape=(2, 4, 2, 10)), "need K0 == 1 (an output of one row), got K0=2"),
    (dict(img=np.zeros((1, 4, 1, 600), np.float32), filt=np.zeros((4, 1, 1, 512), np.float32), out_shape=(1, 4, 1, 91)),
     "W_f must be < 512: the entry point takes filters of at most 511 taps, got W_f=512"),
    (dict(filt=np.zeros((5, 1, 1, 3), np.float32)), "C_out == C_in, got C_out=5 (filter) and C_in=4 (img)"),
    (dict(filt=np.zeros((4, 2, 1, 3), np.float32)), "filter.shape[1] must be 1, got 2"),
    (dict(pad=((0, 0), (-1, 1))), "padding must be >= 0, got W_padding_l=-1"),
    (dict(pad=((0, 0), (1, -2))), "W_padding_r=-2"),
    (dict(pad=((1, 0), (1, 1))), "padding[0] (H padding) must be (0, 0)"),
    (dict(pad=(1, 1)), "padding[0] must be an ordered sequence (a tuple or a list), got padding[0]=1"),
    (dict(pad=((0, 0), {1, 2})), "got padding[1]={1, 2}"),
    (dict(out_shape=10), "out_shape must be an ordered sequence (a tuple or a list), got out_shape=10"),
    (dict(stride=(1, 2), out_shape=(2, 4, 1, 5)), "stride must be 1 (or None), got stride=(1, 2)"),
    (dict(out_shape=None), "out_shape is required"),
    (dict(out_shape=(2, 4, 1, 11)), "out_shape must be (N, C, 1, W_out) = (2, 4, 1, 10)"),
    (dict(out_shape=(3, 4, 1, 10)), "out_shape must be (N, C, 1, W_out)"),
    (dict(img=np.zeros((1, 4, 1, 3), np.float32), filt=np.zeros((4, 1, 1, 7), np.float32), out_shape=(1, 4, 1, 1)),
     "= 1 + 3 + 1 - 7 + 1 = -1 < 1"),
    (dict(filt=np.zeros((4, 1, 1, 3), np.float16)), "filter.dtype must equal img.dtype float32, got float16"),
    (dict(img=np.zeros((2, 4, 10), np.float32)), "img.shape must have 4 dimensions (N, C, 1, W) (bf01), got (2, 4, 10)"),
    (dict(filt=np.zeros((4, 3), np.float32)), "filter.shape must have 4 dimensions (C, 1, 1, W_f) (oi01), got (4, 3)"),
    (dict(out_shape=(2, 4, 10)), "out_shape must have 4 dimensions"),
    (dict(stride=2), "stride must be 1 (or None), got stride=2"),
    (dict(stride=(1, 2)), "never read stride"),
    (dict(rhs_dilation=(1, 2)), "rhs_dilation must be 1"),
    (dict(lhs_dilation=3), "lhs_dilation must be 1"),
])
def test_bad_input_is_a_clear_error(kw, msg):
    with pytest.raises(SimulatorError, match=None) as e:
        call(**kw)
    assert msg in str(e.value), str(e.value)
    assert isinstance(e.value, ValueError)
    assert not re.search(r"\bL\d{2,4}\b", str(e.value)), str(e.value)     # no line number of the original


def test_unit_stride_and_lnc_accepted():
    y0 = call(img=np.ones((2, 4, 1, 10), np.float32), filt=np.ones((4, 1, 1, 3), np.float32))
    y1 = call(img=np.ones((2, 4, 1, 10), np.float32), filt=np.ones((4, 1, 1, 3), np.float32),
              stride=(1, 1), rhs_dilation=1, lhs_dilation=[1, 1], lnc=2)
    np.testing.assert_array_equal(y0, y1)
    np.testing.assert_array_equal(y0[0, 0, 0], [2, 3, 3, 3, 3, 3, 3, 3, 3, 2])


def test_lnc_changes_no_instruction():
    "lnc is accepted and unused (L705-706): 1 and 2 issue the very same instructions; 3 is refused."
    from dwlit.sim import trace
    x, f = np.ones((2, 300, 1, 20), np.float32), np.ones((300, 1, 1, 5), np.float32)
    runs = []
    for lnc in (1, 2):
        with trace() as tr: conv1d_depthwise_bf01_oi01_bf01(x, f, ((0, 0), (2, 1)), lnc=lnc, out_shape=(2, 300, 1, 19))
        runs.append([str(i) for i in tr.instructions])
    assert runs[0] == runs[1]
    with pytest.raises(SimulatorError, match="lnc must be 1 or 2, got lnc=3"):
        conv1d_depthwise_bf01_oi01_bf01(x, f, ((0, 0), (2, 1)), lnc=3, out_shape=(2, 300, 1, 19))


def test_float64_input_is_refused():
    with pytest.raises(SimulatorError, match="float32, float16, bfloat16"):
        call(img=np.zeros((2, 4, 1, 10)), filt=np.zeros((4, 1, 1, 3)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_sbuf_error_advises_more_programs_only_when_one_tile_fits(data):
    "A call that does not fit SBUF: the message says more programs would fit exactly when one channel tile alone fits."
    from dwlit.kernels.conv1d import conv1d_sbuf_bytes
    from dwlit.kernels.conv1d_plan import conv1d_plan
    from dwlit.kernels.tiling import PACK, div_ceil, program_tiles
    from dwlit.sim.target import TARGETS
    long_rows = data.draw(st.booleans())                          # few channels and long rows, or many and short
    N = data.draw(st.integers(1, 2))
    C = data.draw(st.integers(1, 400) if long_rows else st.integers(129, 1500))
    W_f, dt = data.draw(st.sampled_from([1, 3, 31, 300])), data.draw(st.sampled_from(['float32', 'bfloat16']))
    isz = 4 if dt == 'float32' else 2
    top = min(2**18 // isz - 2, 12_000_000 // (N * C))            # at most 12 million input elements
    W = data.draw(st.integers(max(W_f, min(top, 20_000 * 4 // isz if long_rows else 1000)), max(W_f, top)))
    k, tgt = data.draw(st.integers(1, 3)), data.draw(st.sampled_from(sorted(TARGETS)))
    which = data.draw(st.sampled_from(['entry', 'default', 'f_packing']))
    dtype, W_out, cap = DTYPES[dt][0], W + 3 - W_f, TARGETS[tgt].sbuf_partition_bytes
    path = which if which != 'entry' else ('default' if div_ceil(W_out, div_ceil(PACK, W_f)) == 1 else 'f_packing')
    one = lambda T, p: sum(conv1d_sbuf_bytes(path, N, W_f, W_out, W + 2, T, p, isz).values())
    share = lambda pid: (program_tiles(C, pid, k).full_tiles, program_tiles(C, pid, k).has_partial)
    assume(not all(one(*share(pid)) <= cap for pid in range(k)))   # it fits: other tests run those
    img, filt, pad = np.zeros((N, C, 1, W), dtype), np.zeros((C, 1, 1, W_f), dtype), ((0, 0), (1, 1))
    with pytest.raises(AllocationError) as e:                     # raised before anything is allocated
        if which == 'entry':
            simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, pad, out_shape=(N, C, 1, W_out), num_programs=k, target=tgt)
        else:
            kern = conv1d_depthwise_default if which == 'default' else conv1d_depthwise_f_packing
            simulate_kernel(kern, img, filt, np.zeros((N, C, 1, W_out), dtype), pad, num_programs=k, target=tgt)
    msg = str(e.value)
    assert 'SBUF per partition' in msg, msg
    alone = max(one(1, False) if C >= 128 else 0, one(0, True) if C % 128 else 0)
    assert f"one channel tile alone needs {alone} B" in msg, msg
    if alone > cap: assert 'more programs cannot help' in msg and 'would fit:' not in msg, msg
    else: assert 'more programs (fewer tiles each) would fit' in msg, msg
    if which == 'entry':                                          # the plan it points to agrees, and goes further
        plan = eval(re.search(r"(conv1d_plan\(.*\))\.advice", msg).group(1), {'conv1d_plan': conv1d_plan})
        assert not plan.fits and plan.advice
        assert (plan.fixes[0].kind == 'programs') == (alone <= cap)
        assert all(plan.replan(**f.change).fits for f in plan.fixes)


@pytest.mark.parametrize('C,k', [(256, 1), (300, 1), (300, 2), (129, 1)])
def test_sbuf_error_with_several_tiles_each_too_big_alone(C, k):
    "Several channel tiles on one program, each too big alone: the message must not advise more programs."
    img, filt = np.zeros((1, C, 1, 30_000), np.float32), np.zeros((C, 1, 1, 3), np.float32)
    with pytest.raises(AllocationError) as e:
        simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, ((0, 0), (1, 1)), out_shape=(1, C, 1, 30_000), num_programs=k)
    assert 'more programs cannot help' in str(e.value) and 'fewer tiles each' not in str(e.value), str(e.value)
