"""The contract of the one fast path (`dwlit.sim.replay`, appendix 34): a replayed launch gives the bits a simulated one
gives, on random shapes, dtypes, paddings, dilations and program counts of the book's kernels; and a launch that
may not be replayed (traced, `cores=`, a kernel that does not ask for it, an argument it cannot key) is simulated every
time. The replay is an executor behind the launcher's seam (`dwlit.sim.launch`); these tests are its contract."""
import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dwlit import get_target, kernel, nisa, nl, simulate_kernel, trace
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01 as conv1d
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01 as conv2d
from dwlit.sim import replay
from dwlit.sim.isa import elementwise, reduce_last
from dwlit.sim.launch import SIMULATE, Job, executor_for
from dwlit.sim.replay import REPLAY, Fused, Step, signature

DTYPES = (np.float32, np.float16, ml_dtypes.bfloat16)
SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def bits(a): return np.ascontiguousarray(a).view(np.uint8)

def same_bits(a, b): return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(bits(a), bits(b))

def simulated(kernel, *args, **kw):
    "The launch simulated in full: `cores=` keeps it from being replayed."
    return simulate_kernel(kernel, *args, cores=[], **kw)

def recorded(kernel, *args, **kw):
    "Launch `kernel` twice from nothing kept: the first launch is only seen, the second is recorded; its result."
    REPLAY.forget()
    simulate_kernel(kernel, *args, **kw)
    assert not REPLAY.programs, "a first launch was recorded"
    return simulate_kernel(kernel, *args, **kw)


def first_then_replayed(kernel, make_args, **kw):
    "(replayed result, simulated result) of a launch with new data, after two launches recorded the signature."
    recorded(kernel, *make_args(0), **kw)
    (program,) = REPLAY.programs.values()
    args = make_args(1)
    again = simulate_kernel(kernel, *args, **kw)
    assert program.runs == 1, "the third launch was not replayed"
    return again, simulated(kernel, *args, **kw)


@SETTINGS
@given(N=st.integers(1, 3), C=st.integers(1, 300), W=st.integers(1, 700), W_f=st.integers(1, 40),
       pad=st.tuples(st.integers(0, 4), st.integers(0, 4)), programs=st.integers(1, 3), dt=st.sampled_from(DTYPES))
def test_a_replayed_1d_launch_gives_the_simulated_bits(N, C, W, W_f, pad, programs, dt):
    W_out = W + sum(pad) - W_f + 1
    assume(W_out >= 1)
    def make(seed):
        rng = np.random.default_rng(seed)
        return (rng.standard_normal((N, C, 1, W)).astype(dt), rng.standard_normal((C, 1, 1, W_f)).astype(dt),
                ((0, 0), pad))
    try: simulated(conv1d, *make(0), out_shape=(N, C, 1, W_out), num_programs=programs)
    except ValueError: assume(False)           # outside the kernel's contract: refused, never recorded
    again, full = first_then_replayed(conv1d, make, out_shape=(N, C, 1, W_out), num_programs=programs)
    assert same_bits(again, full)


@SETTINGS
@given(C=st.integers(1, 200), N=st.integers(1, 2), H=st.integers(1, 12), W=st.integers(1, 12), k=st.integers(1, 4),
       dil=st.integers(1, 3), p=st.integers(0, 2), dt=st.sampled_from(DTYPES))
def test_a_replayed_2d_launch_gives_the_simulated_bits(C, N, H, W, k, dil, p, dt):
    def make(seed):
        rng = np.random.default_rng(seed)
        return (rng.standard_normal((C, H, W, N)).astype(dt), rng.standard_normal((C, k, k, 1)).astype(dt),
                ((p, p), (p, p)))
    try: simulated(conv2d, *make(0), lhs_dilation=(dil, dil))
    except ValueError: assume(False)
    again, full = first_then_replayed(conv2d, make, lhs_dilation=(dil, dil))
    assert same_bits(again, full)


def small_1d(seed, W=50):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((1, 8, 1, W)).astype(np.float32), rng.standard_normal((8, 1, 1, 3)).astype(np.float32), ((0, 0), (1, 1))


