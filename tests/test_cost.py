"""The cost model's formulas (chapter 21), pinned on hand-priced tiny kernels, the ISA table's conditions one by one,
DMA runs against a brute-force count, and the conventions' marks. The scheduler's tests are in tests/test_timeline.py."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dwlit import NeuronCore, SimulatorError, kernel, nisa, nl, simulate_kernel, trace, use_core
from dwlit.analysis.cost import (
    COST_MODELS,
    contiguous_run,
    cost_model,
    dma_runs,
    dtype_bytes,
    instruction_cost,
    pe_tflops,
    vector_cycles,
)
from dwlit.analysis.timeline import predict  # a dependent instruction's penalty is decided where it is scheduled
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01


def _trace(fn, *args, **kw):
    with trace() as tr: fn(*args, **kw)
    return tr


@kernel
def _vector_ops(x, dt):
    a = nl.ndarray((128, 300), dt, buffer=nl.sbuf, name='a')
    p = nl.ndarray((128, 300), dt, buffer=nl.sbuf, name='p')
    r = nl.ndarray((128, 100), dt, buffer=nl.sbuf, name='r')
    nisa.dma_copy(a, x)
    nisa.memset(p, 0.0)
    nisa.tensor_tensor(p, a, a, nl.multiply)
    nisa.tensor_reduce(r, nl.add, p.ap([[300, 128], [3, 100], [1, 3]]), axis=2)
    return x   # a kernel returns an HBM tensor; the tests read the trace


@pytest.mark.parametrize("target,dt,ghz,ms,tt,red", [
    # streaming cycles for N = 300 (the reduce reads 300 per partition), written out by hand from the ISA reference's
    # table (trn1) and the guides' data-path widths with two inputs sharing the path (trn2/trn3 'widths')
    ('trn1', 'float32', 1.12, 300, 600, 300),      # memset N, tensor_tensor 2N, reduce N
    ('trn1', 'bfloat16', 1.12, 150, 300, 150),     # zero fill N/2, bf16 contiguous multiply N, bf16 add-reduce N/2
    ('trn1', 'float16', 1.12, 150, 600, 300),      # fp16: only the zero fill is faster
    ('trn2', 'float32', 0.96, 150, 300, 150), ('trn2', 'bfloat16', 0.96, 75, 150, 75),
    ('trn3', 'float32', 1.2, 150, 300, 150), ('trn3', 'float16', 1.2, 75, 150, 75)])
def test_vector_prices_by_hand(target, dt, ghz, ms, tt, red):
    x = np.ones((128, 300), dtype=np.float32 if dt == 'float32' else nl.bfloat16 if dt == 'bfloat16' else np.float16)
    tr = _trace(_vector_ops, x, getattr(nl, dt))
    dma, i_ms, i_tt, i_red = tr.instructions
    assert instruction_cost(i_ms, target).ns == pytest.approx((60 + ms) / ghz)
    assert instruction_cost(i_tt, target).ns == pytest.approx((60 + tt) / ghz)
    assert instruction_cost(i_red, target, dependent=True).ns == pytest.approx((160 + red) / ghz)
    gbps = 38.4 if target == 'trn3' else 27.2
    nbytes = 128 * 300 * np.dtype(x.dtype).itemsize
    assert instruction_cost(dma, target).busy_ns == pytest.approx(150 + 128 * 16 / 16 + nbytes / (16 * gbps))   # 128 runs
    assert instruction_cost(dma, target).ns == pytest.approx(2000 + 150 + 128 * 16 / 16 + nbytes / (16 * gbps))


@pytest.mark.parametrize("dt,ms,tt,red", [('float32', 300, 600, 300), ('bfloat16', 150, 150, 150)])
def test_vector_modes_lift_only_what_the_trn2_guide_lists(dt, ms, tt, red):
    "'modes': trn1's table, with tensor_tensor 2x faster in 2-byte types; memset and reduce as on trn1."
    x = np.ones((128, 300), dtype=np.float32 if dt == 'float32' else nl.bfloat16)
    _, i_ms, i_tt, i_red = _trace(_vector_ops, x, getattr(nl, dt)).instructions
    m = cost_model('trn2', vector_rates='modes')
    got = [instruction_cost(i, m).stream_ns for i in (i_ms, i_tt, i_red)]
    assert got == pytest.approx([c / 0.96 for c in (ms, tt, red)])


def test_isa_fast_path_conditions():
    @kernel
    def k(x):
        a = nl.ndarray((128, 200), nl.bfloat16, buffer=nl.sbuf, name='a')
        f = nl.ndarray((128, 3), nl.bfloat16, buffer=nl.sbuf, name='f')
        p = nl.ndarray((128, 200), nl.float32, buffer=nl.psum, name='p')
        nisa.memset(a, 2.0); nisa.memset(f, 1.0); nisa.memset(p, 0.0)
        nisa.tensor_tensor(a, a, f.ap([[3, 128], [0, 200]]), nl.multiply)     # step-0 broadcast: not contiguous
        nisa.tensor_tensor(a, a, a.ap([[200, 128], [1, 100], [1, 2]]), nl.subtract)   # overlapping windows: runs of 2
        nisa.tensor_tensor(a, a, a, nl.subtract)                               # the fast path
        nisa.tensor_tensor(p, a, p, nl.add)                                    # one input in PSUM: N whatever the dtype
        nisa.tensor_reduce(f.ap([[3, 128], [1, 1]]), nl.maximum, a, axis=1)   # bf16 max: N/2
        nisa.tensor_reduce(f.ap([[3, 128], [1, 1]]), nl.multiply, a, axis=1)  # not add or max: N
        return x
    ins = _trace(k, np.ones(1, np.float32)).instructions[3:]
    assert [instruction_cost(i, 'trn1').stream_ns * 1.12 for i in ins] == pytest.approx([400, 400, 200, 200, 100, 200])


@kernel
def _vector_conditions(x):
    "One Vector instruction per condition of the ISA table, on bf16 tiles of 256 elements per partition (after 3 fills)."
    a, o = (nl.ndarray((128, 256), nl.bfloat16, buffer=nl.sbuf) for _ in range(2))
    f = nl.ndarray((128, 4), nl.bfloat16, buffer=nl.sbuf, name='f')
    h = nl.ndarray((128, 256), nl.float16, buffer=nl.sbuf, name='h')
    p = nl.ndarray((128, 256), nl.bfloat16, buffer=nl.psum, name='p')
    r, r32 = nl.ndarray((128, 1), nl.bfloat16, buffer=nl.sbuf), nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf)
    nisa.memset(f, 1.0); nisa.memset(h, 0.0); nisa.memset(p, 0.0)
    nisa.memset(a, 0.0); nisa.memset(a, 1.0)
    nisa.tensor_tensor(o, a, a, nl.multiply)
    nisa.tensor_tensor(o, a, f.ap([[4, 128], [0, 256]]), nl.multiply)
    nisa.tensor_tensor(o, a, a, nl.maximum)
    nisa.tensor_tensor(h, h, h, nl.multiply)
    nisa.tensor_tensor(o, a, p, nl.multiply)
    nisa.tensor_reduce(r, nl.add, a, axis=1); nisa.tensor_reduce(r32, nl.add, a, axis=1)
    nisa.tensor_copy(o, a); nisa.tensor_copy(o, p)
    return x


def test_the_isa_table_condition_by_condition():
    """Chapter 21's table of conditions: streaming cycles for N = 256 on trn1, and on trn2 under each reading of its
    rates, written out by hand from the rules (trn1: the ISA table; 'widths': N / lanes of the widest operand, two
    inputs sharing the path; 'modes': trn1's cost over the performance-mode lift)."""
    expected = {'memset 0.0': (128, 64, 128), 'memset 1.0': (256, 64, 256), 'multiply, contiguous': (256, 128, 128),
                'multiply, step-0 input': (512, 128, 256), 'maximum, contiguous': (512, 128, 256),
                'multiply, fp16': (512, 128, 256), 'multiply, one input in PSUM': (256, 128, 256),
                'reduce add': (128, 64, 128), 'reduce add, fp32 out': (256, 128, 256),
                'copy SBUF -> SBUF': (256, 64, 64), 'copy PSUM -> SBUF': (256, 64, 128)}
    ins = _trace(_vector_conditions, np.ones(1, np.float32)).instructions
    assert len(ins) == 3 + len(expected)
    models = (cost_model('trn1'), cost_model('trn2'), cost_model('trn2', vector_rates='modes'))
    got = {k: tuple(vector_cycles(i, m) for m in models) for k, i in zip(expected, ins[3:])}
    assert got == expected


def test_initiation_interval_floor():
    @kernel
    def k(x):
        a = nl.ndarray((128, 2), nl.float32, buffer=nl.sbuf, name='a')
        nisa.memset(a, 1.0)
        nisa.tensor_tensor(a, a, a, nl.add)
        return x
    tr = _trace(k, np.ones(1, np.float32))
    ms, tt = tr.instructions
    c = instruction_cost(ms, 'trn1')                  # 60 + 2 = 62 < 64: floored to 64 cycles
    assert c.ns == pytest.approx(64 / 1.12) and c.stream_ns == pytest.approx(2 / 1.12)
    s = predict(tr, 'trn1')                           # tt reads what memset wrote: +100
    assert s.slots[1].dependent and s.slots[1].cost.ns == pytest.approx((160 + 4) / 1.12)
    assert s.total_ns == pytest.approx((64 + 164) / 1.12)


def test_dma_lanes_follow_partitions():
    "One DMA engine per 8 partitions (the DMA guide: a 4-partition load runs on one engine, 128 partitions on 16)."
    for P, k in ((4, 1), (8, 1), (9, 2), (20, 3), (128, 16)):
        @kernel
        def load(x):
            a = nl.ndarray((P, 1024), nl.float32, buffer=nl.sbuf, name='a')
            nisa.dma_copy(a, x)
            return x
        c = instruction_cost(_trace(load, np.ones((P, 1024), np.float32)).instructions[0], 'trn2')
        assert c.lanes == k and c.runs == P
        assert c.ns == pytest.approx(2000 + 150 + P * 16 / k + P * 1024 * 4 / (k * 27.2))


@kernel
def _one_matmul(x):
    a = nl.ndarray((128, 128), x.dtype, buffer=nl.sbuf, name='a')
    b = nl.ndarray((128, 500), x.dtype, buffer=nl.sbuf, name='b')
    o = nl.ndarray((128, 500), nl.float32, buffer=nl.psum, name='o')
    nisa.memset(a, 1.0); nisa.memset(b, 1.0)
    nisa.nc_matmul(o, a, b)
    t = nl.ndarray((128, 128), x.dtype, buffer=nl.psum, name='t')       # the ISA reference: a transpose keeps its dtype
    nisa.nc_transpose(t, a)
    return x


@pytest.mark.parametrize("target,ghz,tf32", [('trn1', 2.8, 4), ('trn2', 2.4, 2), ('trn3', 2.4, 2)])
def test_pe_array_price(target, ghz, tf32):
    # one moving column per Tensor cycle in bf16, 4x that in fp32 (the guides); a transpose moves 128 columns
    for dt, f, ft in ((nl.float32, 4, tf32), (nl.bfloat16, 1, 1)):
        tr = _trace(_one_matmul, np.ones(1, dt))
        s = predict(tr, target)
        mm, tp = s.slots[2], s.slots[3]
        assert mm.engine == 'Tensor' and mm.cost.ns == pytest.approx((60 + f * 500) / ghz)
        assert tp.cost.ns == pytest.approx((60 + ft * 128) / ghz)
        # the matmul waits for the second memset (independent memsets run back to back on Vector)
        vec = COST_MODELS[target].vector_elems_per_cycle[np.dtype(dt).itemsize] / 128
        assert mm.start_ns == pytest.approx((120 + (128 + 500) / vec) / COST_MODELS[target].clock_ghz['Vector'])


def test_pe_tflops_match_the_guides():
    assert pe_tflops(cost_model('trn1')) == pytest.approx(92, abs=0.5)
    assert pe_tflops(cost_model('trn1'), 'float32') == pytest.approx(23, abs=0.5)
    for t in ('trn2', 'trn3'):
        assert pe_tflops(cost_model(t)) == pytest.approx(79, abs=0.5)
        assert pe_tflops(cost_model(t), 'float32') == pytest.approx(20, abs=0.5)


def test_evacuation_streams_at_the_psum_rate():
    @kernel
    def k(x):
        a = nl.ndarray((128, 128), nl.bfloat16, buffer=nl.sbuf, name='a')
        o = nl.ndarray((128, 400), nl.float32, buffer=nl.psum, name='o')
        r = nl.ndarray((128, 400), nl.bfloat16, buffer=nl.sbuf, name='r')
        nisa.memset(a, 1.0)
        nisa.nc_matmul(o, a, a.ap([[128, 128], [0, 400]]))
        nisa.tensor_copy(r, o)
        return x
    tr = _trace(k, np.ones(1, np.float32))
    cp = tr.instructions[-1]
    assert (cp.srcs[0].dtype, cp.dst.dtype, cp.dtype) == ('float32', 'bfloat16', 'bfloat16')   # each operand's own dtype
    assert instruction_cost(cp, 'trn2').stream_ns == pytest.approx(400 / 2 / 0.96)
    assert instruction_cost(cp, cost_model('trn2', vector_rates='modes')).stream_ns \
        == pytest.approx(400 / 0.96)                   # 'modes': a copy from fp32 PSUM gets no lift


@pytest.mark.parametrize("dt", ['float32', 'bfloat16', 'float16'])
def test_operand_dtypes_are_the_tensors_own(dt):
    """Every operand record carries its tensor's dtype: the writer's dtype for a tensor an instruction wrote, and its own
    for one nothing in the trace wrote (an input, or a tile filled with .write)."""
    npdt = np.dtype(nl.bfloat16 if dt == 'bfloat16' else dt)
    rng = np.random.default_rng(0)
    with trace() as tr:
        simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, rng.standard_normal((2, 200, 1, 300)).astype(npdt),
                        rng.standard_normal((200, 1, 1, 5)).astype(npdt), ((0, 0), (2, 2)), out_shape=(2, 200, 1, 300))
        simulate_kernel(conv2d_depthwise_f01b_o01i_bf01, rng.standard_normal((130, 9, 7, 2)).astype(npdt),
                        rng.standard_normal((130, 3, 3, 1)).astype(npdt), ((1, 1), (1, 1)), lhs_dilation=(2, 1))
    writers = {i.dst.tensor_id: i.dtype for i in tr.instructions}
    operands = [a for i in tr.instructions for a in (i.dst, *i.srcs)]
    assert {a.dtype for a in operands} == {dt}
    assert all(a.dtype == writers[a.tensor_id] for a in operands if a.tensor_id in writers)
    with use_core(NeuronCore()):
        x = nl.ndarray((4, 6), nl.bfloat16, buffer=nl.sbuf, name='x'); x.write(np.ones((4, 6)))
        y = nl.ndarray((4, 6), nl.float32, buffer=nl.sbuf, name='y')
        with trace() as t2: nisa.tensor_copy(y, x)
    (cp,) = t2.instructions
    assert (cp.srcs[0].dtype, cp.dtype) == ('bfloat16', 'float32')     # x was never written by an instruction


