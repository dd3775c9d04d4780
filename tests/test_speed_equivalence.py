"""What the simulator remembers to run faster (issue 11, section 3) changes no result, no trace and no error.

Tensors alike in size, partitions, buffer and dtype share the rule of each access pattern; a tensor remembers the
pattern and offset of each int/slice index and the `Access` record of each operand; `tensor_tensor`,
`tensor_reduce`, `memset` and `dma_copy` remember the checked plan of each combination of operand rules (chapters 2
and 3). Each test runs the same work with that memory switched off (`CACHE_SIZE = 0` and the shared tables emptied:
nothing is remembered, every call takes the full route) and on, and asserts identical outputs (bytes), trace records
(every field), SBUF/PSUM peaks and error messages. `bench/equiv.py` does the same against a saved run of the code
before the change, on thousands of generated cases.
"""
import contextlib, gc
import numpy as np
import ml_dtypes
import pytest
from hypothesis import given, settings, strategies as st

import dwlit.ap, dwlit.isa
from dwlit import nl, nisa, trace, simulate_kernel, SimulatorError
from dwlit.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.conv2d import conv2d_depthwise_f01b_o01i_bf01
from dwlit.memory import NeuronCore, use_core, ndarray, float32, sbuf, psum, hbm

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]


SHARED = [dwlit.ap._shared_rules, dwlit.isa._tt_plans, dwlit.isa._reduce_plans, dwlit.isa._memset_plans,
          dwlit.isa._dma_plans]


@contextlib.contextmanager
def no_memory():
    "Nothing remembered inside the block: every pattern, index, record and plan worked out from scratch."
    saved = dwlit.ap.CACHE_SIZE, dwlit.isa.CACHE_SIZE
    dwlit.ap.CACHE_SIZE = dwlit.isa.CACHE_SIZE = 0
    for table in SHARED: table.clear()
    try: yield
    finally: dwlit.ap.CACHE_SIZE, dwlit.isa.CACHE_SIZE = saved


def records(tr):
    "Every field of every record (tensor ids renumbered by first use: they come from a global counter)."
    ids = {}
    def acc(a): return (a.tensor, ids.setdefault(a.tensor_id, len(ids)), a.buffer, a.pattern, a.offset, a.lo, a.hi, a.dtype)
    return [(i.op, i.engine, i.program_id, acc(i.dst), tuple(acc(s) for s in i.srcs), i.partitions, i.free_elems,
             i.dtype, sorted(i.attrs.items()), str(i)) for i in tr.instructions]


def run(fn):
    cores = []
    with trace() as tr:
        try: y = fn(cores)
        except SimulatorError as e: return ('error', type(e).__name__, str(e), records(tr))
    return ('ok', y.dtype.str, y.shape, y.tobytes(), records(tr), [(c.sbuf.peak, c.psum.peak) for c in cores])


def kernels(seed):
    rng = np.random.default_rng(seed)
    dt = DTYPES[seed % 3]
    N, C, W_f = int(rng.integers(1, 3)), int(rng.choice([5, 128, 200, 300])), int(rng.choice([1, 3, 7, 31, 100]))
    W = int(rng.integers(1, 700)); pad = (int(rng.integers(0, 4)), int(rng.integers(0, 4)))
    W_out = W + sum(pad) - W_f + 1
    img = rng.standard_normal((N, C, 1, W)).astype(dt); f = rng.standard_normal((C, 1, 1, W_f)).astype(dt)
    P = int(rng.integers(1, 4))
    yield lambda cores: simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, f, ((0, 0), pad), out_shape=(N, C, 1, W_out),
                                        num_programs=P, cores=cores)
    C2, H, W2 = int(rng.choice([3, 130])), int(rng.integers(1, 20)), int(rng.integers(1, 20))
    k, d = int(rng.integers(1, 5)), int(rng.integers(1, 3))
    img2 = rng.standard_normal((C2, H, W2, 2)).astype(dt); f2 = rng.standard_normal((C2, k, k, 1)).astype(dt)
    yield lambda cores: simulate_kernel(conv2d_depthwise_f01b_o01i_bf01, img2, f2, ((1, 0), (0, 1)), lhs_dilation=(d, 1),
                                        cores=cores)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**20))
