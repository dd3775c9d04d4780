"""The pure planning functions of dwlit.kernels.conv1d_plan against traced runs of the simulated entry point."""
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dwlit import AllocationError, SimulatorError, current_core, kernel, simulate_kernel, trace
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01, conv1d_sbuf_bytes
from dwlit.kernels.conv1d_plan import conv1d_plan, max_W, sbuf_report
from dwlit.kernels.tiling import (
    dispatch_decision,
    div_ceil,
    instruction_free_sizes,
    plot_chunks,
    plot_tiles,
    program_tiles,
    spmd_tile_table,
)
from dwlit.sim.target import MAX_PROGRAMS, TARGETS


@st.composite
def calls(draw):
    N = draw(st.integers(1, 2))
    C = draw(st.one_of(st.integers(1, 700), st.sampled_from([128, 129, 256, 640])))
    W_f = draw(st.integers(1, 300))
    pad = (draw(st.integers(0, 3)), draw(st.integers(0, 3)))
    W_out = draw(st.integers(max(1, sum(pad) - W_f + 2), -(-512 // W_f) * 6))
    W = W_out + W_f - 1 - sum(pad)
    k = draw(st.integers(1, -(-C // 128) + 2))
    return N, C, W, W_f, pad, W_out, k


peaks = {}


@kernel
def _run_and_peak(img, filter, padding, out_shape):
    out = conv1d_depthwise_bf01_oi01_bf01(img, filter, padding, out_shape=out_shape)
    core = current_core()
    peaks[core.program_id] = core.sbuf.peak
    return out


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_plan_matches_traced_run(c):
    N, C, W, W_f, pad, W_out, k = c
    plan = conv1d_plan((N, C, 1, W), (C, 1, 1, W_f), ((0, 0), pad), num_programs=k)
    assert plan.geometry.W_out == W_out
    x = np.zeros((N, C, 1, W), np.float32); f = np.zeros((C, 1, 1, W_f), np.float32)
    peaks.clear()
    with trace() as tr:
        simulate_kernel(_run_and_peak, x, f, ((0, 0), pad), (N, C, 1, W_out), num_programs=k)
    tt = tr.where(op='tensor_tensor')
    per = Counter(i.program_id for i in tt)
    assert {p: n for p, n in plan.instruction_counts()['per_program'].items() if n} == dict(per)
    # the free sizes of one tile's multiplies for batch element 0, in issue order
    first = [i.free_elems for i in tt if i.program_id == tt[0].program_id][:len(plan.free_sizes)]
    assert first == [e for *_, e in plan.free_sizes]
    # dispatch: one multiply per tile and batch element means _default
    assert (plan.dispatch.kernel == 'conv1d_depthwise_default') == (len(tt) == N * -(-C // 128))
    # SBUF per program: the plan's totals equal the allocator's peaks (idle programs allocate nothing)
    assert {pid: total for pid, _, total, _ in plan.sbuf if total} == {p: v for p, v in peaks.items() if v}
    assert plan.fits


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 3000), st.integers(1, 40))
def test_spmd_table_partitions_the_channels(C, k):
    rows = spmd_tile_table(C, k)
    covered = [ch for r in rows if not r.idle for ch in range(*r.channels)]
    assert covered == list(range(C))                              # each channel exactly once, in order
    assert sum(r.has_partial for r in rows) == (C % 128 != 0)
    busy = [r for r in rows if not r.idle]
    assert [r.pid for r in busy] == list(range(len(busy)))        # the idle programs are the last ones
    assert len({r.end_tile - r.start_tile for r in busy[:-1]}) <= 1


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 511))
def test_dispatch_boundary_and_chunks(W_out, W_f):
    d = dispatch_decision(W_out, W_f)
    F = -(-512 // W_f)
    assert (d.kernel == 'conv1d_depthwise_default') == (W_out <= F)
    ch = instruction_free_sizes(W_out, W_f)
    assert sum(nv for _, nv, _ in ch) == W_out
    assert [b for b, _, _ in ch] == list(range(0, W_out, F))[:len(ch)] or len(ch) == 1
    if len(ch) > 1:
        assert all(e <= F * W_f for *_, e in ch)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8), st.sampled_from([1, 3, 7, 31, 200]), st.sampled_from(['trn1', 'trn2', 'trn3']),
       st.sampled_from(['float32', 'bfloat16']), st.integers(0, 4), st.booleans())
def test_max_W_is_the_largest_that_fits(T, W_f, tgt, dt, p, partial):
    W = max_W(T, W_f, (p, p), 1, tgt, dt, partial)
    cap = {'trn1': 192, 'trn2': 224, 'trn3': 256}[tgt] * 1024
    isz = 4 if dt == 'float32' else 2
    def need(W):
        W_out = W + 2 * p - W_f + 1
        path = 'default' if -(-W_out // -(-512 // W_f)) == 1 else 'f_packing'
        return sum(conv1d_sbuf_bytes(path, 1, W_f, W_out, W + 2 * p, T, partial, isz).values())
    assert need(W) <= cap < need(W + 1)


def test_sbuf_report_idle_and_bad_plan():
    rows = sbuf_report(1, 300, 100, 3, num_programs=5)
    assert [total > 0 for _, _, total, _ in rows] == [True, True, True, False, False]
    with pytest.raises(SimulatorError, match="W_f must be < 512"):
        conv1d_plan((1, 4, 1, 600), (4, 1, 1, 512), ((0, 0), (0, 0)))
    with pytest.raises(SimulatorError, match="img.shape must have 4 dimensions"):
        conv1d_plan((4, 1, 600), (4, 1, 1, 5), ((0, 0), (0, 0)))
    with pytest.raises(SimulatorError, match="W_out = .* < 1"):
        conv1d_plan((1, 4, 1, 2), (4, 1, 1, 5), ((0, 0), (0, 0)))
    assert 'DOES NOT FIT' in str(conv1d_plan((1, 512, 1, 20000), (512, 1, 1, 3), ((0, 0), (1, 1))))


def fits(plan, **change):
    "Whether `plan`'s call with `change` fits SBUF; a row no partition can hold does not."
    try: return plan.replan(**change).fits
    except AllocationError: return False


@st.composite
def too_big(draw):
    "A 1D call likely not to fit SBUF: up to 40 tiles (or beyond MAX_PROGRAMS), rows up to the longest any partition holds."
    C = draw(st.one_of(st.integers(1, 5200), st.sampled_from([128, 129, 1024, 1100, 129 * 128]), st.just(600_000)))
    W_f = draw(st.sampled_from([1, 3, 4, 31, 300, 511]))
    pad = (draw(st.integers(0, 40)), draw(st.integers(0, 40)))
    dt = draw(st.sampled_from(['float32', 'bfloat16', 'float16']))
    top = 2**18 // (4 if dt == 'float32' else 2) - sum(pad)
    lo = max(1, W_f - sum(pad), 300)
    W = draw(st.one_of(st.integers(lo, top), st.integers(max(lo, top // 3), top)))   # often one tile alone is too big
    return (draw(st.integers(1, 3)), C, W, W_f, pad, draw(st.integers(1, 12)), draw(st.sampled_from(['trn1', 'trn2', 'trn3'])), dt)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(too_big())
def test_following_the_advice_fits_and_is_the_least_change(c):
    "Every fix, applied, fits; the programs are the fewest and the row the longest; a kind left out does not fit."
    N, C, W, W_f, pad, k, tgt, dt = c
    plan = conv1d_plan((N, C, 1, W), (C, 1, 1, W_f), ((0, 0), pad), k, tgt, dt)
    if plan.fits:
        assert plan.advice == '' and plan.fixes == []
        return
    T, fx = -(-C // 128), {f.kind: f.change for f in plan.fixes}
    most = max(k, min(T, MAX_PROGRAMS))                           # the most programs that can help
    kinds = [f.kind for f in plan.fixes if f.kind != 'target'] + [f.change['target'] for f in plan.fixes if f.kind == 'target']
    assert plan.advice and len(set(kinds)) == len(kinds)          # at most one fix of each kind (and per target)
    for f in plan.fixes:
        assert fits(plan, **f.change), f                          # following the advice fits
        assert f.change.get('num_programs', k) > k or 'num_programs' not in f.change
        n = f.change.get('num_programs', k)                       # ... on the fewest programs for that change
        rest = {a: v for a, v in f.change.items() if a != 'num_programs'}
        assert n == k or not fits(plan, **rest, num_programs=n - 1), f
    if 'programs' in fx:                                          # one tile alone fits: only more programs
        assert list(fx) == ['programs'] and re.match(r"[\d,]+ programs \(at most \d+ channel tile\(s\) each\) would fit", plan.advice)
        n = fx['programs']['num_programs']
        assert all(not fits(plan, num_programs=j) for j in range(k, n)[-10:])   # no fewer programs fit
        return
    assert not fits(plan, num_programs=most)                      # more programs cannot help
    assert ('one channel tile alone needs' if -(-T // most) == 1 else 'even 4,096 programs') in plan.advice
    assert not re.match(r"[\d,]+ programs", plan.advice)           # the advice does not start with more programs
    if 'row' in fx:                                               # the longest row: one more does not fit anywhere
        w = fx['row']['W']
        assert w < W and not fits(plan, W=w + 1, num_programs=most) and f"W={w:,}" in plan.advice
    else:                                                         # no row fits: not even the shortest
        assert not fits(plan, W=max(1, W_f - sum(pad)), num_programs=most)
    if dt == 'float32': assert ('dtype' in fx) == fits(plan, dtype='bfloat16', num_programs=most)
    else: assert 'dtype' not in fx
    targets = {f.change['target'] for f in plan.fixes if f.kind == 'target'}
    assert targets == {t for t in TARGETS if t != tgt and fits(plan, target=t, num_programs=most)}


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.sampled_from([1, 3, 31, 511]), st.integers(0, 300), st.integers(1, 8),
       st.sampled_from(['trn1', 'trn3']), st.sampled_from(['float32', 'bfloat16']))
def test_a_row_longer_than_any_partition_names_the_longest_that_fits(C, W_f, p, k, tgt, dt):
    "The planner refuses a row no SBUF partition holds, and names the longest that fits, on the fewest programs."
    W = 2**18 // (4 if dt == 'float32' else 2) - 2 * p + 1       # one element more than trn3's partition holds
    with pytest.raises(AllocationError, match="more than any target has") as e:
        conv1d_plan((1, C, 1, W), (C, 1, 1, W_f), ((0, 0), (p, p)), k, tgt, dt)
    m = re.search(rf"the longest that fits {tgt} in {dt} is W=([\d,]+)(?:, with ([\d,]+) programs)?$", str(e.value))
    assert m, str(e.value)
    w, n = int(m.group(1).replace(',', '')), int((m.group(2) or str(k)).replace(',', ''))
    plan = lambda W, n: conv1d_plan((1, C, 1, W), (C, 1, 1, W_f), ((0, 0), (p, p)), n, tgt, dt)
    assert plan(w, n).fits and not plan(w + 1, max(n, min(-(-C // 128), MAX_PROGRAMS))).fits
    assert n == k or not plan(w, n - 1).fits


@pytest.mark.parametrize("call, msg", [
    (lambda: div_ceil(300, 0), "b must be >= 1, got b=0"),
    (lambda: spmd_tile_table(600, 0), "num_programs must be >= 1, got num_programs=0"),
    (lambda: spmd_tile_table(600, 10**9), "num_programs must be <= 4,096"),
    (lambda: spmd_tile_table({600}, 2), "C must be an integer, got C={600}"),
    (lambda: program_tiles(300, -1, 2), "pid must be >= 0"),
    (lambda: program_tiles(300, 2, 2), "pid must be <= 1"),
    (lambda: dispatch_decision(0, 3), "W_out must be >= 1, got W_out=0"),
    (lambda: dispatch_decision(10, True), "W_f must be an integer, got W_f=True"),
    (lambda: instruction_free_sizes(10**9, 1), "makes 1,953,125 chunks"),
    (lambda: plot_tiles(10**30, 2), "plot_tiles draws at most 32 programs and 64 tiles"),
    (lambda: plot_chunks(400, 7, highlight=True), "highlight must be an integer, got highlight=True"),
    (lambda: plot_chunks(400, 7, highlight=6), "highlight must be <= 5"),
])
def test_tiling_refuses_by_name(call, msg):
    "Chapter 9's rules and drawings refuse bad arguments by name, at once (a huge C is not drawn tile by tile)."
    with pytest.raises(SimulatorError, match=re.escape(msg)): call()


def test_tiling_takes_numpy_integers():
    assert dispatch_decision(np.int32(172), np.uint16(3)) == dispatch_decision(172, 3)
    assert spmd_tile_table(np.int64(600), np.uint8(4)) == spmd_tile_table(600, 4)
    assert [(r.full_tiles, r.has_partial, r.idle) for r in spmd_tile_table(600, 4)] == \
        [(2, False, False), (2, False, False), (0, True, False), (0, False, True)]


def test_sbuf_report_and_max_W_examples():
    "The planners' answers on a few calls, and their refusals by name (once chapter 11's visible checks)."
    W4 = max_W(4, 3)                           # 4 tiles, trn1, fp32, W_f = 3, no padding
    assert sbuf_report(1, 512, W4, 3)[0][2] <= 192 * 1024 < sbuf_report(1, 512, W4 + 1, 3)[0][2]
    assert max_W(np.int64(4), np.int32(3), np.array([0, 0])) == W4
    assert sbuf_report(1, 512, W4, 3, np.array([1, 1]), np.uint8(2)) == sbuf_report(1, 512, W4, 3, (1, 1), 2)
    assert max_W(8, 3) < max_W(4, 3) < max_W(2, 3) < max_W(1, 3)
    assert max_W(1, 3, target='trn1') < max_W(1, 3, target='trn2') < max_W(1, 3, target='trn3')
    assert max_W(1, 3, dtype='bfloat16') > 1.9 * max_W(1, 3)           # half the bytes, about twice the row
    for call, msg in [(lambda: max_W(4, 3, {0, 1}), "padding must be an ordered sequence"),
                      (lambda: max_W(0), "full_tiles must be >= 1, or partial=True"),
                      (lambda: max_W(4, target={'trn1'}), "max_W: target must be one of trn1, trn2, trn3 (a name), got target={'trn1'}"),
                      (lambda: max_W(4, partial=1), "partial must be True or False, got partial=1"),
                      (lambda: sbuf_report(1, 512, 100, 3, num_programs=10**9), "num_programs must be <= 4,096"),
                      (lambda: sbuf_report(1, 512, 100, 3.0), "W_f must be an integer, got W_f=3.0")]:
        with pytest.raises(SimulatorError, match=re.escape(msg)): call()


def test_conv1d_plan_examples():
    "conv1d_plan's refusals and advice on the calls chapter 11 shows (each fix planned again)."
    for call, msg in [
            (lambda: conv1d_plan((1, 512, 1, 30), (512, 1, 1, 3), ((0, 0), (-1, 1))), "padding must be >= 0, got W_padding_l=-1"),
            (lambda: conv1d_plan((1, 512, 1, 30), (512, 1, 1, 3), ((0, 0), {1, 2})), "got padding[1]={1, 2}"),
            (lambda: conv1d_plan((1, 512, 1, 30), (512, 1, 1, 3), ((0, 0), (1, 1)), num_programs=10**8),
             "conv1d_plan: num_programs must be <= 4,096"),
            (lambda: conv1d_plan((1, 1024, 1, 200_000), (1024, 1, 1, 3), ((0, 0), (0, 0))),
             "the longest that fits trn1 in float32 is W=24,319, with 8 programs"),
            (lambda: conv1d_plan((1, 128, 1, 200_000), (128, 1, 1, 3), ((0, 0), (0, 0)), target='trn3', dtype='bfloat16'),
             "more than any target has (262,144 B on trn3); only a shorter row can fit (W=200,000, padding (0, 0)); "
             "the longest that fits trn3 in bfloat16 is W=65,279"),
            (lambda: conv1d_plan((1, 128, 1, 10), (128, 1, 1, 3), ((0, 0), (10**6, 0))), "only a shorter row can fit"),
            (lambda: conv1d_plan((1, 1024, 1, 30_000), (1024, 1, 1, 3), ((0, 0), (1, 1))).advise(True),
             "how must be None or a function of a Fix, got how=True")]:
        with pytest.raises(SimulatorError, match=re.escape(msg)): call()
    plan1 = conv1d_plan((1, 600, 1, 1000), (600, 1, 1, 31), ((0, 0), (15, 15)), num_programs=4)
    assert str(conv1d_plan(np.array([1, 600, 1, 1000]), [600, 1, 1, 31], np.array([[0, 0], [15, 15]]), np.int64(4))) == str(plan1)
    assert [conv1d_plan((1, 128, 1, W), (128, 1, 1, 3), ((0, 0), (0, 0)), target='trn3', dtype='bfloat16').fits
            for W in (65_279, 65_280)] == [True, False]      # 2 B x (W_f + W + W_out) + 2 B x 513 <= 262,144
    p = conv1d_plan((1, 1024, 1, 20_000), (1024, 1, 1, 3), ((0, 0), (1, 1)))    # 8 tiles, one program
    assert [p.replan(num_programs=k).fits for k in (1, 7, 8, 9)] == [False, False, True, True]
    assert p.advice == "8 programs (at most 1 channel tile(s) each) would fit"
    p = conv1d_plan((1, 1024, 1, 30_000), (1024, 1, 1, 3), ((0, 0), (1, 1)))    # one tile alone is too big
    assert p.replan(num_programs=8).fits is False
    assert [p.replan(W=24_317, num_programs=k).fits for k in (7, 8)] == [False, True]
    assert [p.replan(target=t, num_programs=8).fits for t in ('trn2', 'trn3')] == [False, True]
    assert p.replan(dtype='bfloat16', num_programs=7).fits is False
    assert p.advice.startswith("one channel tile alone needs 242,072 B of 196,608, so more programs cannot help; ")
    assert p.advise(lambda f: f"kind {f.kind}").split('; ')[1] == (
        "a row of at most W=24,317 with 8 programs (kind row), a 2-byte dtype such as bfloat16 with 8 programs "
        "(kind dtype), or target trn3 with 8 programs (kind target) would fit")
    p = conv1d_plan((2, 600, 1, 60_000), (600, 1, 1, 3), ((0, 0), (1, 1)), 3)     # only a shorter row
    assert [f.kind for f in p.fixes] == ['row']
    assert not (p.replan(dtype='bfloat16', num_programs=5).fits or p.replan(target='trn3', num_programs=5).fits)
    q = conv1d_plan((1, 600, 1, 1000), (600, 1, 1, 31), ((0, 0), (15, 15)))
    assert (q.advice, q.fixes) == ('', [])