def test_wide_innermost_step_halves_vector_bandwidth():
    @kernel
    def k(x):
        a = nl.ndarray((128, 400), nl.float32, buffer=nl.sbuf, name='a')
        nisa.memset(a.ap([[400, 128], [4, 100]]), 0.0)        # 16-byte step: full rate
        nisa.memset(a.ap([[400, 128], [5, 80]]), 0.0)         # 20-byte step: half rate
        return x
    tr = _trace(k, np.ones(1, np.float32))
    assert [instruction_cost(i, 'trn1').stream_ns for i in tr.instructions] == pytest.approx([100 / 1.12, 2 * 80 / 1.12])


def _addresses(acc):
    "Every address of access `acc` in walk order, with its partition (0 for HBM)."
    idx = np.indices([n for _, n in acc.pattern]).reshape(len(acc.pattern), -1)
    addr = acc.offset + sum(i * s for i, (s, _) in zip(idx, acc.pattern))
    part = idx[0] if acc.buffer in ('sbuf', 'psum') else np.zeros_like(addr)
    return addr, part


def _brute_runs(ins):
    "Runs of a transfer counted element by element: a run breaks where either side's next address is not +1."
    (da, dp), (sa, sp) = _addresses(ins.dst), _addresses(ins.srcs[0])
    cont = (np.diff(da) == 1) & (np.diff(sa) == 1) & (np.diff(dp) == 0) & (np.diff(sp) == 0)
    return 1 + int((~cont).sum())


