"""What a first launch costs, beside a repeated one: per instruction and per launch, on a kernel of many small
instructions and on the book's kernels; with `--old DIR`, two versions of dwlit side by side.

    python bench/first_launch.py [--repeat 9] [--old DIR] [--only small|book]

A first launch is what a user's kernel always gets (nothing replays it) and what a book kernel gets the first time it
sees a shape: every instruction checked, computed and recorded. A repeated launch of a book kernel is replayed by
`dwlit.sim.replay` (appendix 34). Cases:
- small: a depthwise conv1d written as an NKI user writes it, a plain function given to `simulate_kernel`: 2 DMAs in
  (the padded (128, 64 + W_f - 1) image and the (128, W_f) taps), per tap a `tensor_scalar` multiply by the tap's
  (128, 1) column and (from the second tap on) a `tensor_tensor` add, 1 DMA out: 2 W_f + 2 instructions of 8 KB each,
  so the time is the simulator's own. W_f in 1, 2, 4, 8, 16, 31, 63, and the least-squares line
  time = a + b * instructions: b is the cost per instruction, a the cost per launch (4 allocations and 3 inputs
  included); the same instruction stream is also run as bare NumPy calls (benchlib.Replay), and the
  first launch minus that is the fixed cost, what the simulator adds on top of the arithmetic;
- book: the 1D entry point (N=4, C=512, W=4096, 'same' padding, W_f 3, 7, 31) and the 2D kernel (C=256, N=2, 56x56,
  3x3, lhs_dilation 2, padding 1), as in bench_conv1d.py and bench_conv2d.py: the first launch (the replay forgotten
  before each one), the repeated launch, and the fastest direct NumPy formulation of those scripts.
Each version runs in its own worker process; every case is timed in turns (each version and mode once per turn) so
all see the same load. Process CPU time, BLAS on one thread; medians of the turns, ratios are medians of per-turn
ratios. Outputs of the two versions are compared bit for bit ("same").
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = r'''
import ctypes, json, sys, time
try: ctypes.CDLL('libc.so.6').mallopt(-3, 1 << 30); ctypes.CDLL('libc.so.6').mallopt(-1, 2 ** 31 - 1)   # as benchlib: memory reuse
except OSError: pass
if sys.argv[1] != '-': sys.path.insert(0, sys.argv[1])
sys.path.append(sys.argv[2])
import numpy as np
import dwlit
from dwlit import simulate_kernel, trace
from dwlit.sim import language as nl, isa as nisa
from dwlit.sim.replay import REPLAY
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01 as k1
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01 as k2
import bench_conv1d, bench_conv2d, benchlib

def many_small(x, w, out):
    "The depthwise conv1d of many small instructions, as an NKI user writes it."
    C, Wp = x.shape
    W_f = w.shape[1]
    W = Wp - W_f + 1
    xs = nl.ndarray((C, Wp), dtype=x.dtype, buffer=nl.sbuf, name='xs')
    ws = nl.ndarray((C, W_f), dtype=w.dtype, buffer=nl.sbuf, name='ws')
    nisa.dma_copy(dst=xs, src=x)
    nisa.dma_copy(dst=ws, src=w)
    acc = nl.ndarray((C, W), dtype=x.dtype, buffer=nl.sbuf, name='acc')
    tmp = nl.ndarray((C, W), dtype=x.dtype, buffer=nl.sbuf, name='tmp')
    nisa.tensor_scalar(dst=acc, data=xs[:, 0:W], op0=nl.multiply, operand0=ws[:, 0:1])
    for k in range(1, W_f):
        nisa.tensor_scalar(dst=tmp, data=xs[:, k:k + W], op0=nl.multiply, operand0=ws[:, k:k + 1])
        nisa.tensor_tensor(dst=acc, data1=acc, data2=tmp, op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out

def launch_only(x, w, out):
    "The many-small kernel's launch without its instructions: the same 3 inputs and 4 SBUF tiles."
    C, Wp = x.shape
    for shape, name in (((C, Wp), 'xs'), ((C, w.shape[1]), 'ws'), ((C, Wp - w.shape[1] + 1), 'acc'), ((C, Wp - w.shape[1] + 1), 'tmp')):
        nl.ndarray(shape, dtype=x.dtype, buffer=nl.sbuf, name=name)
    return out

rng = np.random.default_rng(0)
def case(spec):
    "(the launch, the fastest direct NumPy or None) of a case."
    kind, *a = spec
    if kind == 'alone':
        x = rng.standard_normal((128, 64), dtype=np.float32); w = rng.standard_normal((128, 1), dtype=np.float32)
        out = np.zeros((128, 64), np.float32)
        return (lambda: simulate_kernel(launch_only, x, w, out)), None, None
    if kind == 'small':
        (wf,) = a
        x = rng.standard_normal((128, 64 + wf - 1), dtype=np.float32); w = rng.standard_normal((128, wf), dtype=np.float32)
        out = np.empty((128, 64), np.float32)
        return (lambda: simulate_kernel(many_small, x, w, out)), None, dict(x=x, w=w)
    if kind == '1d':
        (W_f,) = a; N, C, W = 4, 512, 4096; pad = (W_f // 2, W_f - 1 - W_f // 2)
        img = rng.standard_normal((N, C, 1, W), dtype=np.float32); f = rng.standard_normal((C, 1, 1, W_f), dtype=np.float32)
        run = lambda: simulate_kernel(k1, img, f, ((0, 0), pad), out_shape=(N, C, 1, W))
        return run, [lambda v=v: v(img, f, pad) for v in bench_conv1d.VARIANTS], None
    img = rng.standard_normal((256, 56, 56, 2), dtype=np.float32); f = rng.standard_normal((256, 3, 3, 1), dtype=np.float32)
    pad, dil = ((1, 1), (1, 1)), (2, 2)
    run = lambda: simulate_kernel(k2, img, f, pad, lhs_dilation=dil)
    return run, [lambda v=v: v(img, f, dil, pad) for v in bench_conv2d.VARIANTS], None

def fastest(fns, n=3):
    "The fastest of the direct formulations (median of n)."
    t = []
    for g in fns:
        ts = []
        for _ in range(n): t0 = time.process_time(); g(); ts.append(time.process_time() - t0)
        t.append(sorted(ts)[n // 2])
    return fns[int(np.argmin(t))]

runs = {}
for line in sys.stdin:
    cmd = json.loads(line); key = json.dumps(cmd['spec'])
    if cmd['op'] == 'setup':
        run, direct, inputs = case(cmd['spec'])
        REPLAY.forget()
        with trace() as tr: y = run()
        run(); run(); run()        # a traced launch is not seen; then seen, recorded, replayed (joining its steps)
        bare = benchlib.traced_replay(run, inputs)[2] if inputs and cmd['direct'] else None   # the stream as bare NumPy calls
        runs[key] = dict(run=run, direct=fastest(direct) if direct and cmd['direct'] else None, bare=bare)
        np.save(cmd['out'], y)
        print(json.dumps({'instructions': len(tr.instructions)})); sys.stdout.flush(); continue
    r = runs[key]; mode = cmd['mode']
    if mode == 'first': REPLAY.forget()                  # nothing to replay: the launch is simulated
    f = r['direct'] if mode == 'direct' else r['bare'] if mode == 'bare' else r['run']
    t = time.process_time(); f(); dt = time.process_time() - t
    if mode == 'first': r['run'](); r['run']()       # recorded, then joined: the next repeated turn replays, untimed
    print(json.dumps({'t': dt})); sys.stdout.flush()
'''


class Worker:
    "One version of dwlit (a directory holding the package, or '-' for the one on the path) in a subprocess."
    def __init__(self, impl):
        env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
        self.p = subprocess.Popen([sys.executable, '-c', WORKER, impl, HERE], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env, cwd='/')
    def ask(self, **cmd):
        self.p.stdin.write(json.dumps(cmd) + '\n'); self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line: raise RuntimeError('a worker died (run it by hand to see why)')
        return json.loads(line)


def med(ts): return statistics.median(ts)
def ratio(a, b): return statistics.median(x / y for x, y in zip(a, b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=9)
    ap.add_argument('--old', help="a directory holding an older dwlit package, timed in turns with this one")
    ap.add_argument('--new', default='-', help="a directory holding the dwlit package to time (default: the one imported)")
    ap.add_argument('--only', choices=('small', 'book'))
    a = ap.parse_args()
    names = ['new'] + (['old'] if a.old else [])
    ws = {'new': Worker(a.new), **({'old': Worker(a.old)} if a.old else {})}
    small = [['small', wf] for wf in (1, 2, 4, 8, 16, 31, 63)] + [['alone']] if a.only != 'book' else []
    book = [['1d', 3], ['1d', 7], ['1d', 31], ['2d']] if a.only != 'small' else []
    tmp, load0 = tempfile.mkdtemp(), os.getloadavg()[0]
    res, count, same = {}, {}, {}
    for s in small + book:
        k = json.dumps(s); outs = []
        for n, w in ws.items():
            count[k] = w.ask(op='setup', spec=s, out=f"{tmp}/{n}.npy", direct=(n == 'new'))['instructions']
            outs.append(np.load(f"{tmp}/{n}.npy"))
        same[k] = all(o.tobytes() == outs[0].tobytes() for o in outs)
        modes = ['first', 'bare'] if s[0] == 'small' else ['first'] if s[0] == 'alone' else ['first', 'repeat', 'direct']
        t = {(n, m): [] for n in names for m in modes if m not in ('direct', 'bare') or n == 'new'}
        for _ in range(a.repeat):
            for (n, m) in t: t[n, m].append(ws[n].ask(op='time', spec=s, mode=m)['t'])
        res[k] = t
    load1 = os.getloadavg()[0]
    print(f"dwlit: new = {a.new if a.new != '-' else 'the imported package'}" + (f", old = {a.old}" if a.old else '')
          + f"; CPU time, median of {a.repeat} turns; load average {load0:.1f} at the start, {load1:.1f} at the end")
    if small:
        print("\nmany small instructions (a first launch every time; 128 x 64 fp32 per instruction)")
        print(f"{'W_f':>4} {'instr':>6}" + ''.join(f" {n + ' ms':>9}" for n in names) + ('   new/old' if a.old else '')
              + f" {'bare ms':>9} {'new-bare':>9}")
        alone, small = small[-1], small[:-1]
        # the fixed cost: what the simulator adds to the arithmetic, the same instruction stream run as bare NumPy calls
        fixed = lambda s: [x - y for x, y in zip(res[s]['new', 'first'], res[s]['new', 'bare'])]
        for s in small:
            t = res[json.dumps(s)]
            line = f"{s[1]:>4} {count[json.dumps(s)]:>6}" + ''.join(f" {med(t[n, 'first']) * 1e3:>9.3f}" for n in names)
            if a.old: line += f" {ratio(t['new', 'first'], t['old', 'first']):>8.2f}x"
            line += f" {med(t['new', 'bare']) * 1e3:>9.3f} {med(fixed(json.dumps(s))) * 1e3:>9.3f}"
            print(line)
        ns = [count[json.dumps(s)] for s in small]
        for n in names:
            b, a0 = np.polyfit(ns, [med(res[json.dumps(s)][n, 'first']) for s in small], 1)
            print(f"fit {n}: {a0 * 1e3:.3f} ms per launch + {b * 1e6:.1f} us per instruction")
        ends = [json.dumps(small[0]), json.dumps(small[-1])]
        for n in names:                  # the fit's intercept is noisy: the launch timed alone, and the slope from the two ends
            per = statistics.median((b - a) / (count[ends[1]] - count[ends[0]]) for a, b in zip(res[ends[0]][n, 'first'], res[ends[1]][n, 'first']))
            print(f"{n}: the launch alone (3 inputs, 4 SBUF tiles, no instruction) {med(res[json.dumps(alone)][n, 'first']) * 1e3:.3f} ms; "
                  f"per instruction, W_f=63 minus W_f=1 per turn, {per * 1e6:.1f} us")
        b, a0 = np.polyfit(ns, [med(fixed(json.dumps(s))) for s in small], 1)
        per = statistics.median((y - x) / (count[ends[1]] - count[ends[0]]) for x, y in zip(fixed(ends[0]), fixed(ends[1])))
        print(f"new, fixed cost (first launch minus its bare NumPy calls, benchlib.Replay): fit {a0 * 1e3:.3f} ms per launch + "
              f"{b * 1e6:.1f} us per instruction; W_f=63 minus W_f=1 per turn, {per * 1e6:.1f} us per instruction")
    if book:
        print("\nthe book's kernels: first launch (simulated), repeated launch (replayed), fastest direct NumPy")
        print(f"{'shape':<8} {'instr':>6}" + ''.join(f" {n + ' first':>10} {n + ' rep':>9}" for n in names)
              + f" {'direct':>8} {'first/dir':>9} {'rep/dir':>8} {'us/instr':>8}"
              + (' first new/old  rep new/old' if a.old else ''))
        for s in book:
            k = json.dumps(s); t = res[k]
            label = f"1D W_f={s[1]}" if s[0] == '1d' else '2D'
            line = (f"{label:<8} {count[k]:>6}" + ''.join(f" {med(t[n, 'first']) * 1e3:>10.1f} {med(t[n, 'repeat']) * 1e3:>9.1f}"
                                                       for n in names)
                    + f" {med(t['new', 'direct']) * 1e3:>8.1f} {ratio(t['new', 'first'], t['new', 'direct']):>8.2f}x"
                    + f" {ratio(t['new', 'repeat'], t['new', 'direct']):>7.2f}x"
                    + f" {(med(t['new', 'first']) - med(t['new', 'repeat'])) / count[k] * 1e6:>8.1f}")
            if a.old: line += f" {ratio(t['new', 'first'], t['old', 'first']):>12.2f}x {ratio(t['new', 'repeat'], t['old', 'repeat']):>11.2f}x"
            print(line)
        print("us/instr: (first - repeated) / instructions, what simulating one instruction adds to its replayed compute")
    if a.old: print("outputs, new against old: " + ('the same bits in every case' if all(same.values()) else
                                                   'DIFFERENT in ' + ', '.join(k for k, v in same.items() if not v)))


if __name__ == '__main__': main()
