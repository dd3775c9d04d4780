"""The pure planning functions of dwlit.conv1d_plan against traced runs of the simulated entry point."""
import re
from collections import Counter
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

from dwlit import simulate_kernel, trace, kernel, current_core, SimulatorError
from dwlit.conv1d import conv1d_depthwise_bf01_oi01_bf01, conv1d_sbuf_bytes
from dwlit.conv1d_plan import (dispatch_decision, spmd_tile_table, instruction_free_sizes, sbuf_report, max_W,
                               conv1d_plan)


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
    with pytest.raises(SimulatorError, match="img.shape must be 4-D"):
        conv1d_plan((4, 1, 600), (4, 1, 1, 5), ((0, 0), (0, 0)))
    with pytest.raises(SimulatorError, match="W_out = .* < 1"):
        conv1d_plan((1, 4, 1, 2), (4, 1, 1, 5), ((0, 0), (0, 0)))
    assert 'DOES NOT FIT' in str(conv1d_plan((1, 512, 1, 20000), (512, 1, 1, 3), ((0, 0), (1, 1))))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2000), st.integers(300, 65_536), st.sampled_from([3, 31, 300]), st.integers(1, 4),
       st.sampled_from(['float32', 'bfloat16']))
def test_advice_is_the_fewest_programs_that_fit(C, W, W_f, k, dt):
    "A plan that does not fit names the fewest programs that fit; or says that one tile alone is too big, and it is."
    plan = conv1d_plan((1, C, 1, W), (C, 1, 1, W_f), ((0, 0), (0, 0)), num_programs=k, dtype=dt)
    if plan.fits:
        assert plan.advice == ''
        return
    m = re.match(r"(\d+) programs would fit", plan.advice)
    if m:
        n = int(m.group(1))
        assert n > k and conv1d_plan((1, C, 1, W), (C, 1, 1, W_f), ((0, 0), (0, 0)), n, dtype=dt).fits
        assert not conv1d_plan((1, C, 1, W), (C, 1, 1, W_f), ((0, 0), (0, 0)), n - 1, dtype=dt).fits
    else:
        assert 'more programs cannot help' in plan.advice
        tiles = -(-C // 128)
        assert not conv1d_plan((1, C, 1, W), (C, 1, 1, W_f), ((0, 0), (0, 0)), tiles, dtype=dt).fits
