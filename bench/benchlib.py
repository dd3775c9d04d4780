"""What the benchmarks share: timing under machine load, the bare replay, shape lists, and the result table.

The bare replay (`Replay`) is the simulator's instruction stream with nothing around it: the instructions of one
traced run, each turned into the NumPy operation the simulator performs for it, one call per instruction, on views
built beforehand. No checks, no records, no access-pattern parsing, no allocation (its tensors exist before it runs).
`traced_replay` proves it is the same stream by comparing its output with the simulator's, bit for bit.
`Replay.allocate` times what a launch must add around it: the inputs copied into HBM and every other tensor allocated
NaN-filled. A repeated launch of the simulator is replayed by `dwlit.sim.replay`, which joins each reduce with the
multiplies it reads and runs of chunks into single steps, so the simulator can be faster than this bare replay.
"""
import importlib
import os
import statistics
import sys
import time

import numpy as np


def set_threads_from_argv(default='1'):
    "Pin BLAS/OpenMP threads before NumPy loads (`--threads N`, default 1: the simulator runs on one core too)."
    n = default
    if '--threads' in sys.argv: n = sys.argv[sys.argv.index('--threads') + 1]
    for var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'): os.environ.setdefault(var, n)
    return int(os.environ['OPENBLAS_NUM_THREADS'])


def set_memory_from_argv(default='reuse'):
    """`--memory reuse` (default): ask glibc to keep freed blocks of any size for reuse instead of unmapping them, so a
    run's large arrays do not page-fault fresh memory every time (on some VMs a page fault costs microseconds, and a
    32 MB array then takes tens of ms to allocate, for the simulator and NumPy alike). `--memory default`: leave it."""
    mode = sys.argv[sys.argv.index('--memory') + 1] if '--memory' in sys.argv else default
    if mode == 'reuse':
        try:
            import ctypes
            libc = ctypes.CDLL('libc.so.6')
            M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
            ok = libc.mallopt(M_MMAP_THRESHOLD, 1 << 30) == 1 and libc.mallopt(M_TRIM_THRESHOLD, 2 ** 31 - 1) == 1
            return 'reuse (glibc mallopt)' if ok else 'default (mallopt refused)'
        except OSError: return 'default (no glibc)'
    return 'default'


# ---------------------------------------------------------------- timing
def load_avg():
    "The 1-minute load average (the machine may be shared: read the times with it)."
    try: return os.getloadavg()[0]
    except OSError: return float('nan')


def timed(fns: dict, repeat: int, clock=None) -> dict:
    """{name: [seconds, ...]}: each function run `repeat` times, in turns, so that all of them see the same load.
    The clock is the process's CPU time (user + system) unless `clock` says otherwise: on a machine shared with other
    jobs, wall time mostly measures the waits for a CPU; every timed function runs on one thread (see --threads)."""
    clock = clock or CLOCK[0]
    out = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            t = clock(); f(); out[k].append(clock() - t)
    return out


CLOCK = [time.process_time]


def set_clock(name):
    "'cpu' (process CPU time, the default) or 'wall' (time.perf_counter)."
    CLOCK[0] = {'cpu': time.process_time, 'wall': time.perf_counter}[name]


def med(ts): return statistics.median(ts)


# ---------------------------------------------------------------- the bare replay
def _view(store, acc):
    "The NumPy view an Access record names, on the replay's storage."
    st = store[acc.tensor_id]
    isz = st.itemsize
    return np.ndarray(tuple(n for _, n in acc.pattern), st.dtype, st, acc.offset * isz,
                      tuple(s * isz for s, _ in acc.pattern))


def _reshaped(x, shape):
    "`x` seen in `shape` without a copy, or None."
    if x.shape == tuple(shape): return x
    try:
        v = x.view(); v.shape = shape; return v
    except AttributeError: return None


_ONES = {}
def _ones(k):
    if k not in _ONES: _ONES[k] = np.ones(k, np.float32)
    return _ONES[k]


