"""The simulated 1D depthwise entry point against the fastest direct NumPy and against its instruction stream run bare, in one run.

    python bench/bench_conv1d.py [--repeat 5] [--wf 3 7 31] [--layer name:N,C,W,W_f[,pad_l,pad_r[,programs]]]...
                                 [--layers MODULE:ATTR] [--dtype float32] [--threads 1] [--clock cpu|wall]
                                 [--memory reuse|default] [--impl DIR] [--profile]

Default shapes: N=4, C=512, W=4096, 'same' padding, W_f in {3, 7, 31}, one program, trn1.
For each shape, measured in turns so that all see the same machine load:
- sim: `simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, ...)`, everything included (inputs into HBM, every
  instruction with its checks, the result out of HBM);
- direct: every direct NumPy formulation below; the fastest (by median) is the baseline, and its name is printed;
- replay: the instruction stream of one traced run, run as bare NumPy calls, one per instruction, on views built
  beforehand (benchlib.Replay). It must reproduce the simulated output bit for bit. A repeated launch of the simulator
  runs `dwlit.sim.replay`'s fused steps (a reduce with its multiplies, runs of chunks as one step), so it can be faster.
Before timing, the simulated result is checked against a float64 NumPy reference, and every direct variant too.
Times are process CPU time by default (the machine may be shared; see benchlib.timed), BLAS on one thread, and freed
memory reused (see benchlib.set_memory_from_argv). `--impl DIR` benchmarks the dwlit package in DIR (a prototype).
`--layer`/`--layers` add shapes (the real layers of chapter 25): a list of dicts with keys name, N, C, W,
W_f and optionally padding=(l, r) ('same' if absent), programs (SPMD programs, else the fewest that fit SBUF), stride
(passed to the kernel: a shape out of its contract prints the kernel's error instead of times).
"""
import argparse

from benchlib import set_memory_from_argv, set_threads_from_argv, use_impl_from_argv

THREADS = set_threads_from_argv()
MEMORY = set_memory_from_argv()
IMPL = use_impl_from_argv()   # --impl DIR: a prototype's dwlit package instead of the installed one
import numpy as np
from benchlib import (
    CLOCK,
    add_common_args,
    check_close,
    detail,
    med,
    profile,
    report,
    row,
    shapes_of,
    targets,
    timed,
    traced_replay,
    warm,
)
from numpy.lib.stride_tricks import sliding_window_view

from dwlit import AllocationError, SimulatorError, simulate_kernel
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.kernels.tiling import C_TILE_SIZE, PACK, div_ceil

F32 = np.float32


# ---------------------------------------------------------------- direct NumPy: one function per formulation
def _padded(img, pad):
    return np.pad(img[:, :, 0, :].astype(F32, copy=False), ((0, 0), (0, 0), pad))


def einsum_optimize(img, filt, pad):
    "sliding_window_view + einsum(optimize=True)"
    x = _padded(img, pad)
    return np.einsum('ncwk,ck->ncw', sliding_window_view(x, filt.shape[3], axis=2), filt[:, 0, 0, :].astype(F32),
                     optimize=True)


def einsum_plain(img, filt, pad):
    "sliding_window_view + einsum"
    x = _padded(img, pad)
    return np.einsum('ncwk,ck->ncw', sliding_window_view(x, filt.shape[3], axis=2), filt[:, 0, 0, :].astype(F32))


def matmul(img, filt, pad):
    "sliding windows @ filter, one matmul per (batch, channel) broadcast"
    x = _padded(img, pad)
    win = sliding_window_view(x, filt.shape[3], axis=2)                       # (N, C, W_out, W_f)
    return np.matmul(win, filt[:, 0, 0, :, None].astype(F32))[..., 0]


def taps(img, filt, pad):
    "one shifted multiply-add per tap, whole arrays"
    x, f = _padded(img, pad), filt[:, 0, 0, :].astype(F32)
    W_f = f.shape[1]; W_out = x.shape[2] - W_f + 1
    out = x[:, :, 0:W_out] * f[:, 0, None]; tmp = np.empty_like(out)
    for k in range(1, W_f):
        np.multiply(x[:, :, k:k + W_out], f[:, k, None], out=tmp); out += tmp
    return out


def taps_blocked(img, filt, pad, B=16):
    "one shifted multiply-add per tap, 16 channels at a time (stays in cache)"
    x, f = _padded(img, pad), filt[:, 0, 0, :].astype(F32)
    N, C = x.shape[:2]; W_f = f.shape[1]; W_out = x.shape[2] - W_f + 1
    out = np.empty((N, C, W_out), F32); tmp = np.empty((B, W_out), F32)
    for n in range(N):
        for c0 in range(0, C, B):
            o, xs, fs = out[n, c0:c0 + B], x[n, c0:c0 + B], f[c0:c0 + B]
            t = tmp[:o.shape[0]]
            np.multiply(xs[:, 0:W_out], fs[:, 0, None], out=o)
            for k in range(1, W_f):
                np.multiply(xs[:, k:k + W_out], fs[:, k, None], out=t); o += t
    return out