def long_filter_1d(seed):
    "A 1D launch with 31 taps, long enough that another summation order changes low bits."
    img, _, _ = small_1d(seed, 400)
    return img, np.random.default_rng(9).standard_normal((8, 1, 1, 31)).astype(np.float32), ((0, 0), (15, 15))


def test_the_contract_catches_a_replay_that_sums_in_another_order(monkeypatch):
    "Shown failing: a replay whose reduce adds the taps pairwise (NumPy's own sum) is caught by the bit comparison."
    def pairwise(ufunc, data, k, negate, dst): dst.array[...] = data.array.sum(axis=-1, dtype=np.float32).reshape(dst.shape)
    real = replay.step_of
    monkeypatch.setattr(replay, 'step_of', lambda i: Step(pairwise, real(i).args) if i.op == 'tensor_reduce' else real(i))
    monkeypatch.setattr(replay, '_fused', lambda issued, steps, kept: steps)        # every reduce a step of its own
    again, full = first_then_replayed(conv1d, long_filter_1d, out_shape=(1, 8, 1, 400))
    assert not same_bits(again, full)


def test_the_contract_catches_a_fused_step_that_sums_in_another_order(monkeypatch):
    "Shown failing: a multiply-and-reduce step that sums its products pairwise is caught by the bit comparison."
    def pairwise(self):
        (a, b), = self.pieces
        prods = a.array.reshape(self.shape) * b.array.reshape(self.shape)
        self.dst.array[...] = prods.sum(axis=-1, dtype=np.float32).reshape(self.dst.shape)
    monkeypatch.setattr(Fused, 'run', pairwise)
    again, full = first_then_replayed(conv1d, long_filter_1d, out_shape=(1, 8, 1, 400))
    assert not same_bits(again, full)


def test_the_book_kernels_multiply_and_reduce_in_one_step():
    """Each reduce of the 1D and 2D kernels and the multiplies it reads (one in 1D, one per tap in 2D) are one step,
    and the 1D chunks and 2D output rows, which differ by constant shifts, are joined into runs."""
    for kern, args, kw in ((conv1d, long_filter_1d(0), dict(out_shape=(1, 8, 1, 400))),
                             (conv2d, (np.ones((8, 5, 5, 2), np.float32), np.ones((8, 3, 3, 1), np.float32), ((1, 1), (1, 1))),
                              dict(lhs_dilation=(2, 2)))):
        with trace() as tr: simulate_kernel(kern, *args, **kw)
        recorded(kern, *args, **kw)
        (program,) = REPLAY.programs.values()
        assert not any(isinstance(s, Fused) for s in program.steps)           # joined only when first replayed
        simulate_kernel(kern, *args, **kw)
        fused = [s for s in program.steps if isinstance(s, Fused)]
        assert not any(isinstance(s, Step) and s.fn in (elementwise, reduce_last) for s in program.steps)  # all fused
        assert 0 < len(fused) < len(tr.where(op='tensor_reduce'))                           # runs were joined


@kernel(replay=True)
def chained(x, w):
    "Eight multiply-and-reduce pairs, each reading what the ones before wrote: a running weighted sum along a row."
    P, F = x.shape
    xs = nl.ndarray((P, F + 8), x.dtype, buffer=nl.sbuf, name='xs')
    ws, prod = nl.ndarray((P, 4), x.dtype, buffer=nl.sbuf), nl.ndarray((P, 4), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs[:, 0:F], src=x); nisa.dma_copy(dst=ws, src=w)
    for i in range(8):
        nisa.tensor_tensor(dst=prod, data1=xs[:, F - 4 + i:F + i], data2=ws, op=nl.multiply)
        nisa.tensor_reduce(dst=xs[:, F + i:F + i + 1], op=nl.add, data=prod, axis=1)
    out = nl.ndarray((P, F + 8), x.dtype, buffer=nl.shared_hbm, name='out')
    nisa.dma_copy(dst=out, src=xs)
    return out


def chained_reference(x, w):
    row = [list(r) for r in x]
    for r, wr in zip(row, w):
        for _i in range(8): r.append(np.float32(sum(np.float32(a * b) for a, b in zip(r[-4:], wr))))
    return np.array(row, np.float32)


