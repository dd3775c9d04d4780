"""The 2D depthwise kernel with LHS dilation against a separately written NumPy reference, its trace contract,
its SBUF accounting, the literal bookkeeping's failures, and its errors."""
import itertools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from dwlit import SimulatorError, simulate_kernel, trace
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01 as K
from dwlit.kernels.conv2d import conv2d_plan, h_tile_budget
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.memory import bfloat16, float16, float32, hbm_tensor


def reference(img, filt, padding, lhs_dilation):
    """Plain NumPy: put the image on a zero grid every d-th row/column, pad, then correlate tap by tap (float64).
    img (C, H, W, N), filt (C, kH, kW, 1) -> (N, C, oH, oW)."""
    C, H, W, N = img.shape
    dh, dw = lhs_dilation
    (pt, pb), (pl, pr) = padding
    Hd, Wd = (H - 1) * dh + 1 + pt + pb, (W - 1) * dw + 1 + pl + pr
    grid = np.zeros((C, Hd, Wd, N))
    for i in range(H):
        for j in range(W):
            grid[:, pt + i * dh, pl + j * dw, :] = img[:, i, j, :]
    kH, kW = filt.shape[1], filt.shape[2]
    oH, oW = Hd - kH + 1, Wd - kW + 1
    out = np.zeros((N, C, oH, oW))
    for a in range(kH):
        for b in range(kW):
            patch = grid[:, a:a + oH, b:b + oW, :]                     # (C, oH, oW, N)
            out += np.moveaxis(patch * filt[:, a, b, 0][:, None, None, None], 3, 0)
    return out


EPS = {np.dtype(float32): 2e-6, np.dtype(float16): 2e-3, np.dtype(bfloat16): 1.6e-2}


def check(img, filt, padding, lhs, in_perm=None, **kw):
    "Run the kernel and compare with the reference, with a tolerance scaled by sum |x| |w| per output element."
    dt = img.dtype
    x64, f64 = img.astype(np.float64), filt.astype(np.float64)
    want = reference(x64, f64, padding, lhs)
    scale = reference(np.abs(x64), np.abs(f64), padding, lhs)
    arg = img if in_perm is None else np.ascontiguousarray(img.transpose(0, 3, 2, 1))   # f01b -> fb10
    got = K(arg, filt, padding, lhs_dilation=lhs, in_perm=in_perm, **kw)
    assert got.shape == want.shape and got.dtype == dt
    err = np.abs(got.astype(np.float64) - want)
    bad = ~(err <= EPS[dt] * scale + 1e-6)                                  # NaN counts as bad
    assert not bad.any(), f"{bad.sum()} wrong elements, first at {np.argwhere(bad)[0]}, max err {np.nanmax(err)}"


def out_size(H, W, kH, kW, dh, dw, pads):
    return (H - 1) * dh + 1 + pads[0] + pads[1] - kH + 1, (W - 1) * dw + 1 + pads[2] + pads[3] - kW + 1


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(C=st.one_of(st.integers(1, 12), st.integers(1, 300)), N=st.integers(1, 3),
       H=st.integers(1, 40), W=st.integers(1, 40), kH=st.integers(1, 7), kW=st.integers(1, 7),
       dh=st.integers(1, 4), dw=st.integers(1, 4), pads=st.tuples(*[st.integers(0, 6)] * 4),
       in_perm=st.sampled_from([None, (1, 0, 3, 2)]), dtype=st.sampled_from([float32, float16, bfloat16]),
       seed=st.integers(0, 2**16))
