"""Chapter 17's contenders (dwlit.contenders.engines): every design matches a plain-loop reference on random shapes (fp32 and
bf16) and refuses what it cannot do; chapter 24's decision maps (dwlit.analysis.decision_map) count what they say they count,
and the verdict's numbers agree with an independent recount from the traces."""
import numpy as np
import ml_dtypes
import pytest
from hypothesis import given, settings, strategies as st

from dwlit import trace, SimulatorError
from dwlit.analysis.cost import cost_model
from dwlit.analysis.timeline import predict
from dwlit.contenders.engines import (conv1d_depthwise_diagonal_pe, conv1d_depthwise_implicit_gemm, conv2d_depthwise_diagonal_pe,
                           conv2d_depthwise_packed_vector, depthwise1d_reference, depthwise2d_reference, contender_trace,
                           CONTENDERS, DIAG_BUDGET_BYTES, TUNED, step_width, designs)
from dwlit.analysis.decision_map import engine_map, win_counts, sensitivity, VARIANTS, robustness, verdict, verdict_lines, on_target


def _loop_ref_1d(img, filt, pad):
    "Element-by-element 1D depthwise reference, independent of depthwise1d_reference."
    N, C, _, W = img.shape
    W_f = filt.shape[3]
    x = np.zeros((N, C, W + sum(pad)))
    x[:, :, pad[0]:pad[0] + W] = img[:, :, 0, :]
    W_out = x.shape[2] - W_f + 1
    out = np.zeros((N, C, 1, W_out))
    for n in range(N):
        for c in range(C):
            for w in range(W_out):
                out[n, c, 0, w] = sum(x[n, c, w + k] * float(filt[c, 0, 0, k]) for k in range(W_f))
    return out


@settings(max_examples=20, deadline=None)
@given(N=st.integers(1, 2), C=st.integers(1, 140), W=st.integers(1, 40), W_f=st.integers(1, 12),
       pad=st.tuples(st.integers(0, 3), st.integers(0, 3)), seed=st.integers(0, 9),
       kernel=st.sampled_from(['diagonal', 'implicit']))
def test_1d_pe_designs_match_the_reference(N, C, W, W_f, pad, seed, kernel):
    W_out = W + sum(pad) - W_f + 1
    if W_out < 1: return
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((N, C, 1, W)).astype(np.float32)
    filt = rng.standard_normal((C, 1, 1, W_f)).astype(np.float32)
    fn = conv1d_depthwise_diagonal_pe if kernel == 'diagonal' else conv1d_depthwise_implicit_gemm
    y = fn(img, filt, ((0, 0), pad), (N, C, 1, W_out))
    np.testing.assert_allclose(y, _loop_ref_1d(img, filt, pad), rtol=1e-4, atol=1e-4)


def test_1d_pe_designs_tile_long_rows_and_big_filters():
    rng = np.random.default_rng(3)
    img = rng.standard_normal((1, 3, 1, 2600)).astype(np.float32)       # W_out > 4 banks x 512: two accumulation blocks
    filt = rng.standard_normal((3, 1, 1, 260)).astype(np.float32)       # > 128 taps: three S tiles; > 192: two tap groups
    ref = depthwise1d_reference(img, filt, (1, 2))
    for fn in (conv1d_depthwise_diagonal_pe, conv1d_depthwise_implicit_gemm):
        with trace() as tr: y = fn(img, filt, ((0, 0), (1, 2)), (1, 3, 1, 2344))
        np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-3)
    mm = tr.where(op='nc_matmul')                                        # the implicit GEMM, as the public kernel:
    assert mm and all(i.attrs.get('accumulate') is None for i in mm)     # three S tiles summed by the default alone
    assert DIAG_BUDGET_BYTES // (128 * 4) < 260                          # the diagonal kernel did need two groups


@settings(max_examples=20, deadline=None)
@given(C=st.integers(1, 140), H=st.integers(1, 7), W=st.integers(1, 12), N=st.integers(1, 2), kH=st.integers(1, 3),
       kW=st.integers(1, 3), pad=st.tuples(*[st.integers(0, 2)] * 4), seed=st.integers(0, 9),
       kernel=st.sampled_from(['diagonal', 'packed']))
def test_2d_designs_match_the_reference(C, H, W, N, kH, kW, pad, seed, kernel):
    padding = ((pad[0], pad[1]), (pad[2], pad[3]))
    if H + pad[0] + pad[1] < kH or W + pad[2] + pad[3] < kW: return
    rng = np.random.default_rng(seed)
    img = rng.standard_normal((C, H, W, N)).astype(np.float32)
    filt = rng.standard_normal((C, kH, kW, 1)).astype(np.float32)
    fn = conv2d_depthwise_diagonal_pe if kernel == 'diagonal' else conv2d_depthwise_packed_vector
    with trace() as tr: y = fn(img, filt, padding)
    np.testing.assert_allclose(y, depthwise2d_reference(img, filt, padding), rtol=1e-4, atol=1e-4)
    assert ('nc_matmul' in tr.counts()) == (kernel == 'diagonal')