def _compile(ins, store, ops):
    "A no-argument function that does what instruction `ins` did, with the simulator's arithmetic."
    d = _view(store, ins.dst)
    s = [_view(store, a) for a in ins.srcs]
    f32 = np.dtype(np.float32)
    if ins.op == 'memset':
        v = np.float32(ins.attrs['value'])
        def run(d=d, v=v): d[...] = v
        return run
    if ins.op == 'dma_copy':
        src = s[0]
        if ins.dst.tensor_id == ins.srcs[0].tensor_id:
            def run(d=d, src=src): d[...] = src.copy().reshape(d.shape)
            return run
        d2 = _reshaped(d, src.shape)
        if d2 is not None:
            def run(d=d2, src=src): d[...] = src
            return run
        s2 = _reshaped(src, d.shape)
        if s2 is not None:
            def run(d=d, src=s2): d[...] = src
            return run
        def run(d=d, src=src): d[...] = src.reshape(d.shape)
        return run
    if ins.op == 'tensor_tensor':
        uf = ops[ins.attrs['op']].ufunc
        a, b = s
        if b.shape != a.shape: b = b.reshape(a.shape)
        out = _reshaped(d, a.shape) if d.dtype == a.dtype == b.dtype == f32 else None
        if out is not None:
            if a.ndim >= 3 and a.shape[-1] < a.shape[-2]:        # the tap axis innermost is slow: iterate the other
                a, b, out = a.swapaxes(-1, -2), b.swapaxes(-1, -2), out.swapaxes(-1, -2)
                def run(uf=uf, a=a, b=b, out=out): uf(a, b, out=out, order='C')
            else:
                def run(uf=uf, a=a, b=b, out=out): uf(a, b, out=out)
            return run
        def run(uf=uf, a=a, b=b, d=d):
            d[...] = uf(a.astype(f32), b.astype(f32)).reshape(d.shape)
        return run
    if ins.op == 'tensor_reduce':
        x = s[0]
        op, axis = ops[ins.attrs['op']], ins.attrs['axis']
        k = len(axis) if isinstance(axis, tuple) else 1
        shape = x.shape[:x.ndim - k] + (int(np.prod(x.shape[x.ndim - k:])),)
        xv = _reshaped(x, shape)                        # a view, made once, if it can be; else reshaped at run time
        def run(uf=op.ufunc, x=x, xv=xv, shape=shape, d=d):   # the simulator's order: one after another, in fp32
            xs = xv if xv is not None else x.reshape(shape)
            xs = xs if xs.dtype == f32 else xs.astype(f32)
            if xs.shape[-1] > 32: xs = np.moveaxis(np.ascontiguousarray(np.moveaxis(xs, -1, 0)), 0, -1)  # long rows
            acc = xs[..., 0].copy() if xs.shape[-1] == 1 else uf(xs[..., 0], xs[..., 1])
            for i in range(2, xs.shape[-1]): uf(acc, xs[..., i], out=acc)
            d[...] = acc.reshape(d.shape)
        return run
    if ins.op == 'tensor_scalar' and len(s) == 2 and ins.attrs.get('op1') is None and not ins.attrs.get('reverse0'):
        a, col = s                                      # data, and operand0 as a (P, 1) tile: one value per partition
        out = _reshaped(d, a.shape) if d.dtype == a.dtype == col.dtype == f32 else None
        if out is not None:
            col = col.reshape(col.shape[:1] + (1,) * (a.ndim - 1))
            def run(uf=ops[ins.attrs['op0']].ufunc, a=a, col=col, out=out): uf(a, col, out=out)
            return run
    raise NotImplementedError(f"replay of {ins.op} {ins.attrs}: not compiled (only what the depthwise kernels and "
                              f"first_launch.py's many-small kernel issue, in fp32)")


class Replay:
    "The instruction stream of a trace, compiled to bare NumPy calls on preallocated storage."
    def __init__(self, tr, inputs: dict, out_name='out'):
        # inputs: {tensor name: NumPy array} for the HBM tensors the kernel reads (simulate_kernel names them after
        # the kernel's arguments: img, filter)
        from dwlit.sim.isa import OPS
        from dwlit.sim.memory import DTYPES
        size, dtype, name = {}, {}, {}
        for ins in tr.instructions:
            for a in (ins.dst, *ins.srcs):
                size[a.tensor_id] = max(size.get(a.tensor_id, 0), a.hi + 1)
                name[a.tensor_id] = a.tensor
            dtype.setdefault(ins.dst.tensor_id, DTYPES[ins.dtype])
        self.store, self.inputs, self.scratch = {}, [], []
        for tid, n in size.items():
            if name[tid] in inputs and tid not in dtype:           # a kernel input: read, never written
                self.store[tid] = np.array(inputs[name[tid]], order='C').reshape(-1)
                self.inputs.append(inputs[name[tid]])
            else:                                                  # SBUF/PSUM/HBM scratch: NaN, as ndarray makes it
                self.store[tid] = np.full(n, np.nan, dtype.get(tid, np.float32))
                self.scratch.append((n, self.store[tid].dtype))
        outs = [tid for tid, n in name.items() if n == out_name]
        self.out = self.store[outs[-1]]
        self.ops = [_compile(ins, self.store, OPS) for ins in tr.instructions]

    def __len__(self): return len(self.ops)

    def allocate(self):
        "What a launch of this stream must allocate around it: inputs copied into HBM, every other tensor NaN-filled."
        for a in self.inputs: np.array(a, order='C').reshape(-1)
        for n, dt in self.scratch: np.full(n, np.nan, dt)

    def __call__(self):
        for op in self.ops: op()
        return self.out