@settings(max_examples=60, deadline=None)
@given(P=st.integers(1, 8), A=st.integers(1, 6), B=st.integers(1, 7), perm=st.permutations([0, 1, 2]),
       sl=st.tuples(st.integers(0, 2), st.integers(1, 3)), pad=st.integers(0, 3))
def test_dma_runs_match_a_brute_force_count(P, A, B, perm, sl, pad):
    "HBM (P, A, B) sliced and its axes permuted, into an SBUF tile of the permuted shape (with `pad` spare columns)."
    x = np.arange(P * A * (B + 2), dtype=np.float32).reshape(P, A, B + 2)
    start, step = sl
    b = len(range(start, B + 2, step))
    dims = [[A * (B + 2), P], [B + 2, A], [step, b]]
    src_dims = [dims[i] for i in perm]
    shape = [d[1] for d in src_dims]

    @kernel
    def k(x):
        t = nl.ndarray((shape[0], shape[1] * shape[2] + pad), nl.float32, buffer=nl.sbuf, name='t')
        nisa.dma_copy(t.ap([[shape[1] * shape[2] + pad, shape[0]], [shape[2], shape[1]], [1, shape[2]]]),
                      x.ap(src_dims, offset=start))
        return x
    ins = _trace(k, x).instructions[0]
    if step == 1: assert dma_runs(ins) == _brute_runs(ins)
    else: assert dma_runs(ins) >= _brute_runs(ins)     # a seam between dimensions counts even where addresses touch