def test_kernels_same_with_and_without_memory(seed):
    with_memory = [run(fn) for fn in kernels(seed)]
    with no_memory(): without = [run(fn) for fn in kernels(seed)]
    assert with_memory == without


def _bad_calls(t, ps, P):
    "Good calls and bad ones in between, so that a bad one meets a remembered good one (and the other way round)."
    return [lambda: t.ap([[ps, P], [1, 2]]), lambda: t.ap([[ps, P], [1.0, 2]]), lambda: t.ap([[ps, P], [True, 2]]),
            lambda: t.ap([[ps, P], [1, 2]], offset=ps - 1), lambda: t.ap([[ps, P], [1, 2]], offset=-1),
            lambda: t.ap([[ps, P], [1, 2]], offset=2.0), lambda: t.ap([[ps, P], [1, 2]], offset=10**9),
            lambda: t.ap([[ps + 1, P], [1, 2]]), lambda: t.ap([[ps, P], [1, 0]]), lambda: t.ap([{ps, P}, [1, 2]]),
            lambda: t[:, :2], lambda: t[:, :2.0], lambda: t[:, 1], lambda: t[:, True], lambda: t[0],
            lambda: t[:, np.int64(1)], lambda: t[:, 10**6], lambda: t[:, ::0], lambda: t[:, 1:1], lambda: t[..., 1],
            lambda: t[:, :2][:, 1], lambda: t.ap([[ps, P], [1, 2]])]


def _outcomes(calls):
    out = []
    for c in calls:
        for _ in range(2):                    # twice: what the first call left behind must not change the second
            try: v = c(); out.append(('ok', v.pattern, v.offset, v.shape))
            except (SimulatorError, TypeError, ValueError) as e: out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("buffer", [sbuf, hbm])
def test_bad_calls_same_with_and_without_memory(buffer):
    def go():
        with use_core(NeuronCore()):
            t = ndarray((4, 6), float32, buffer=buffer, name='t')
        return _outcomes(_bad_calls(t, 6 if buffer is sbuf else 1, 4))
    a = go()
    with no_memory(): b = go()
    assert a == b
    assert sum(o[0] == 'ok' for o in a) >= 10 and sum(o[0] != 'ok' for o in a) >= 20


def test_memory_holds_no_tensor():
    "What is remembered holds no reference to a tensor: a viewed, sliced, traced tensor gives its SBUF back at once."
    core = NeuronCore()
    with use_core(core):
        u = ndarray((128, 1000), float32, name='u')
        h = nl.ndarray((128, 10), float32, buffer=hbm, name='h')
        u.ap([[1000, 128], [1, 10]]); u[:, :5]
        with trace():
            nisa.memset(u[:, :5], 0.0); nisa.memset(u[:, 5:10], 1.0)
            nisa.tensor_tensor(u[:, 10:15], u[:, :5], u[:, 5:10], nl.add)        # plans for these rules
            nisa.tensor_reduce(u[:, 15:16], nl.add, u.ap([[1000, 128], [5, 1], [1, 5]], offset=10), axis=2)
            nisa.dma_copy(h, u[:, :10])
        assert u._rules and u._slices and u._accesses
        assert dwlit.isa._tt_plans and dwlit.isa._reduce_plans and dwlit.isa._memset_plans and dwlit.isa._dma_plans
        assert (u.numpy()[:, 10:16] == [1, 1, 1, 1, 1, 5]).all()
        assert core.sbuf.used == 4000
        gc.disable()                          # no cycle collector: only reference counting may release it
        try:
            del u
            assert core.sbuf.used == 0
        finally: gc.enable()


