"""The scheduler of chapter 22: engines never double-booked, dependencies kept and DMA engines freed before the data
lands, on hand-built and random kernels and on the real depthwise kernels; predict's argument checks."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dwlit import SimulatorError, kernel, nisa, nl, simulate_kernel, trace
from dwlit.analysis.timeline import check_schedule, predict, schedule
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01


def _trace(fn, *args, **kw):
    with trace() as tr: fn(*args, **kw)
    return tr


@kernel
def _small(x):
    a = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, name='a')
    nisa.dma_copy(a, x); nisa.memset(a, 0.0)
    return x


def test_dma_latency_keeps_no_engine_busy():
    @kernel
    def k(x):
        out = nl.ndarray((32, 64), nl.float32, buffer=nl.shared_hbm, name='out')
        for i in range(32):                                  # 32 one-partition stores, nothing depends on them
            a = nl.ndarray((1, 64), nl.float32, buffer=nl.sbuf, name='a')
            nisa.memset(a, 0.0)
            nisa.dma_copy(out[i:i + 1], a)
        return out
    s = predict(_trace(k, np.ones(1, np.float32)), 'trn1')
    dmas = [x for x in s.slots if x.engine == 'DMA']
    # 16 engines, one transfer each at a time: the 17th store needs an engine the first one has freed, which happens
    # when its work is done, long before its data has landed (if the latency kept the engine, it would wait for that)
    assert dmas[0].start_ns + dmas[0].cost.busy_ns <= dmas[16].start_ns < dmas[0].end_ns
    assert s.total_ns == pytest.approx(max(x.end_ns for x in s.slots))


def test_check_schedule_catches_each_planted_mistake():
    "Each rule of check_schedule, broken once in a schedule that kept it."
    from dataclasses import replace
    @kernel
    def k(x):
        a, b = (nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf) for _ in range(2))
        out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm, name='out')
        nisa.dma_copy(a, x)
        nisa.memset(b, 1.0)
        nisa.tensor_tensor(b, a, b, nl.multiply)     # reads what the load and the memset wrote
        nisa.dma_copy(out, b)
        return out
    tr = _trace(k, np.ones((128, 64), np.float32))
    check_schedule(predict(tr))                      # as scheduled: every rule kept
    overlap = predict(tr); overlap.slots[2].start_ns = overlap.slots[1].start_ns      # the multiply on top of the memset
    with pytest.raises(AssertionError, match=r"instruction 2 \(tensor_tensor\) starts at .* before 1 ends"): check_schedule(overlap)
    early = predict(tr); early.slots[3].start_ns = early.slots[2].start_ns              # the store before the multiply ends
    with pytest.raises(AssertionError, match=r"instruction 3 \(dma_copy\) .* before instruction 2 \(tensor_tensor\)"):
        check_schedule(early)
    crowded = predict(tr)                            # both transfers at once, each on all 16 engines
    for sl in crowded.slots:
        if sl.engine == 'DMA': sl.start_ns, sl.cost = 0.0, replace(sl.cost, lanes=16)
    with pytest.raises(AssertionError, match="need 32 DMA engines, more than the 16 there are"): check_schedule(crowded)


def test_programs_run_in_parallel():
    @kernel
    def k(x):
        a = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf, name='a')
        nisa.memset(a, 1.0)
        return x
    one = predict(_trace(k, np.ones(1, np.float32)), 'trn1').total_ns
    with trace() as tr: k[4](np.ones(1, np.float32))
    s = predict(tr, 'trn1')
    assert len(s.slots) == 4 and s.total_ns == pytest.approx(one)     # four cores, each its own Vector engine
    assert s.busy_ns('Vector') == pytest.approx(4 * one)


@kernel
def _random_program(x, plan):
    "A random mix of DMAs and Vector ops over a few tiles (from `plan`), to test the scheduler's invariants."
    tiles = [nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, name=f"t{i}") for i in range(3)]
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm, name='out')
    for t in tiles: nisa.memset(t, 0.0)
    for op, a, b, lo in plan:
        half = tiles[a].ap([[64, 128], [1, 32]], offset=lo)
        if op == 0: nisa.dma_copy(half, x.ap([[64, 128], [1, 32]], offset=lo))
        elif op == 1: nisa.tensor_tensor(half, tiles[b].ap([[64, 128], [1, 32]], offset=32 - lo), half, nl.add)
        elif op == 2: nisa.tensor_reduce(tiles[a].ap([[64, 128], [1, 1]], offset=lo), nl.add,
                                         tiles[b].ap([[64, 128], [1, 32]], offset=32 - lo), axis=1)
        else: nisa.dma_copy(out.ap([[64, 128], [1, 32]], offset=lo), half)
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 2), st.sampled_from([0, 32])),
                min_size=1, max_size=12), st.sampled_from(['trn1', 'trn2', 'trn3']))
def test_schedule_invariants(plan, target):
    tr = _trace(_random_program, np.ones((128, 64), np.float32), plan)
    s = schedule(tr, target)
    check_schedule(s)                                     # no engine overlap, every dependency respected
    serial = sum(x.cost.ns for x in s.slots)
    assert s.busy_fraction('Vector') <= 1 + 1e-9
    assert s.busy_ns('Vector') - 1e-6 <= s.total_ns <= serial + 1e-6
    for x in s.slots:                                     # nothing starts before the instruction it waits for ends
        if x.waits_for is not None:
            assert x.start_ns == pytest.approx(s.slots[x.waits_for].end_ns)


@settings(max_examples=25, deadline=None)
@given(N=st.integers(1, 2), C=st.integers(1, 300), W=st.integers(3, 700), W_f=st.integers(1, 9),
       pad=st.tuples(st.integers(0, 2), st.integers(0, 2)), k=st.integers(1, 3), target=st.sampled_from(['trn1', 'trn2', 'trn3']))
def test_real_1d_schedules_keep_their_rules(N, C, W, W_f, pad, k, target):
    W_out = W + sum(pad) - W_f + 1
    assume(W_out >= 1)
    with trace() as tr:
        simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, np.ones((N, C, 1, W), np.float32),
                        np.ones((C, 1, 1, W_f), np.float32), ((0, 0), pad), out_shape=(N, C, 1, W_out), num_programs=k)
    s = predict(tr, target)
    check_schedule(s)
    for pid in {i.program_id for i in tr.instructions}:          # each program's Vector work fits in the total
        assert sum(x.cost.ns for x in s.slots if x.program_id == pid and x.engine == 'Vector') <= s.total_ns + 1e-6
    first_compute = min(x.start_ns for x in s.slots if x.ins.op == 'tensor_tensor')
    first_load_end = min(x.end_ns for x in s.slots if x.ins.op == 'dma_copy')
    assert first_compute >= first_load_end - 1e-6                 # nothing is multiplied before data arrives


@settings(max_examples=10, deadline=None)
@given(C=st.integers(1, 140), H=st.integers(2, 6), W=st.integers(2, 8), N=st.integers(1, 2), kH=st.integers(1, 2), kW=st.integers(1, 3))
def test_real_2d_schedules_keep_their_rules(C, H, W, N, kH, kW):
    with trace() as tr:
        conv2d_depthwise_f01b_o01i_bf01(np.ones((C, H, W, N), np.float32), np.ones((C, kH, kW, 1), np.float32), ((1, 0), (0, 1)))
    check_schedule(predict(tr, 'trn2'))


@pytest.fixture(scope='module')
def small_trace():
    return _trace(_small, np.ones((128, 64), np.float32))


@pytest.mark.parametrize("changes,cls,message", [
    (dict(partitions=0), SimulatorError, "predict: partitions must be >= 1, got partitions=0"),           # was ZeroDivisionError
    (dict(dma_engine_gbps=0), SimulatorError, "dma_engine_gbps must be > 0, got dma_engine_gbps=0"),      # was ZeroDivisionError
    (dict(dma_engine_gbps=-27.2), SimulatorError, "dma_engine_gbps must be > 0, got dma_engine_gbps=-27.2"),  # was a time
    (dict(dma_partitions_per_engine=-8), SimulatorError, "dma_partitions_per_engine must be >= 1"),     # was a time
    (dict(dma_fixed_ns=float('nan')), SimulatorError, "dma_fixed_ns must be a finite number, got dma_fixed_ns=nan"),  # was nan
    (dict(dma_latency_ns=float('inf')), SimulatorError, "dma_latency_ns must be a finite number"),
    (dict(clock_ghz={}), TypeError, "clock_ghz must be a dict with a rate for each of 'Tensor', 'Vector'"),  # was KeyError
    (dict(clock_ghz=dict(Tensor=2.8, Vector=0, Scalar=1.4, GpSimd=1.4)), SimulatorError, "clock_ghz['Vector'] must be > 0"),
    (dict(vector_elems_per_cycle={2: 512}), TypeError, "vector_elems_per_cycle must be a dict with a rate for each of 2, 4"),
    (dict(access_start='60'), TypeError, "access_start must be a number (an int or a float), got access_start='60'"),
    (dict(dependent_penalty=-100), SimulatorError, "dependent_penalty must be >= 0, got dependent_penalty=-100"),
    (dict(step0_contiguous=1), TypeError, "step0_contiguous must be True or False"),
    (dict(penalty_rule='always'), SimulatorError, "penalty_rule must be one of 'dependent', 'small dependent'"),
    (dict(dma_engines=2.5), TypeError, "dma_engines must be an integer, got dma_engines=2.5"),
    (dict(dma_speed=1), TypeError, "unknown cost-model field 'dma_speed'; the fields are clock_ghz, "),
    (dict(partitons=128), TypeError, "unknown cost-model field 'partitons'"),                           # a typo is not ignored
])
def test_predict_refuses_bad_fields(small_trace, changes, cls, message):
    with pytest.raises(cls) as e: predict(small_trace, 'trn1', **changes)
    assert message in str(e.value) and isinstance(e.value, SimulatorError)


@pytest.mark.parametrize("tr", ['abc', [1, 2], None, 3.5, {'instructions': []}, np.ones(3)])
def test_predict_refuses_what_is_not_a_trace(tr):
    with pytest.raises(TypeError, match=r"predict: tr must be a Trace .* or a list of its instructions, got tr="): predict(tr)


def test_predict_takes_a_trace_or_its_instruction_list(small_trace):
    assert predict(list(small_trace.instructions)).total_ns == predict(small_trace).total_ns > 0
    assert predict([]).total_ns == 0.0


def test_schedules_check_what_they_are_asked():
    "busy_fraction of a misspelt engine or of a program the schedule does not have is refused, not answered 0.0."
    from dwlit.analysis.timeline import plot_gantt, step_width
    from dwlit.sim import SimulatorTypeError
    tr = _trace(conv1d_depthwise_bf01_oi01_bf01, np.ones((1, 4, 1, 16), np.float32), np.ones((4, 1, 1, 3), np.float32),
                ((0, 0), (0, 0)), out_shape=(1, 4, 1, 14))
    s = predict(tr, 'trn1')
    assert 0 < s.busy_fraction('Vector') <= 1
    with pytest.raises(SimulatorError, match="engine must be one of"): s.busy_fraction('Vectr')
    with pytest.raises(SimulatorError, match="engine must be one of"): s.busy_ns('vector')
    with pytest.raises(SimulatorError, match=r"program_id must be one of the schedule's programs \[0\], got program_id=7"): s.busy_fraction('Vector', 7)
    with pytest.raises(SimulatorTypeError, match="program_id must be an integer"): s.busy_fraction('Vector', None)
    with pytest.raises(SimulatorTypeError, match="sched must be a Schedule"): check_schedule(None)
    with pytest.raises(SimulatorTypeError, match="sched must be a Schedule"): plot_gantt(tr)
    with pytest.raises(SimulatorError, match="program_id"): plot_gantt(s, program_id=3)
    with pytest.raises(SimulatorTypeError, match="legend must be True or False"): plot_gantt(s, legend='no')
    with pytest.raises(SimulatorTypeError, match="tr must be a Trace"): predict(None)
    with pytest.raises(SimulatorError, match="target must be one of"): predict(tr, 'trn9')
    with pytest.raises(SimulatorTypeError, match="width must be an integer"):
        with step_width('wide'): pass