def test_runs_of_the_dense_weight_load_are_single_elements():
    from dwlit.contenders.dense_pe import conv1d_dense_on_pe_array, depthwise_as_dense
    f = np.ones((16, 1, 1, 3), np.float32)
    tr = _trace(conv1d_dense_on_pe_array, np.ones((1, 16, 1, 20), np.float32), depthwise_as_dense(f), ((0, 0), (0, 0)),
                (1, 16, 1, 18))
    w = tr.instructions[0]
    assert contiguous_run(w.srcs[0]) == 1 and dma_runs(w) == 16 * 16 * 3


def test_bad_input_errors():
    with pytest.raises(SimulatorError, match="target must be one of"): cost_model('trn9')
    with pytest.raises(SimulatorError, match="vector_rates must be one of 'widths', 'modes'"): cost_model('trn2', vector_rates=1)
    with pytest.raises(SimulatorError, match="unknown cost-model field 'speed'"): cost_model('trn2', speed=2)
    with pytest.raises(ValueError, match="dtype must be"): dtype_bytes(object())
    assert dtype_bytes('bfloat16') == 2 and dtype_bytes('float32') == 4
    assert set(COST_MODELS) == {'trn1', 'trn2', 'trn3'}


# --- the conventions: every field marked, each varied field doing what its row says ---------------------------------