def test_launch_results_never_alias():
    "A launch hands its own output over without a copy: two results, and the input, never share memory."
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    def double(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(t, x); nisa.tensor_tensor(t, t, t, nl.add); nisa.dma_copy(out, t)
        return out
    a, b = simulate_kernel(double, x), simulate_kernel(double, x)
    c = simulate_kernel(lambda x: x, x)                                  # the input's HBM copy, handed back
    assert not np.shares_memory(a, b) and not np.shares_memory(a, x) and not np.shares_memory(c, x)
    a[...] = -1; c[...] = -1
    np.testing.assert_array_equal(b, 2 * x); np.testing.assert_array_equal(x, np.arange(12).reshape(3, 4))
    pair = simulate_kernel(lambda x: (double(x), x), x)                  # items of a tuple: copies
    assert not np.shares_memory(pair[0], pair[1])


def _sequence(seed, cores):
    """A random sequence of instructions over tensors that share geometries (in SBUF, PSUM and HBM, in two dtypes),
    on views of a few patterns (mostly fitting each other, sometimes not), drawn from a pool used again and again
    and made afresh; every call's outcome (None or its error) and every tensor's final contents."""
    r = np.random.default_rng(seed)
    pick = lambda xs: xs[int(r.integers(0, len(xs)))]
    core = NeuronCore(); cores.append(core)
    out = []
    with use_core(core):
        P, a, b = int(r.integers(1, 6)), int(r.integers(1, 4)), int(r.integers(2, 4))
        F = a * b + 2
        dts = [pick(DTYPES), pick(DTYPES)]
        ts = []
        for i, (buf, k) in enumerate([(sbuf, 0), (sbuf, 0), (psum, 0), (hbm, 0), (sbuf, 1), (psum, 1)]):
            t = ndarray((P, F), dts[k], buffer=buf, name=f"t{i}"); t.write(r.standard_normal((P, F))); ts.append(t)
        first = [F, P]                                   # on chip: the partition walk; in HBM: any step
        kinds = {'flat': [[1, a * b]], 'tiles': [[b, a], [1, b]], 'swapped': [[1, b], [b, a]],
                 'windows': [[1, a], [1, b]], 'bcast': [[0, a], [1, b]], 'rows': [[1, a]], 'one': [[1, 1]]}
        def view(kind, t=None):
            t = t or pick(ts)
            return t.ap([first] + kinds[kind], offset=int(r.integers(0, 2)))
        pool = {k: [view(k) for _ in range(2)] for k in kinds}
        v = lambda *ks: (lambda k: pick(pool[k]) if r.integers(0, 3) else view(k))(pick(ks))
        for _ in range(40):
            kind = int(r.integers(0, 5))
            if kind <= 1:
                d, x, y = v('flat', 'tiles', 'swapped'), v('flat', 'tiles', 'swapped', 'windows', 'bcast'), v('tiles', 'windows', 'bcast', 'rows')
                op = pick([nl.multiply, nl.add, nl.subtract, nl.maximum, 'add'])
                call = lambda: nisa.tensor_tensor(d, x, y, op)
            elif kind == 2:
                ax = pick([2, 2, 2, (1, 2), 1])
                d, x = (v('rows') if ax == 2 else v('one', 'rows')), v('tiles', 'windows', 'bcast')
                op, neg = pick([nl.add, nl.add, nl.maximum, nl.minimum]), pick([False, False, True])
                call = lambda: nisa.tensor_reduce(d, op, x, axis=ax, negate=neg)
            elif kind == 3:
                d, val = v('flat', 'tiles', 'rows', 'bcast'), pick([0, 1.5, 2**60, np.float16(3)])
                call = lambda: nisa.memset(d, val)
            else:
                d, x = v('flat', 'tiles', 'swapped', 'rows'), v('flat', 'tiles', 'swapped', 'windows')
                call = lambda: nisa.dma_copy(d, x)
            try: call(); out.append(None)
            except SimulatorError as e: out.append((type(e).__name__, str(e)))
        out += [t.numpy().tobytes() for t in ts]
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**20))
def test_remembered_plans_change_nothing(seed):
    "Plans shared by tensors alike, across buffers, dtypes, ops, axes and bad calls: as if worked out every time."
    def go():
        cores = []
        with trace() as tr: out = _sequence(seed, cores)
        return out, records(tr), [(c.sbuf.peak, c.psum.peak) for c in cores]
    with_memory = go(); again = go()             # the second run finds every plan of the first one remembered
    with no_memory(): without = go()
    assert with_memory == again == without