def correlate(img, filt, pad):
    "np.correlate per (batch, channel) row"
    x, f = _padded(img, pad), filt[:, 0, 0, :].astype(F32)
    N, C = x.shape[:2]; W_out = x.shape[2] - f.shape[1] + 1
    out = np.empty((N, C, W_out), F32)
    for n in range(N):
        for c in range(C): out[n, c] = np.correlate(x[n, c], f[c], 'valid')
    return out


VARIANTS = [einsum_optimize, einsum_plain, matmul, taps, taps_blocked, correlate]


def reference64(img, filt, pad):
    "float64 result and the scale sum |x * f| per output element (for the tolerance)."
    x = np.pad(img[:, :, 0, :].astype(np.float64), ((0, 0), (0, 0), pad))
    f = filt[:, 0, 0, :].astype(np.float64)
    win = sliding_window_view(x, f.shape[1], axis=2)
    return np.einsum('ncwk,ck->ncw', win, f)[:, :, None], np.einsum('ncwk,ck->ncw', np.abs(win), np.abs(f))[:, :, None]


# ---------------------------------------------------------------- shapes
def default_shapes(wfs):
    return [dict(name=f"N=4 C=512 W=4096 W_f={w}", N=4, C=512, W=4096, W_f=w) for w in wfs]


def parse_layer(s):
    "'name:N,C,W,W_f[,pad_l,pad_r[,programs]]' -> shape dict"
    name, _, nums = s.rpartition(':')
    v = [int(x) for x in nums.split(',')]
    d = dict(name=name or s, N=v[0], C=v[1], W=v[2], W_f=v[3])
    if len(v) >= 6: d['padding'] = (v[4], v[5])
    if len(v) >= 7: d['programs'] = v[6]
    return d


def run_shape(sh, dtype, repeat, prof):
    N, C, W, W_f = sh['N'], sh['C'], sh['W'], sh['W_f']
    pad = tuple(sh.get('padding', (W_f // 2, W_f - 1 - W_f // 2)))
    W_out = W + sum(pad) - W_f + 1
    rng = np.random.default_rng(0)
    img = rng.standard_normal((N, C, 1, W), dtype=F32).astype(dtype)
    filt = rng.standard_normal((C, 1, 1, W_f), dtype=F32).astype(dtype)
    kw = dict(out_shape=(N, C, 1, W_out))

    if 'stride' in sh: kw['stride'] = sh['stride']        # anything but 1 is out of the kernels' contract

    def sim_with(p): return lambda: simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, ((0, 0), pad),
                                                    num_programs=p, **kw)
    programs = sh.get('programs')
    try:
        if programs is None:                              # the fewest programs that fit SBUF
            programs = 1
            while True:
                try: sim_with(programs)(); break
                except AllocationError:
                    if programs >= div_ceil(C, C_TILE_SIZE): raise
                    programs *= 2
        sim = sim_with(programs)
        y, tr, rp = traced_replay(sim, {'img': img, 'filter': filt})
    except SimulatorError as e: return f"{sh['name']:<40}out of contract: {str(e)[:160]}", None
    ref, scale = reference64(img, filt, pad)
    check_close(y, ref, scale, dtype, W_f)
    direct, once = {}, {}
    for v in VARIANTS:
        fn = (lambda v=v: v(img, filt, pad).astype(dtype, copy=False))
        t0 = CLOCK[0](); y_v = fn(); once[v.__name__] = CLOCK[0]() - t0
        check_close(y_v[:, :, None], ref, scale, dtype, W_f)
        direct[v.__name__] = fn
    slow = {k: [t] for k, t in once.items() if t > 4 * min(once.values())}   # timed once: far from the fastest
    direct = {k: f for k, f in direct.items() if k not in slow}
    warm(sim)
    if prof: profile(sim)
    fns = dict(sim=sim, replay=rp, alloc=rp.allocate, **direct)
    t = timed(fns, repeat)
    tdir = {k: t[k] for k in direct}
    best = min(tdir, key=lambda k: med(tdir[k]))
    path = 'default' if div_ceil(W_out, div_ceil(PACK, W_f)) == 1 else 'f_packing'
    label = f"{sh['name']} ({path}, {programs} prog)"
    counts = tr.counts()
    extra = {f'{k} (once)': v for k, v in slow.items()}
    line = row(label, t['sim'], tdir[best], t['replay'], best)
    more = (targets(t['sim'], tdir[best], t['replay']) + '\n' + detail(tdir, extra, t) +
            f"\n    {len(tr)} instructions: " +
            ', '.join(f"{k} {v}" for k, v in counts.items()))
    return line, more


def main(shapes=None, argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--wf', type=int, nargs='*', default=[3, 7, 31])
    ap.add_argument('--layer', action='append', default=[], help="name:N,C,W,W_f[,pad_l,pad_r[,programs]]")
    ap.add_argument('--layers', help="MODULE:ATTR, a list of shape dicts (e.g. the real layers' table)")
    add_common_args(ap)
    a = ap.parse_args(argv)
    shapes = shapes_of(shapes, default_shapes(a.wf), a, parse_layer)
    report([(run_shape, sh) for sh in shapes], a, '1D depthwise', IMPL, THREADS, MEMORY)

if __name__ == '__main__':
    main()