def test_every_field_is_marked_cited_or_assumed_at_its_definition():
    import inspect
    import re

    import dwlit.analysis.cost
    from dwlit.analysis.cost import CONVENTIONS, CostModel
    fields = [f for f in CostModel.__dataclass_fields__ if f != 'target']
    assert sorted(CONVENTIONS) == sorted(fields)
    comments = dict(re.findall(r"^    (\w+): [^#\n]*# (CITED|ASSUMED)\b", inspect.getsource(dwlit.analysis.cost.CostModel), re.M))
    assert {f: CONVENTIONS[f][0] for f in fields} == {f: comments.get(f) for f in fields}
    assert all(s in ('CITED', 'ASSUMED') for s, _, _ in CONVENTIONS.values())
    # every anchor named is an entry of the sources chapter
    import json
    import pathlib
    src = ''.join(''.join(c['source']) for c in json.loads(
        (pathlib.Path(__file__).parent.parent / 'nbs' / 'reference' / '37_sources.ipynb').read_text())['cells'])
    anchors = set(re.findall(r'<a id="([\w-]+)"></a>', src))
    assert {a for _, aa, _ in CONVENTIONS.values() for a in aa.split()} <= anchors


def _matmul_trace(N, dt=nl.bfloat16):
    @kernel
    def k(x):
        a = nl.ndarray((128, 128), dt, buffer=nl.sbuf, name='a')
        b = nl.ndarray((128, N), dt, buffer=nl.sbuf, name='b')
        o = nl.ndarray((128, N), nl.float32, buffer=nl.psum, name='o')
        nisa.memset(a, 1.0); nisa.memset(b, 1.0)
        nisa.nc_matmul(o, a, b)
        return x
    return _trace(k, np.ones(1, np.float32)).instructions[-1]


