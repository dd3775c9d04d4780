"""What the simulator remembers to run faster (issue 11, section 3) changes no result, no trace and no error.

A tensor remembers the rule of each access pattern, the pattern and offset of each int/slice index, and the `Access`
record of each operand (chapters 02 and 03). Each test runs the same work with that memory switched off
(`CACHE_SIZE = 0`: nothing is remembered, every call takes the full route) and on, and asserts identical outputs
(bytes), trace records (every field), SBUF/PSUM peaks and error messages. `bench/equiv.py` does the same against a
saved run of the code before the change, on thousands of generated cases.
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
from dwlit.memory import NeuronCore, use_core, ndarray, float32, sbuf, hbm

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]


@contextlib.contextmanager
def no_memory():
    "Nothing remembered inside the block: every pattern, index and record worked out from scratch."
    saved = dwlit.ap.CACHE_SIZE, dwlit.isa.CACHE_SIZE
    dwlit.ap.CACHE_SIZE = dwlit.isa.CACHE_SIZE = 0
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
    "What a tensor remembers holds no reference to it: a viewed, sliced and traced tensor gives its SBUF back at once."
    core = NeuronCore()
    with use_core(core):
        u = ndarray((128, 1000), float32, name='u')
        u.ap([[1000, 128], [1, 10]]); u[:, :5]
        with trace(): nisa.memset(u[:, :5], 0.0)
        assert u._rules and u._slices and u._accesses
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