def test_steps_that_read_what_earlier_ones_wrote_are_not_joined(monkeypatch):
    "The steps of `chained` differ by constant shifts, but each reads the row the earlier ones write: never one run."
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((2, 6)).astype(np.float32), rng.standard_normal((2, 4)).astype(np.float32)
    recorded(chained, x, w)
    (program,) = REPLAY.programs.values()
    again = simulate_kernel(chained, x + 1, w)
    assert sum(isinstance(s, Fused) for s in program.steps) == 8                        # fused, one step each
    assert program.runs == 1 and np.allclose(again, chained_reference(x + 1, w), rtol=1e-5)
    assert same_bits(again, simulated(chained, x + 1, w))
    monkeypatch.setattr(replay, '_joinable', lambda views, n, deltas: True)           # shown failing: joined anyway
    recorded(chained, x, w)
    assert not same_bits(simulate_kernel(chained, x + 1, w), simulated(chained, x + 1, w))


@kernel(replay=True)
def product_kept(x, w):
    "Multiplies x by w into a tile, reduces it, and also copies the tile out: the product is read twice."
    P, F = x.shape
    xs, ws, prod = (nl.ndarray((P, F), x.dtype, buffer=nl.sbuf) for _ in range(3))
    s = nl.ndarray((P, 1), x.dtype, buffer=nl.sbuf, name='s')
    nisa.dma_copy(dst=xs, src=x); nisa.dma_copy(dst=ws, src=w)
    nisa.tensor_tensor(dst=prod, data1=xs, data2=ws, op=nl.multiply)
    nisa.tensor_reduce(dst=s, op=nl.add, data=prod, axis=1)
    out = nl.ndarray((P, F + 1), x.dtype, buffer=nl.shared_hbm, name='out')
    nisa.dma_copy(dst=out[:, 0:F], src=prod); nisa.dma_copy(dst=out[:, F:F + 1], src=s)
    return out


def test_a_product_another_instruction_reads_is_stored(monkeypatch):
    "The multiply and reduce of `product_kept` stay two steps, since a copy reads the product too; its replay is right."
    x, w = np.arange(12, dtype=np.float32).reshape(3, 4), np.full((3, 4), 0.5, np.float32)
    recorded(product_kept, x, w)
    (program,) = REPLAY.programs.values()
    again = simulate_kernel(product_kept, x + 1, w)
    assert program.runs == 1 and not any(isinstance(s, Fused) for s in program.steps)
    assert same_bits(again, np.concatenate([(x + 1) * w, ((x + 1) * w).sum(axis=1, keepdims=True)], axis=1))


def test_the_recorded_result_is_not_written_by_a_replay():
    first = recorded(conv1d, *small_1d(0), out_shape=(1, 8, 1, 50))
    kept = first.copy()
    simulate_kernel(conv1d, *small_1d(1), out_shape=(1, 8, 1, 50))
    assert same_bits(first, kept)


@kernel(replay=True)
def half_copy(x):
    "A kernel that writes the first row of its output only: the rest stays as a launch leaves it, NaN."
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm, name='out')
    t = nl.ndarray((1, x.shape[1]), x.dtype, buffer=nl.sbuf, name='t')
    nisa.dma_copy(dst=t, src=x[0:1, :]); nisa.dma_copy(dst=out[0:1, :], src=t)
    return out


def test_unwritten_memory_starts_as_nan_again(monkeypatch):
    "Every tensor a launch touches starts NaN-filled; a replay fills them again, so nothing of an earlier run shows."
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    first = recorded(half_copy, x)
    program = next(iter(REPLAY.programs.values()))
    for storage, _ in program.fresh: storage[...] = 7.0          # what a replay that skipped the fill would start from
    again = simulate_kernel(half_copy, x + 1)
    assert program.runs == 1 and same_bits(again[0], x[0] + 1)
    assert np.isnan(first[1:]).all() and np.isnan(again[1:]).all()