@pytest.mark.parametrize("N", [16, 64, 100, 500])
def test_pe_access_start_zero_is_the_guides_max_n_64(N):
    mm = _matmul_trace(N)
    assert instruction_cost(mm, 'trn1').ns == pytest.approx(max(60 + N, 64) / 2.8)           # the default: 60 + N
    assert instruction_cost(mm, cost_model('trn1', pe_access_start=0)).ns == pytest.approx(max(N, 64) / 2.8)
    mm32 = _matmul_trace(N, nl.float32)
    assert instruction_cost(mm32, cost_model('trn2', pe_access_start=0)).ns == pytest.approx(max(4 * N, 64) / 2.4)


def test_access_start_and_penalty_rule():
    @kernel
    def k(x):
        a = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, name='a')
        b = nl.ndarray((128, 300), nl.float32, buffer=nl.sbuf, name='b')
        nisa.memset(a, 1.0); nisa.memset(b, 1.0)
        nisa.tensor_tensor(a, a, a, nl.add)          # N=64 (small); not dependent: the memset before it wrote b
        nisa.tensor_tensor(b, b, b, nl.add)          # N=300, not dependent on the previous (it wrote a)
        nisa.tensor_tensor(b, b, b, nl.add)          # N=300, dependent
        return x
    tr = _trace(k, np.ones(1, np.float32))
    def vec_ns(**ch): return [x.cost.ns * 1.12 for x in predict(tr, 'trn1', **ch).slots[2:]]
    # streaming on trn1, fp32 tensor_tensor 2N: 128, 600, 600 cycles; the default charges 60 and, when dependent, 100
    assert vec_ns() == pytest.approx([60 + 128, 60 + 600, 160 + 600])
    assert vec_ns(access_start=0) == pytest.approx([128, 600, 100 + 600])
    assert vec_ns(dependent_penalty=0) == pytest.approx([60 + 128, 60 + 600, 60 + 600])
    assert vec_ns(penalty_rule='small dependent') == pytest.approx([60 + 128, 60 + 600, 60 + 600])
    assert vec_ns(penalty_rule='dependent or small') == pytest.approx([160 + 128, 60 + 600, 160 + 600])


def test_step0_contiguous_opens_the_bf16_fast_path():
    @kernel
    def k(x):
        a = nl.ndarray((128, 200), nl.bfloat16, buffer=nl.sbuf, name='a')
        f = nl.ndarray((128, 3), nl.bfloat16, buffer=nl.sbuf, name='f')
        nisa.memset(a, 2.0); nisa.memset(f, 1.0)
        nisa.tensor_tensor(a, a, f.ap([[3, 128], [0, 200]]), nl.multiply)
        return x
    mul = _trace(k, np.ones(1, np.float32)).instructions[-1]
    assert instruction_cost(mul, 'trn1').stream_ns * 1.12 == pytest.approx(400)          # 2N: broadcast not contiguous
    assert instruction_cost(mul, cost_model('trn1', step0_contiguous=True)).stream_ns * 1.12 == pytest.approx(200)


def test_dma_issue_keeps_its_engines_busy():
    @kernel
    def load(x):
        a = nl.ndarray((4, 4096), nl.bfloat16, buffer=nl.sbuf, name='a')
        nisa.dma_copy(a, x)
        return x
    ins = _trace(load, np.ones((4, 4096), nl.bfloat16)).instructions[0]
    base = instruction_cost(ins, 'trn2')
    assert base.busy_ns == pytest.approx(150 + 4 * 16 + 4 * 4096 * 2 / 27.2)              # the profiled 1416 ns load
    assert instruction_cost(ins, cost_model('trn2', dma_issue_ns=600)).busy_ns == pytest.approx(base.busy_ns + 600)


