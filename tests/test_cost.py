"""The cost model's formulas, pinned on hand-priced tiny kernels, and the scheduler's invariants on random ones."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from dwlit import nl, nisa, trace, kernel, SimulatorError
from dwlit.cost import cost_model, instruction_cost, predict, schedule, check_schedule, dtype_bytes, COST_MODELS


def _trace(fn, *args, **kw):
    with trace() as tr: fn(*args, **kw)
    return tr


@kernel
def _vector_ops(x, dt):
    a = nl.ndarray((128, 300), dt, buffer=nl.sbuf)
    p = nl.ndarray((128, 300), dt, buffer=nl.sbuf)
    r = nl.ndarray((128, 100), dt, buffer=nl.sbuf)
    nisa.dma_copy(a, x)
    nisa.memset(p, 0.0)
    nisa.tensor_tensor(p, a, a, nl.multiply)
    nisa.tensor_reduce(r, nl.add, p.ap([[300, 128], [3, 100], [1, 3]]), axis=2)
    return r


@pytest.mark.parametrize("target,dt,ghz,lanes,ttf", [
    ('trn1', 'float32', 1.12, 1, 2), ('trn1', 'bfloat16', 1.12, 1, 1),
    ('trn2', 'float32', 0.96, 2, 1), ('trn2', 'bfloat16', 0.96, 4, 1),
    ('trn3', 'float32', 1.2, 2, 1), ('trn3', 'float16', 1.2, 4, 1)])
def test_vector_prices_by_hand(target, dt, ghz, lanes, ttf):
    # figures from facts.md §2, written out here, not read from the model
    x = np.ones((128, 300), dtype=np.float32 if dt == 'float32' else nl.bfloat16 if dt == 'bfloat16' else np.float16)
    tr = _trace(_vector_ops, x, getattr(nl, dt))
    dma, ms, tt, red = tr.instructions
    assert instruction_cost(ms, target).ns == pytest.approx((60 + 300 / lanes) / ghz)
    assert instruction_cost(tt, target).ns == pytest.approx((60 + ttf * 300 / lanes) / ghz)
    assert instruction_cost(red, target, dependent=True).ns == pytest.approx((160 + 300 / lanes) / ghz)
    gbps = 38.4 if target == 'trn3' else 27.2
    nbytes = 128 * 300 * np.dtype(x.dtype).itemsize
    assert instruction_cost(dma, target).ns == pytest.approx(2000 + nbytes / (16 * gbps))


def test_initiation_interval_floor():
    @kernel
    def k(x):
        a = nl.ndarray((128, 2), nl.float32, buffer=nl.sbuf)
        nisa.memset(a, 1.0)
        nisa.tensor_tensor(a, a, a, nl.add)
        return a
    tr = _trace(k, np.ones(1, np.float32))
    ms, tt = tr.instructions
    c = instruction_cost(ms, 'trn1')                  # 60 + 2 = 62 < 64: floored to 64 cycles
    assert c.ns == pytest.approx(64 / 1.12) and c.stream_ns == pytest.approx(2 / 1.12)
    s = predict(tr, 'trn1')                           # tt reads what memset wrote: +100
    assert s.slots[1].dependent and s.slots[1].cost.ns == pytest.approx((160 + 4) / 1.12)
    assert s.total_ns == pytest.approx((64 + 164) / 1.12)


def test_dma_lanes_follow_partitions():
    @kernel
    def k(x):
        a = nl.ndarray((4, 1024), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(a, x)
        return a
    tr = _trace(k, np.ones((4, 1024), np.float32))
    c = instruction_cost(tr.instructions[0], 'trn2')
    assert c.lanes == 4 and c.ns == pytest.approx(2000 + 4 * 1024 * 4 / (4 * 27.2))


def test_pe_array_price():
    @kernel
    def k(x):
        a = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
        b = nl.ndarray((128, 500), nl.float32, buffer=nl.sbuf)
        o = nl.ndarray((128, 500), nl.float32, buffer=nl.psum)
        nisa.memset(a, 1.0); nisa.memset(b, 1.0)
        nisa.nc_matmul(o, a, b)
        return o
    tr = _trace(k, np.ones(1, np.float32))
    mm = tr.where(op='nc_matmul')[0]
    assert instruction_cost(mm, 'trn1').ns == pytest.approx((60 + 500) / 2.8)
    s = predict(tr, 'trn1')
    # the matmul waits for the second memset (independent memsets run back to back on Vector)
    assert s.slots[2].start_ns == pytest.approx(((60 + 128) + (60 + 500)) / 1.12)
    assert s.slots[2].engine == 'Tensor'


def test_programs_run_in_parallel():
    @kernel
    def k(x):
        a = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf)
        nisa.memset(a, 1.0)
        return a
    one = predict(_trace(k, np.ones(1, np.float32)), 'trn1').total_ns
    with trace() as tr: k[4](np.ones(1, np.float32))
    s = predict(tr, 'trn1')
    assert len(s.slots) == 4 and s.total_ns == pytest.approx(one)     # four cores, each its own Vector engine
    assert s.busy_ns('Vector') == pytest.approx(4 * one)


def test_bad_input_errors():
    with pytest.raises(SimulatorError, match="target must be one of"): cost_model('trn9')
    with pytest.raises(ValueError, match="dtype must be"): dtype_bytes(object())
    assert dtype_bytes('bfloat16') == 2 and dtype_bytes('float32') == 4
    assert set(COST_MODELS) == {'trn1', 'trn2', 'trn3'}


@kernel
def _random_program(x, plan):
    "A random mix of DMAs and Vector ops over a few tiles (from `plan`), to test the scheduler's invariants."
    tiles = [nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, name=f"t{i}") for i in range(3)]
    out = nl.ndarray((128, 64), nl.float32, buffer=nl.shared_hbm)
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


from dwlit import simulate_kernel
from dwlit.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.conv2d import conv2d_depthwise_f01b_o01i_bf01


@settings(max_examples=25, deadline=None)
@given(N=st.integers(1, 2), C=st.integers(1, 300), W=st.integers(3, 700), W_f=st.integers(1, 9),
       pad=st.tuples(st.integers(0, 2), st.integers(0, 2)), k=st.integers(1, 3), target=st.sampled_from(['trn1', 'trn2', 'trn3']))
def test_real_1d_schedules_keep_their_rules(N, C, W, W_f, pad, k, target):
    W_out = W + sum(pad) - W_f + 1
    if W_out < 1: return
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