def warm(sim):
    """Launch `sim` three times before timing: the first launch of a shape is only seen, the second records its program,
    the first replay joins its steps (dwlit.sim.replay; before 2026-12-07 the first launch recorded, and a third launch
    costs an older version nothing but time); the timed turns then see what every later launch of the shape costs."""
    sim(); sim(); sim()


def same_bits(a, b) -> bool:
    "True if `a` and `b` have the same dtype, shape and bytes (NaNs included)."
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def traced_replay(run, inputs):
    "Run `run()` once under a trace; return (its result, the trace, the Replay of its stream), the replay checked."
    from dwlit import trace
    with trace() as tr: y = run()
    rp = Replay(tr, inputs)
    got = rp()[:y.size].reshape(y.shape)
    if not same_bits(got, y):
        raise AssertionError("the replay does not reproduce the simulator's output bit for bit")
    return y, tr, rp


def check_close(y, ref64, scale64, dtype, taps):
    "Raise unless `y` is within the dtype's rounding of the float64 reference (relative to sum |x * f|)."
    tol = {'float32': 1e-5, 'float16': 4e-3, 'bfloat16': 3e-2}[np.dtype(dtype).name]
    # float16 products and sums below its normal range (6e-5) keep an absolute error of up to half the subnormal
    # spacing 2^-24 each: one per product, one for the stored sum
    atol = 2.0 ** -25 * (taps + 1) if np.dtype(dtype) == np.float16 else 1e-30
    err = np.abs(y.astype(np.float64) - ref64)
    bad = err > tol * scale64 + atol
    if bad.any():
        raise AssertionError(f"simulated result differs from NumPy: {bad.sum()} elements, worst |diff| {err.max():.3g}")
    return float((err / (scale64 + 1e-30)).max())


# ---------------------------------------------------------------- shapes from elsewhere (the real layers)
def shapes_from(spec: str) -> list:
    "The list of shape dicts at 'module:attribute' (e.g. 'dwlit.apps.layers:BENCH_1D'), for --layers."
    mod, _, attr = spec.partition(':')
    obj = getattr(importlib.import_module(mod), attr or 'BENCH')
    obj = obj() if callable(obj) else obj
    return [dict(s) for s in obj]


# ---------------------------------------------------------------- the table
HEAD = (f"{'shape':<40}{'sim ms':>8}{'direct ms':>10}{'replay ms':>10}{'sim/direct':>11}{'sim/replay':>11}"
        f"{'replay/direct':>14}  fastest direct NumPy")


def ratio(t_a, t_b):
    "Median of the paired ratios a_i / b_i (run i of each was taken in the same turn, so they saw the same load)."
    return med([a / b for a, b in zip(t_a, t_b)])


def row(label, t_sim, t_dir, t_rep, best):
    "One line of the table, from lists of seconds: medians of the times, medians of the paired ratios."
    s, d, r = med(t_sim), med(t_dir), med(t_rep)
    return (f"{label:<40}{s * 1e3:>8.1f}{d * 1e3:>10.1f}{r * 1e3:>10.1f}{ratio(t_sim, t_dir):>10.2f}x"
            f"{ratio(t_sim, t_rep):>10.2f}x{ratio(t_rep, t_dir):>13.2f}x  {best}")


TARGET_REPLAY, TARGET_DIRECT = 1.25, 2.0   # the targets: at most 1.25x the replay, at most 2x the fastest direct NumPy


def targets(t_sim, t_dir, t_rep) -> str:
    "One line: each target, met or not."
    sr, sd = ratio(t_sim, t_rep), ratio(t_sim, t_dir)
    a = f"sim/replay {sr:.2f}x {'<=' if sr <= TARGET_REPLAY else '>'} {TARGET_REPLAY}x: {'met' if sr <= TARGET_REPLAY else 'NOT met'}"
    b = f"sim/direct {sd:.2f}x {'<=' if sd <= TARGET_DIRECT else '>'} {TARGET_DIRECT:g}x: {'met' if sd <= TARGET_DIRECT else 'NOT met'}"
    return f"    targets: {a}; {b}"