# --- argument checks of the cost model (each case below crashed or answered before the checks) ----------------------

@kernel
def _small(x):
    a = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, name='a')
    nisa.dma_copy(a, x); nisa.memset(a, 0.0)
    return x


@pytest.fixture(scope='module')
def small_trace():
    return _trace(_small, np.ones((128, 64), np.float32))


@pytest.mark.parametrize("dtype", ['int4', 'int8', 'float64', 'fp32', np.int32, object, None])
def test_pe_tflops_knows_its_dtypes(dtype):
    with pytest.raises(SimulatorError, match="pe_tflops: dtype must be one of 'float32', 'float16', 'bfloat16'"):
        pe_tflops(cost_model('trn2'), dtype)


def test_pe_tflops_wants_a_model():
    with pytest.raises(TypeError, match="pe_tflops: model must be a CostModel"): pe_tflops('trn2')
    assert pe_tflops(cost_model('trn2'), nl.bfloat16) == pytest.approx(4 * pe_tflops(cost_model('trn2'), np.float32))


def test_instruction_cost_checks_its_arguments(small_trace):
    dma = small_trace.instructions[0]
    with pytest.raises(TypeError, match="ins must be an Instruction"): instruction_cost('dma_copy')
    with pytest.raises(TypeError, match="dependent must be True or False"): instruction_cost(dma, 'trn1', dependent='yes')
    with pytest.raises(SimulatorError, match="target must be one of 'trn1', 'trn2', 'trn3'"): instruction_cost(dma, 'trn7')


def test_a_hand_built_model_is_checked_too():
    from dwlit.analysis.cost import CostModel
    with pytest.raises(SimulatorError, match="dma_engine_gbps must be > 0"):
        CostModel('mine', dict(Tensor=1, Vector=1, Scalar=1, GpSimd=1), {2: 128, 4: 128}, 0, 4.0)


# --- tensor_scalar and the Scalar engine (the ISA reference: max(MIN_II, N) cycles on Vector or Scalar) -------------

@kernel
def _per_partition(x, dt):
    a = nl.ndarray((128, 300), dt, buffer=nl.sbuf, name='a')
    f = nl.ndarray((128, 1), nl.float32, buffer=nl.sbuf, name='f')
    o, q = nl.ndarray((128, 300), dt, buffer=nl.sbuf), nl.ndarray((128, 300), dt, buffer=nl.sbuf)
    nisa.memset(a, 1.0); nisa.memset(f, 2.0)
    nisa.tensor_scalar(o, a, nl.multiply, f)                                           # Vector
    nisa.tensor_scalar(q, a, nl.multiply, f, engine=nisa.engine.scalar)                # Scalar
    nisa.activation(q, nl.copy, a, scale=f)                                            # Scalar
    return x


@pytest.mark.parametrize("target,dt,vec,vec_modes,ghz_v,ghz_s", [
    ('trn1', 'float32', 300, 300, 1.12, 1.4), ('trn1', 'bfloat16', 300, 300, 1.12, 1.4),
    ('trn2', 'float32', 150, 300, 0.96, 1.2),        # 'widths': 256 fp32 lanes; 'modes': no lift for fp32
    ('trn2', 'bfloat16', 75, 75, 0.96, 1.2),         # 512 lanes; the 4x mode (SBUF, 2-byte, contiguous)
    ('trn3', 'bfloat16', 75, 75, 1.2, 1.2)])
def test_tensor_scalar_and_activation_prices_by_hand(target, dt, vec, vec_modes, ghz_v, ghz_s):
    tr = _trace(_per_partition, np.ones(1, np.float32), getattr(nl, dt))
    ts_v, ts_s, act = tr.instructions[2:]
    assert (ts_v.engine, ts_s.engine, act.engine) == ('Vector', 'Scalar', 'Scalar')
    assert instruction_cost(ts_v, target).stream_ns == pytest.approx(vec / ghz_v)   # the fp32 scalar operand is not streamed
    assert instruction_cost(ts_v, cost_model(target, vector_rates='modes')).stream_ns == pytest.approx(vec_modes / ghz_v)
    for i in (ts_s, act):                                                               # Scalar: 128 lanes, N cycles
        assert instruction_cost(i, target).ns == pytest.approx((60 + 300) / ghz_s)
    s = predict(tr, target)
    assert s.slots[3].start_ns < s.slots[2].end_ns          # Vector and Scalar work side by side (both only read a, f)