@example(C=129, N=2, H=5, W=4, kH=3, kW=2, dh=2, dw=1, pads=(1, 2, 0, 3), in_perm=(1, 0, 3, 2), dtype=float32, seed=0)
@example(C=300, N=1, H=3, W=7, kH=2, kW=3, dh=1, dw=3, pads=(0, 3, 1, 0), in_perm=None, dtype=bfloat16, seed=1)
def test_matches_reference_on_random_shapes(C, N, H, W, kH, kW, dh, dw, pads, in_perm, dtype, seed):
    oH, oW = out_size(H, W, kH, kW, dh, dw, pads)
    assume(oH >= 1 and oW >= 1)
    tiles = -(-C // 128)
    assume(tiles * N * oH * kH * kW <= 12_000)              # bounds the run time of one example (~0.3 s)
    assume(C <= 12 or oH * oW <= 3_000)                     # big C only with small images
    plan = conv2d_plan((C, H, W, N), (C, kH, kW, 1), ((pads[0], pads[1]), (pads[2], pads[3])), lhs_dilation=(dh, dw))
    event(f"C > 128: {C > 128}"); event(f"H tiles > 1: {len(plan.tiles) > 1}")
    event(f"last-row path: {any(t.is_last_row for t in plan.tiles)}"); event(f"in_perm: {in_perm}")
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((C, H, W, N)).astype(dtype)
    filt = rng.standard_normal((C, kH, kW, 1)).astype(dtype)
    check(img, filt, ((pads[0], pads[1]), (pads[2], pads[3])), (dh, dw), in_perm)


W_CASES = [(1, 1, (0, 0), 1), (3, 3, (1, 1), 2), (4, 2, (0, 3), 3), (2, 2, (2, 0), 1)]   # (W, kW, W padding, dil_W)


def test_deterministic_sweep_of_small_shapes():
    rng = np.random.default_rng(0)
    failures, n = [], 0
    for i, (H, kH, hp, dh) in enumerate(itertools.product((1, 2, 3, 5), (1, 2, 3, 5),
                                                          ((0, 0), (0, 2), (2, 0), (3, 3), (1, 4), (0, 5)), (1, 2, 3))):
        W, kW, wp, dw = W_CASES[i % len(W_CASES)]
        if (H - 1) * dh + 1 + sum(hp) < kH or (W - 1) * dw + 1 + sum(wp) < kW: continue
        img = rng.standard_normal((2, H, W, 2)).astype(np.float32)
        filt = rng.standard_normal((2, kH, kW, 1)).astype(np.float32)
        n += 1
        try: check(img, filt, (hp, wp), (dh, dw), (1, 0, 3, 2) if i % 2 else None)
        except AssertionError as e: failures.append(((H, kH, hp, dh, W, kW, wp, dw), str(e)))
    assert n > 200
    assert not failures, failures[:5]


@pytest.mark.parametrize("C,N,H,W,kH,kW,pads,lhs,in_perm", [
    (3, 2, 5, 6, 3, 3, ((1, 1), (1, 1)), (1, 1), None),
    (130, 2, 4, 5, 2, 3, ((2, 3), (0, 1)), (2, 3), None),
    (200, 1, 6, 3, 4, 1, ((0, 4), (2, 2)), (3, 1), (1, 0, 3, 2)),
    (1, 3, 2, 1, 4, 1, ((0, 2), (0, 0)), (1, 1), None),
])
def test_trace_contract(C, N, H, W, kH, kW, pads, lhs, in_perm):
    rng = np.random.default_rng(1)
    img = rng.standard_normal((C, H, W, N)).astype(np.float32)
    if in_perm: img = np.ascontiguousarray(img.transpose(0, 3, 2, 1))
    filt = rng.standard_normal((C, kH, kW, 1)).astype(np.float32)
    with trace() as tr:
        K(img, filt, pads, lhs_dilation=lhs, in_perm=in_perm)
    oH, oW = out_size(H, W, kH, kW, *lhs, (*pads[0], *pads[1]))
    tiles = -(-C // 128)
    counts = tr.counts()
    assert counts.get('nc_matmul', 0) == 0 and counts.get('nc_transpose', 0) == 0
    assert 'Tensor' not in tr.engines()
    assert counts['tensor_tensor'] == tiles * N * oH * kH * kW
    assert counts['tensor_reduce'] == tiles * N * oH
    assert all(i.free_elems == oW for i in tr.where(op='tensor_tensor'))
    assert all(i.srcs[0].pattern[1][0] == 0 for i in tr.where(op='tensor_tensor'))       # stride-0 filter broadcast
    assert all(i.attrs['op'] == 'multiply' for i in tr.where(op='tensor_tensor'))
    assert all(i.attrs['op'] == 'add' and i.attrs['axis'] == 2 for i in tr.where(op='tensor_reduce'))
    assert all(i.free_elems == oW * kH * kW for i in tr.where(op='tensor_reduce'))
    assert (counts.get('dve_transpose', 0) > 0) == (in_perm is not None)
    plan = conv2d_plan(img.shape, filt.shape, pads, lhs_dilation=lhs, in_perm=in_perm)
    assert counts == plan.instruction_counts()


def test_simulate_kernel_and_out_shape():
    rng = np.random.default_rng(2)
    img = rng.standard_normal((5, 4, 3, 2)).astype(np.float32)
    filt = rng.standard_normal((5, 2, 2, 1)).astype(np.float32)
    pads = ((1, 0), (0, 2))
    want = reference(img, filt, pads, (2, 2))
    got = simulate_kernel(K, img, filt, pads, lhs_dilation=(2, 2), out_shape=want.shape)
    np.testing.assert_allclose(got, want, atol=1e-5)


@pytest.mark.parametrize("shape,kernel,pads,lhs,dtype", [
    ((256, 56, 56, 2), (3, 3), ((1, 1), (1, 1)), (2, 2), float32),
    ((100, 9, 30, 1), (5, 2), ((3, 6), (0, 1)), (3, 4), bfloat16),
])
def test_sbuf_accounting_matches_the_simulator(shape, kernel, pads, lhs, dtype):
    "The plan's bytes per partition equal the simulated core's peak SBUF use."
    C = shape[0]
    img, filt = np.zeros(shape, dtype), np.zeros((C, *kernel, 1), dtype)
    core = NeuronCore()
    with use_core(core):
        K.func(hbm_tensor(img, 'img'), hbm_tensor(filt, 'filter'), pads, lhs_dilation=lhs)
    assert core.sbuf.peak == conv2d_plan(shape, filt.shape, pads, lhs_dilation=lhs, dtype=dtype).bytes_per_partition['total']


def test_budget_numbers():
    # worked by hand: dil_W = 113, 16384 / (113 * 4) = 36.2 -> 37 dilated rows; ceil(37 / 2) - 1 = 18 image rows
    assert h_tile_budget(56, 3, 113, 2) == (37, 18)
    assert h_tile_budget(56, 3, 113, 2, dtype_size=2) == (73, 36)
    assert h_tile_budget(2, 7, 5, 1) == (820, 7)               # never below the kernel height
    p = conv2d_plan((8, 56, 56, 1), (8, 3, 3, 1), ((1, 1), (1, 1)), lhs_dilation=(2, 2), dtype='bfloat16')
    assert p.dtype_size == 4 and p.max_h_tile_size == 18       # the original's hard-coded 4 bytes (L839)
    p = conv2d_plan((8, 56, 56, 1), (8, 3, 3, 1), ((1, 1), (1, 1)), lhs_dilation=(2, 2), dtype='bfloat16', dtype_size=None)
    assert p.dtype_size == 2 and p.max_h_tile_size == 36


@pytest.mark.parametrize("H,kH,hp", [(2, 4, (0, 2)), (3, 5, (3, 3))])
def test_literal_bookkeeping_is_wrong_on_known_shapes(H, kH, hp):
    rng = np.random.default_rng(3)
    img = rng.standard_normal((2, H, 1, 1)).astype(np.float32)
    filt = rng.standard_normal((2, kH, 1, 1)).astype(np.float32)
    pads = (hp, (0, 0))
    with pytest.raises(AssertionError, match="wrong elements"):
        check(img, filt, pads, (1, 1), bookkeeping='literal')
    check(img, filt, pads, (1, 1))                                    # the default is right


@settings(max_examples=40, deadline=None)
@given(H=st.integers(1, 8), kH=st.integers(1, 6), pt=st.integers(0, 5), pb=st.integers(0, 1), dh=st.integers(1, 3),
       W=st.integers(1, 6), seed=st.integers(0, 99))
def test_literal_bookkeeping_is_right_without_bottom_padding_2(H, kH, pt, pb, dh, W, seed):
    assume((H - 1) * dh + 1 + pt + pb >= kH)
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((2, H, W, 1)).astype(np.float32)
    filt = rng.standard_normal((2, kH, 1, 1)).astype(np.float32)
    check(img, filt, ((pt, pb), (0, 0)), (dh, 1), bookkeeping='literal')


x = np.zeros((4, 5, 6, 2), np.float32)
f = np.zeros((4, 3, 3, 1), np.float32)
P = ((1, 1), (1, 1))


@pytest.mark.parametrize("call,message", [
    (lambda: K(x, f, ((1, 1), (-1, 0))), "padding must be >= 0, got W_padding_l=-1"),
    (lambda: K(x, f, ((-2, 1), (0, 0))), "got H_padding_l=-2"),
    (lambda: K(x, f, P, stride=(2, 1)), "stride must be (1, 1) or None"),
    (lambda: K(x, f, P, rhs_dilation=(2, 2)), "rhs_dilation must be (1, 1) or None"),
    (lambda: K(x, f[:3], P), "img has C=4, filter has k_FO=3"),
    (lambda: K(x, f, P, out_shape=(2, 5, 5, 6)), "out_shape has C=5"),
    (lambda: K(x, np.zeros((4, 3, 3, 2), np.float32), P), "one input channel per filter (k_FI == 1)"),
    (lambda: K(x, f, P, out_shape=(3, 4, 5, 6)), "out_shape has N=3 but the image has N=2"),
    (lambda: K(x, f, P, out_shape=(2, 4, 5, 5)), "out_shape spatial size must be"),
    (lambda: K(x, np.zeros((4, 8, 3, 1), np.float32), P), "larger than the dilated, padded image"),
    (lambda: K(x, f, P, lhs_dilation=(0, 1)), "lhs_dilation: dil_H_lhs must be >= 1, got dil_H_lhs=0"),
    (lambda: K(x, f, P, lhs_dilation=(1, 2.0)), "lhs_dilation: dil_W_lhs must be an integer, got dil_W_lhs=2.0"),
    (lambda: K(x, f, P, lhs_dilation=3), "lhs_dilation must be an ordered sequence (a tuple or a list)"),
    (lambda: K(x, f, P, in_perm=(0, 1, 2, 3)), "in_perm must be None"),
    (lambda: K(np.zeros((1, 1, 20000, 1), np.float32), np.zeros((1, 1, 3, 1), np.float32), P),
     "image too wide for one SBUF partition"),
    (lambda: K(np.zeros((1, 3, 9000, 1), np.float32), np.zeros((1, 1, 1, 1), np.float32), ((0, 0), (0, 0)),
               in_perm=(1, 0, 3, 2)), "the fb10 -> f01b transpose"),
    (lambda: K(x, f.astype(np.float16), P), "same dtype"),
    (lambda: K(x[0], f, P), "img must have 4 axes (C, H, W, N) (f01b)"),
    (lambda: K(x, f, P, bookkeeping='x'), "bookkeeping must be one of"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(SimulatorError) as e:
        call()
    assert message in str(e.value)
    assert isinstance(e.value, ValueError)
    assert not re.search(r"\bL\d{2,4}\b", str(e.value)), "an error message carries a line number of the original"


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(C=st.one_of(st.integers(1, 8), st.integers(120, 260)), N=st.integers(1, 2), H=st.integers(1, 12), W=st.integers(1, 12),
       kH=st.integers(1, 5), kW=st.integers(1, 5), dh=st.integers(1, 3), dw=st.integers(1, 3),
       pads=st.tuples(*[st.integers(0, 4)] * 4), in_perm=st.sampled_from([None, (1, 0, 3, 2)]),
       bookkeeping=st.sampled_from(['fixed', 'literal']))
def test_the_order_and_the_count_of_the_instructions(C, N, H, W, kH, kW, dh, dw, pads, in_perm, bookkeeping):
    "Every call issues exactly the instructions conv2d_emit_order lists, in order, and the plan's count up front is exact."
    from dwlit.kernels.conv2d import check_conv2d_emit_order
    oH, oW = out_size(H, W, kH, kW, dh, dw, pads)
    assume(oH >= 1 and oW >= 1)
    padding = ((pads[0], pads[1]), (pads[2], pads[3]))
    shape = (C, H, W, N) if in_perm is None else (C, N, W, H)
    plan = conv2d_plan(shape, (C, kH, kW, 1), padding, lhs_dilation=(dh, dw), in_perm=in_perm, bookkeeping=bookkeeping)
    assume(sum(plan.instruction_counts().values()) <= 6_000)
    with trace() as tr:
        K(np.ones(shape, np.float32), np.ones((C, kH, kW, 1), np.float32), padding, lhs_dilation=(dh, dw), in_perm=in_perm,
          bookkeeping=bookkeeping)
    assert check_conv2d_emit_order(tr, plan) == len(tr) == sum(plan.instruction_counts().values())


def test_the_2d_order_check_can_fail():
    from dwlit.kernels.conv2d import check_conv2d_emit_order, conv2d_emit_order
    x, f = np.ones((3, 5, 6, 2), np.float32), np.ones((3, 3, 3, 1), np.float32)
    with trace() as tr: K(x, f, ((1, 1), (1, 1)))
    plan = conv2d_plan(x.shape, f.shape, ((1, 1), (1, 1)))
    check_conv2d_emit_order(tr, plan)
    ins = list(tr.instructions)
    tr.instructions[:] = ins[:-1]
    with pytest.raises(AssertionError, match=r"expected dma_copy into out \(channel tile 0, batch element 1, H tile 1: store"):
        check_conv2d_emit_order(tr, plan)
    tr.instructions[:] = [i for i in ins if not (i.op == 'memset' and i.dst.tensor == 'product_sbuf')]
    with pytest.raises(AssertionError, match="expected memset into product_sbuf"):
        check_conv2d_emit_order(tr, plan)
    with pytest.raises(SimulatorError, match="plan must be a Conv2dPlan"):
        conv2d_emit_order(None)
    with pytest.raises(SimulatorError, match="tr must be a Trace"):
        check_conv2d_emit_order([], plan)


def test_chapter_14_checks():
    "The checks chapter 14 once showed: the argument checker, the budget for other dtypes, the plan's numbers."
    from fastcore.test import test_fail

    from dwlit.kernels.conv2d import SBUF_BUDGET_BYTES, _check_conv2d_args
    assert _check_conv2d_args(((1, 2), (0, 3)), lhs_dilation=(2, 1)) == (((1, 2), (0, 3)), (2, 1), None)
    assert _check_conv2d_args([[0, 0], [0, 0]], stride=(1, 1), rhs_dilation=None, in_perm=[1, 0, 3, 2])[2] == (1, 0, 3, 2)
    assert _check_conv2d_args(np.array([[1, 2], [0, 3]]), lhs_dilation=np.array([2, 1]))[:2] == (((1, 2), (0, 3)), (2, 1))
    test_fail(lambda: _check_conv2d_args(((-1, 0), (0, 0)), stride=(2, 1)), contains="stride must be (1, 1) or None")  # first
    test_fail(lambda: _check_conv2d_args(((0, 0), {3, 1})), contains="padding[1] must be an ordered sequence")
    test_fail(lambda: _check_conv2d_args(((0, 0), (0, 0)), in_perm=5), contains="got in_perm=5")
    test_fail(lambda: conv2d_plan((4, 5, 6, 1), (4, 3, 3, 1), ((1, 1), (1, 1)), filter_dtype=True), contains="filter_dtype")
    test_fail(lambda: conv2d_plan((4, 5, 6, 1), (4, 3, 3, 1), ((1, 1), (1, 1)), target={'trn1'}), contains="target must be one of")
    assert h_tile_budget(56, 3, 113, 2, dtype_size=2) == (73, 36)
    args = ((256, 56, 56, 2), (256, 3, 3, 1), ((1, 1), (1, 1)))
    as_written = conv2d_plan(*args, lhs_dilation=(2, 2))                                   # dtype_size=4, as written ...
    assert max(t.dilated_h_size for t in as_written.tiles) * as_written.dil_W * 8 > SBUF_BUDGET_BYTES   # ... overflows at 8 B
    real2 = conv2d_plan(*args, lhs_dilation=(2, 2), dtype='bfloat16', dtype_size=None)
    assert real2.max_h_tile_size == 36 and len(real2.tiles) < len(as_written.tiles)
    assert sum(t.window_size for t in as_written.tiles) == as_written.out_H


def test_the_scatter_puts_every_element_where_the_dilated_image_has_it():
    "Chapter 14's picture, checked: every element the scatter DMA writes lands on the dilated image's row and column."
    from dwlit.kernels.conv2d import free_addresses
    from dwlit.kernels.dilation import dilated_row_sources
    x = np.arange(5 * 260, dtype=np.float32).reshape(1, 5, 260, 1)
    with trace() as tr: K(x, np.ones((1, 3, 3, 1), np.float32), ((2, 3), (1, 1)), lhs_dilation=(2, 2))
    p = conv2d_plan(x.shape, (1, 3, 3, 1), ((2, 3), (1, 1)), lhs_dilation=(2, 2))
    truth, cols = dilated_row_sources(5, (2, 3), 2), dilated_row_sources(260, (1, 1), 2)
    copies = lambda name: [i for i in tr.instructions if i.op == 'dma_copy' and i.dst.tensor == name]
    n = 0
    for ld, sc, t in zip(copies('image_sbuf'), copies('dilated_image'), [t for t in p.tiles if t.loads]):
        rows_read = free_addresses(ld.srcs[0]) // 260 % 5                      # f01b (C=1, H=5, W=260, N=1): address -> row
        assert list(rows_read[:, 0]) == list(range(t.org_image_index, t.org_image_index + t.load_h_size))
        for (j, c), a in np.ndenumerate(free_addresses(sc.dst)):
            rr, cc = divmod(int(a), p.dil_W)
            assert (truth[t.outer_row + rr], cols[cc]) == (rows_read[j, 0], c); n += 1
    assert n == 260 * sum(t.load_h_size for t in p.tiles if t.loads)