def test_launches_that_are_simulated_every_time():
    img, flt, pad = small_1d(0)
    REPLAY.forget()
    with trace() as tr: simulate_kernel(conv1d, img, flt, pad, out_shape=(1, 8, 1, 50))
    assert len(tr) > 0 and not REPLAY.programs and not REPLAY.seen               # traced: not even seen
    recorded(conv1d, img, flt, pad, out_shape=(1, 8, 1, 50))
    with trace() as tr: simulate_kernel(conv1d, img, flt, pad, out_shape=(1, 8, 1, 50))
    assert len(tr) > 0 and next(iter(REPLAY.programs.values())).runs == 0       # a traced launch issues everything
    cores = []
    simulate_kernel(conv1d, img, flt, pad, out_shape=(1, 8, 1, 50), cores=cores)
    assert len(cores) == 1 and next(iter(REPLAY.programs.values())).runs == 0   # cores= asks for the cores: simulated

    def copy_kernel(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm, name='out')
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name='t')
        nisa.dma_copy(dst=t, src=x); nisa.dma_copy(dst=out, src=t)
        return out
    REPLAY.forget()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert same_bits(simulate_kernel(copy_kernel, x), x) and not REPLAY.programs  # it did not ask for replay
    assert executor_for(copy_kernel) is SIMULATE and executor_for(conv1d) is REPLAY
    unkeyable = type('Bound', (), {'arguments': {'img': object()}})()
    assert signature(Job(conv1d.func, unkeyable, [], [], 1, get_target(), None)) is None   # an argument it cannot key


def test_another_argument_is_another_signature():
    REPLAY.forget()
    img, flt, _ = small_1d(0)
    for _ in range(2):                                    # each signature seen, then recorded: none replayed
        a = simulate_kernel(conv1d, img, flt, ((0, 0), (1, 1)), out_shape=(1, 8, 1, 50))
        b = simulate_kernel(conv1d, img, flt, ((0, 0), (2, 0)), out_shape=(1, 8, 1, 50))
        c = simulate_kernel(conv1d, img.astype(np.float16), flt.astype(np.float16), ((0, 0), (1, 1)), out_shape=(1, 8, 1, 50))
        d = simulate_kernel(conv1d, img, flt, ((0, 0), (1, 1)), out_shape=(1, 8, 1, 50), num_programs=2)
        assert len(REPLAY.seen) == 4
    assert len(REPLAY.programs) == 4 and all(p.runs == 0 for p in REPLAY.programs.values())
    assert not same_bits(a, b) and c.dtype == np.float16 and same_bits(a, d)


def test_at_most_most_programs_are_kept():
    REPLAY.forget()
    for W in range(20, 20 + REPLAY.most + 3):
        for _ in range(2): simulate_kernel(conv1d, *small_1d(0, W), out_shape=(1, 8, 1, W))
    assert len(REPLAY.programs) == REPLAY.most


def test_a_first_launch_records_nothing_and_at_most_most_seen_signatures_are_remembered(monkeypatch):
    "A signature's first launch is simulated and only remembered (most_seen of them, the oldest forgotten first)."
    REPLAY.forget()
    monkeypatch.setattr(REPLAY, 'most_seen', 3)
    listened = []
    real = replay.listen
    monkeypatch.setattr(replay, 'listen', lambda r: listened.append(r) or real(r))
    for W in range(20, 25): simulate_kernel(conv1d, *small_1d(0, W), out_shape=(1, 8, 1, W))
    assert not listened and not REPLAY.programs                                   # five first launches: nothing recorded
    assert [k[3][0][1][1] for k in REPLAY.seen] == [(1, 8, 1, 22), (1, 8, 1, 23), (1, 8, 1, 24)]   # img shapes, newest 3
    simulate_kernel(conv1d, *small_1d(0, 20), out_shape=(1, 8, 1, 20))           # forgotten: a first launch again
    assert not listened and not REPLAY.programs
    simulate_kernel(conv1d, *small_1d(0, 24), out_shape=(1, 8, 1, 24))           # seen: recorded and kept
    assert len(listened) == 1 and len(REPLAY.programs) == 1


def test_replay_uses_only_public_names_of_the_simulator():
    "The seam: dwlit.sim.replay imports no private name of another module, and the launcher imports nothing of it."
    import ast
    import inspect

    from dwlit.sim import launch
    tree = ast.parse(inspect.getsource(replay))
    private = [f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
               for a in n.names if a.name.startswith('_')]
    assert not private, private
    imported = {f"{n.module}.{a.name}" if isinstance(n, ast.ImportFrom) else a.name
                for n in ast.walk(ast.parse(inspect.getsource(launch))) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in n.names}
    assert not any('replay' in m for m in imported), imported       # the launcher knows executors, not this one