@pytest.mark.parametrize("kind,name", [(k, n) for k in CONTENDERS for n in CONTENDERS[k]])
def test_every_contender_in_bf16(kind, name):
    tr = contender_trace(kind, name, 3, 40, 'bfloat16', C=20, check=True)   # raises if off the reference
    assert len(tr) > 0


def test_errors():
    x, f = np.ones((1, 2, 1, 8), np.float32), np.ones((2, 1, 1, 3), np.float32)
    with pytest.raises(SimulatorError, match="padding must be >= 0"):
        conv1d_depthwise_implicit_gemm(x, f, ((0, 0), (0, -1)), (1, 2, 1, 5))
    with pytest.raises(SimulatorError, match="out_shape must be"):
        conv1d_depthwise_diagonal_pe(x, f, ((0, 0), (0, 0)), (1, 2, 1, 5))
    img = np.ones((4, 3, 3, 1), np.float32)
    with pytest.raises(SimulatorError, match="a depthwise filter is"):
        conv2d_depthwise_packed_vector(img, np.ones((3, 2, 2, 1), np.float32))
    with pytest.raises(SimulatorError, match="larger than the padded image"):
        conv2d_depthwise_diagonal_pe(img, np.ones((4, 4, 4, 1), np.float32))
    with pytest.raises(SimulatorError, match="must fit one PSUM bank"):
        conv2d_depthwise_diagonal_pe(np.ones((1, 1, 600, 1), np.float32), np.ones((1, 1, 1, 1), np.float32))
    with pytest.raises(SimulatorError, match="dtypes differ"):
        conv2d_depthwise_diagonal_pe(img, np.ones((4, 2, 2, 1), ml_dtypes.bfloat16))
    with pytest.raises(SimulatorError, match="kind must be one of"): contender_trace('4D', 'x', 1, 1)


def test_map_counts_and_sensitivity():
    em = engine_map('1D', sizes=(3,), widths=(16, 32), names=('Vector (original)', 'PE, diagonal weights'))
    wc = win_counts(em)
    assert set(wc) == {(t, d) for t in ('trn1', 'trn2', 'trn3') for d in ('float32', 'bfloat16')}
    assert all(sum(c.values()) == 2 for c in wc.values())
    # the winner is the contender with the smallest predicted time, recomputed here by hand
    t_vec = predict(em.traces[('Vector (original)', 3, 32, 'float32')], 'trn1').total_ns
    t_pe = predict(em.traces[('PE, diagonal weights', 3, 32, 'float32')], 'trn1').total_ns
    assert em.winners('trn1', 'float32')[0][0, 1] == (0 if t_vec < t_pe else 1)
    rob = robustness(em, {'same': {'nothing': {}}, 'slow PE': {'1000x': dict(pe_columns_per_cycle=0.001)}})
    sens = sensitivity(em, rob)
    assert sens[('same', 'nothing')][0] == 0 and sens[('slow PE', '1000x')][1] == 0
    assert all(r.deciders[i, j] <= {'slow PE'} for r in rob.values() for i in range(1) for j in range(2))
    assert all(r.engine_robust[i, j] or r.engine_deciders[i, j] == {'slow PE'} for r in rob.values() for i in range(1) for j in range(2))


def test_every_assumed_convention_is_varied():
    from dwlit.analysis.cost import CONVENTIONS, CostModel
    assumed = {f for f, (s, _, _) in CONVENTIONS.items() if s == 'ASSUMED'}
    assert set(VARIANTS) == assumed
    for f, vs in VARIANTS.items():
        for ch in vs.values():
            fields = set(ch) - {'on'}
            assert fields <= set(CostModel.__dataclass_fields__) and (f in fields or f == 'penalty_rule')
            for tg in ('trn1', 'trn2', 'trn3'): cost_model(tg, **on_target(ch, tg))      # every variant is a valid model


def _recount(em, variants):
    """(cells, robust, engine-robust Vector wins, engine-robust PE wins, {field: cells whose engine it flips}) per
    (target, dtype), from predict() on the traces directly; a tuned design takes the alternative of least mean log time."""
    def times(tg, d, ch):
        t = {n: np.array([[predict(em.traces[(n, s, w, d)], tg, **ch).total_ns for w in em.widths] for s in em.sizes])
             for n in {a for k in em.names for a in TUNED.get(k, (k,))}}
        return np.stack([min((t[a] for a in TUNED.get(k, (k,))), key=lambda x: np.log(x).mean()) for k in em.names])
    pe = np.array([n.startswith('PE') for n in em.names])
    out = {}
    for tg in ('trn1', 'trn2', 'trn3'):
        for d in ('float32', 'bfloat16'):
            base = times(tg, d, {}).argmin(0)
            wins = {f: [times(tg, d, on_target(ch, tg)).argmin(0) for ch in vs.values()] for f, vs in variants.items()}
            flips = {f: np.any([pe[w] != pe[base] for w in ws], axis=0) for f, ws in wins.items()}
            robust = np.all([w == base for ws in wins.values() for w in ws], axis=0)
            settled = ~np.any(list(flips.values()), axis=0)
            moved = {f: int(m.sum()) for f, m in flips.items() if m.any()}
            out[(tg, d)] = (base.size, int(robust.sum()), int((settled & ~pe[base]).sum()), int((settled & pe[base]).sum()), moved)
    return out