def test_gpsimd_prices_by_hand():
    "The GpSimd engine: N / gpsimd_elems_per_cycle (ASSUMED 1), twice that for two inputs, at its cited clock."
    @kernel
    def k(x):
        a = nl.ndarray((128, 300), nl.float32, buffer=nl.sbuf, name='a')
        nisa.memset(a, 0.0, engine=nisa.engine.gpsimd)
        nisa.tensor_tensor(a, a, a, nl.multiply, engine=nisa.engine.gpsimd)
        nisa.iota(a, [[1, 300]], 0)
        return x
    ms, tt, io = _trace(k, np.ones(1, np.float32)).instructions
    assert {i.engine for i in (ms, tt, io)} == {'GpSimd'}
    for target, ghz in (('trn1', 1.4), ('trn2', 1.2), ('trn3', 1.2)):
        assert instruction_cost(ms, target).ns == pytest.approx((60 + 300) / ghz)
        assert instruction_cost(tt, target).ns == pytest.approx((60 + 600) / ghz)
        assert instruction_cost(io, target).ns == pytest.approx((60 + 300) / ghz)
    slow = cost_model('trn1', gpsimd_elems_per_cycle=0.25)
    assert instruction_cost(tt, slow).stream_ns == pytest.approx(4 * 600 / 1.4)
    with pytest.raises(SimulatorError, match="gpsimd_elems_per_cycle must be > 0"): cost_model('trn1', gpsimd_elems_per_cycle=0)


def test_engines_without_a_cost_rule_are_refused():
    from dwlit.sim.checks import NotModelledError
    @kernel(platform_target='trn3')
    def k(x):
        a = nl.ndarray((128, 64), nl.float32, buffer=nl.sbuf, name='a')
        nisa.activation(a, nl.exp, a, engine=nisa.engine.gpsimd)      # trn3's GpSimd runs activations; no rule for it
        return x
    (act,) = _trace(k, np.ones(1, np.float32)).instructions
    with pytest.raises(NotModelledError, match="no cost rule for op='activation' on engine 'GpSimd'"): instruction_cost(act)


def test_every_function_checks_what_it_is_given():
    "A record of a trace, a model, a number: each refused by name when it is something else (never an AttributeError)."
    from dwlit.analysis.cost import (
        dma_lanes,
        fixed_cycles,
        gpsimd_cycles,
        isa_cycles,
        pe_cycles,
        perf_mode_lift,
        scalar_cycles,
    )
    ins = _trace(_vector_ops, np.ones((128, 300), np.float32), nl.float32).instructions[2]
    m = cost_model('trn1')
    calls = [(lambda: contiguous_run(None), 'acc'), (lambda: dma_runs(None), 'ins'), (lambda: isa_cycles('x'), 'ins'),
             (lambda: perf_mode_lift(3), 'ins'), (lambda: vector_cycles(None, m), 'ins'), (lambda: vector_cycles(ins, None), 'model'),
             (lambda: scalar_cycles(ins, 'trn1'), 'model'), (lambda: pe_cycles(None, m), 'ins'), (lambda: gpsimd_cycles(ins, {}), 'model'),
             (lambda: dma_lanes(ins, None), 'model'), (lambda: fixed_cycles(None, m, 1.0), 'ins'),
             (lambda: fixed_cycles(ins, None, 1.0), 'model'), (lambda: fixed_cycles(ins, m, 'abc'), 'stream'),
             (lambda: fixed_cycles(ins, m, True), 'stream'), (lambda: fixed_cycles(ins, m, 1.0, dependent='no'), 'dependent')]
    for call, arg in calls:
        with pytest.raises(SimulatorError, match=rf"\b{arg}\b"): call()