NOTE = """\
sim: a repeated launch, replayed by dwlit.sim.replay (the first two launches of a shape are not timed: the first records,
the first replay joins each reduce with the multiplies it reads, and runs of chunks, into single steps; same bits).
replay: the same instruction stream as bare NumPy calls, one per instruction. direct: the fastest NumPy written for
the convolution itself, free to sum in any order, so its bits may differ in the last places."""


def detail(variants: dict, extra: dict, t: dict) -> str:
    "Two more lines: every direct variant's median (and those timed once), and the launch's own allocations."
    parts = [f"{k} {med(v) * 1e3:.1f}" for k, v in sorted(variants.items(), key=lambda kv: med(kv[1]))]
    parts += [f"{k} {med(v) * 1e3:.1f}" for k, v in extra.items()]
    bare = [r + a for r, a in zip(t['replay'], t['alloc'])]
    return ("    ms: " + ', '.join(parts) + f"\n    allocations of the launch (inputs into HBM, NaN-filled tensors) "
            f"{med(t['alloc']) * 1e3:.1f} ms; sim / (replay + allocations) = {ratio(t['sim'], bare):.2f}x")


def profile(fn, n=15):
    "cProfile one call of `fn`; print the `n` costliest functions by own time."
    import cProfile
    import pstats
    pr = cProfile.Profile(); pr.enable(); fn(); pr.disable()
    pstats.Stats(pr).sort_stats('tottime').print_stats(n)



def use_impl_from_argv():
    "`--impl DIR`: import the `dwlit` package found in DIR instead of the installed one (to compare a prototype)."
    if '--impl' not in sys.argv: return None
    import importlib.util
    d = os.path.abspath(os.path.join(sys.argv[sys.argv.index('--impl') + 1], 'dwlit'))
    spec = importlib.util.spec_from_file_location('dwlit', os.path.join(d, '__init__.py'),
                                                  submodule_search_locations=[d])
    mod = importlib.util.module_from_spec(spec); sys.modules['dwlit'] = mod; spec.loader.exec_module(mod)
    return d


def add_common_args(ap):
    "The options every bench_* script takes (see README.md): dtype, BLAS threads, clock, memory, profile, impl."
    ap.add_argument('--dtype', default='float32', choices=['float32', 'float16', 'bfloat16'])
    ap.add_argument('--threads', default='1', help="BLAS threads (read before NumPy loads)")
    ap.add_argument('--clock', default='cpu', choices=['cpu', 'wall'], help="process CPU time (default) or wall time")
    ap.add_argument('--memory', default='reuse', choices=['reuse', 'default'],
                    help="reuse freed memory (default) or leave glibc's allocator as it is (see benchlib)")
    ap.add_argument('--profile', action='store_true', help="cProfile one simulated run per shape")
    ap.add_argument('--impl', help="DIR holding a dwlit package to benchmark instead of the installed one")


def shapes_of(given, default, a, parse_layer) -> list:
    "The shapes to time: `given` (from a caller) and --layer/--layers, or `default` when there are none."
    shapes = list(given or []) + (list(default) if not (given or a.layer or a.layers) else [])
    return shapes + [parse_layer(s) for s in a.layer] + (shapes_from(a.layers) if a.layers else [])


def report(runs, a, what, impl, threads, memory):
    """Set the clock, print the header (`what`, then how the run is timed), then one row (and its details) per
    (run_shape, shape) of `runs`, then the note on the columns."""
    from dwlit.sim.memory import DTYPES
    dtype = DTYPES[a.dtype]
    set_clock(a.clock)
    print(f"{what}, {a.dtype}, trn1; dwlit from {impl or 'the installed package'}; medians of {a.repeat} runs taken in "
          f"turns (ratios: medians of the per-turn ratios), {a.clock} time; BLAS threads {threads}; memory {memory}; "
          f"load average {load_avg():.1f} on {os.cpu_count()} CPUs at the start")
    print(HEAD)
    for run_shape, sh in runs:
        line, more = run_shape(sh, dtype, a.repeat, a.profile)
        print(line, flush=True)
        if more: print(more, flush=True)
    print(NOTE)
    print(f"load average at the end: {load_avg():.1f}")