@pytest.mark.parametrize("kind,sizes,widths", [('1D', (3, 31), (64, 512)), ('2D', (3, 5), (16, 64))])
def test_verdict_matches_the_maps(kind, sizes, widths):
    "The verdict's numbers, and the sentences made of them, against an independent recount from the traces."
    import re
    variants = {f: VARIANTS[f] for f in ('access_start', 'pe_access_start', 'vector_rates', 'dma_latency_ns')}
    em = engine_map(kind, sizes, widths, check=False)
    rob = robustness(em, variants)
    got, want = verdict(em, rob), _recount(em, variants)
    assert {k: v[:4] for k, v in got.items()} == {k: v[:4] for k, v in want.items()}
    assert {k: sorted(v[4].items()) for k, v in got.items()} == {k: sorted(v[4].items()) for k, v in want.items()}
    for line, (key, (n, k, v, p, moved)) in zip(verdict_lines(em, rob), want.items()):
        got_k, got_n, s, got_v, got_p = map(int, re.search(r"(\d+) of (\d+) cells robust; the engine is the same under every "
                                                         r"variant in (\d+): the Vector designs win (\d+), the PE designs (\d+)", line).groups())
        assert (got_k, got_n, s, got_v, got_p) == (k, n, v + p, v, p) and f"**{key[0]}, {key[1]}**" in line
        assert {f: int(c) for f, c in re.findall(r"`(\w+)` \((\d+)\)", line)} == moved


@pytest.mark.slow
def test_verdict_matches_the_maps_on_a_denser_grid():
    em = engine_map('1D', (3, 7, 15, 31, 63, 127, 255), (64, 256, 1024), check=False)
    variants = {f: VARIANTS[f] for f in ('pe_access_start', 'penalty_rule', 'vector_rates')}
    got, want = verdict(em, robustness(em, variants)), _recount(em, variants)
    assert {k: v[:4] for k, v in got.items()} == {k: v[:4] for k, v in want.items()}


@pytest.mark.parametrize("dtype", ['float32', 'bfloat16'])
def test_no_contender_uses_psum_where_the_isa_forbids_it(dtype):
    """The ISA reference: a tensor_tensor's two inputs cannot both be in PSUM, the GpSimd engine cannot reach PSUM, and
    the PE array reads its inputs from SBUF. Every contender (chapter 20's identity sum among them) obeys."""
    seen = set()
    for kind in CONTENDERS:
        for name in CONTENDERS[kind]:
            for size, width in ((3, 40), (5, 20)):
                tr = contender_trace(kind, name, size, width, dtype, C=20)
                for i in tr.instructions:
                    bufs = [s.buffer for s in i.srcs]
                    seen.add((i.op, i.engine, tuple(sorted(bufs)), i.dst.buffer))
                    if i.op == 'tensor_tensor': assert bufs.count('psum') <= 1, (name, str(i))
                    if i.engine == 'GpSimd': assert 'psum' not in bufs + [i.dst.buffer], (name, str(i))
                    if i.op in ('nc_matmul', 'nc_transpose'):
                        assert set(bufs) == {'sbuf'} and i.dst.buffer == 'psum', (name, str(i))
    assert ('tensor_copy', 'Vector', ('psum',), 'sbuf') in seen            # the check did meet PSUM operands


def test_step_width_runs_the_same_kernel_wider_and_restores_it():
    import dwlit.kernels.tiling as tiling
    narrow = contender_trace('1D', 'Vector (original)', 3, 2000, check=True)
    wide = contender_trace('1D', 'Vector, step 2048', 3, 2000, check=True)          # still checked against the reference
    assert tiling.PACK == 512
    mult = lambda tr: max(i.free_elems for i in tr.where(op='tensor_tensor'))
    assert mult(narrow) == 171 * 3 and mult(wide) > 1000                                 # div_ceil(512, 3) positions x 3 taps
    with pytest.raises(SimulatorError, match="width must be >= 1"):
        with step_width(0): pass
    assert tiling.PACK == 512


def test_designs_fold_the_step_alternatives_into_one():
    assert designs('1D') == ('Vector (original)', 'Vector, step tuned', 'PE, diagonal weights', 'PE, implicit GEMM')
    assert designs('2D') == ('Vector (original)', 'Vector, rows packed', 'Vector/Scalar, tensor_scalar', 'PE, diagonal weights',
                             'PE, identity sum (older variant)')
    assert all(a in CONTENDERS[k] for k in ('1D', '2D') for n in designs(k) for a in TUNED.get(n, (n,)))
