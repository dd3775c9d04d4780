"""Two versions of dwlit side by side on the benchmark shapes: time ratio new / old, per shape, in one run.

    old=$(mktemp -d) && git archive <commit> dwlit | tar -x -C "$old"       # the package before a change
    python bench/side_by_side.py --old "$old" [--repeat 7]

Each version runs in its own worker process (so the two packages never meet); for every shape the two workers are
timed in turns (old, new, old, new, ...), so that both see the same machine load, and the ratio reported is the
median of the per-turn ratios. Times are process CPU time of one `simulate_kernel` call, NumPy inputs included. Both
versions' results are compared with a float64 NumPy reference (within 1e-4 of the largest output), and with each
other (the largest difference, in units of the output's largest value): a version that gets faster by computing
something else is caught here. Shapes: the 1D and 2D benchmark shapes of bench_conv1d.py and bench_conv2d.py, and
every real layer of chapter 25 that the kernels take, at batch 1 and 2."""
import argparse
import json
import os
import statistics
import subprocess
import sys

WORKER = r'''
import json, sys, time, numpy as np
sys.path.insert(0, sys.argv[1]) if sys.argv[1] != '-' else None
import os, dwlit
from dwlit import simulate_kernel
if os.path.isdir(os.path.join(os.path.dirname(dwlit.__file__), 'kernels')):   # the package in parts (dwlit.kernels, ...)
    from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01 as k1
    from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01 as k2
    from dwlit.apps.layers import LAYERS, kernel_args, in_contract, programs_to_fit
    from dwlit.sim import replay
else:   # before the parts (9913cf5 and earlier): one flat dwlit/ (an editable install's finder would answer dwlit.kernels)
    from dwlit.conv1d import conv1d_depthwise_bf01_oi01_bf01 as k1
    from dwlit.conv2d import conv2d_depthwise_f01b_o01i_bf01 as k2
    from dwlit.layers import LAYERS, kernel_args, in_contract, programs_to_fit
    from dwlit import replay
def forget():
    "Drop every replayable program, in this version's layout (the replay was a module, then an executor)."
    (replay.REPLAY.forget if hasattr(replay, 'REPLAY') else replay.forget)()
def ref1(img, f, pad):
    x = np.pad(img[:, :, 0, :].astype(np.float64), ((0, 0), (0, 0), pad)); W_out = x.shape[2] - f.shape[3] + 1
    return sum(x[:, :, k:k + W_out] * f[None, :, 0, 0, k, None] for k in range(f.shape[3]))[:, :, None, :]
def ref2(img, f, pad, dil):
    (dh, dw), ((hl, hr), (wl, wr)) = dil, pad; C, H, W, N = img.shape
    x = np.zeros((C, (H - 1) * dh + 1 + hl + hr, (W - 1) * dw + 1 + wl + wr, N))
    x[:, hl:hl + (H - 1) * dh + 1:dh, wl:wl + (W - 1) * dw + 1:dw, :] = img
    kH, kW = f.shape[1:3]; oH, oW = x.shape[1] - kH + 1, x.shape[2] - kW + 1
    return sum(x[:, i:i + oH, j:j + oW, :] * f[:, i, j, 0, None, None, None] for i in range(kH) for j in range(kW)).transpose(3, 0, 1, 2)
rng = np.random.default_rng(0)
def case(spec):
    kind, *a = spec
    if kind == '1d':
        N, C, W, W_f = a; pad = (W_f // 2, W_f - 1 - W_f // 2)
        img = rng.standard_normal((N, C, 1, W)).astype(np.float32); f = rng.standard_normal((C, 1, 1, W_f)).astype(np.float32)
        return (lambda: simulate_kernel(k1, img, f, ((0, 0), pad), out_shape=(N, C, 1, W))), lambda: ref1(img, f, pad)
    if kind == '2d':
        C, N, H, W, k, d, p = a
        img = rng.standard_normal((C, H, W, N)).astype(np.float32); f = rng.standard_normal((C, k, k, 1)).astype(np.float32)
        pad = ((p, p), (p, p))
        return (lambda: simulate_kernel(k2, img, f, pad, lhs_dilation=(d, d))), lambda: ref2(img, f, pad, (d, d))
    name, N = a
    kern, ishape, fshape, pad, kw = kernel_args(name, N)
    img = rng.standard_normal(ishape).astype(np.float32); f = rng.standard_normal(fshape).astype(np.float32)
    k = programs_to_fit(name, 'trn1', N)[0]                 # the fewest programs that fit trn1, as chapter 25 runs it
    run = lambda: simulate_kernel(kern, img, f, pad, num_programs=k, **kw)
    ref = (lambda: ref1(img, f, pad[1])) if len(fshape) == 4 and fshape[1] == 1 and fshape[2] == 1 else (lambda: ref2(img, f, pad, (1, 1)))
    return run, ref
runs = {}
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd['op'] == 'layers':
        print(json.dumps([n for n in LAYERS if not in_contract(n)])); sys.stdout.flush(); continue
    key = json.dumps(cmd['spec'])
    if key not in runs:
        run, ref = case(cmd['spec']); y = run(); r = ref()
        if not cmd.get('first'): run(); run()   # recorded, then the first replay joins its steps: not timed turns
        err = float(np.abs(y.astype(np.float64) - r).max() / max(np.abs(r).max(), 1e-30))
        np.save(f"{cmd['out']}.npy", y)
        runs[key] = run
        print(json.dumps({'err': err})); sys.stdout.flush(); continue
    if cmd.get('first'): forget()                                    # a first launch: nothing to replay
    t = time.process_time(); runs[key](); print(json.dumps({'t': time.process_time() - t})); sys.stdout.flush()
'''


class Worker:
    "One version of dwlit in a subprocess, answering one JSON line per request."
    def __init__(self, impl):
        env = dict(os.environ, OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
        self.p = subprocess.Popen([sys.executable, '-c', WORKER, impl or '-'], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env, cwd='/')
    def ask(self, **cmd):
        self.p.stdin.write(json.dumps(cmd) + '\n'); self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--old', required=True, help="directory holding the old dwlit package")
    ap.add_argument('--new', default=None, help="directory holding the new one (default: the installed package)")
    ap.add_argument('--repeat', type=int, default=7)
    ap.add_argument('--only', choices=('1d', '2d', 'layers'))
    ap.add_argument('--first', action='store_true', help="time first launches: forget every replayable program first")
    ap.add_argument('--pairs', type=int, default=1,
                    help="fresh pairs of worker processes, each timed --repeat turns, the turns pooled (default 1). One "
                         "process can be 10%% faster or slower than another running the same code, for as long as it runs "
                         "(where its arrays land in memory); several pairs average that out. --old equal to --new shows it")
    a = ap.parse_args()
    import tempfile

    import numpy as np
    pairs = [(Worker(a.old), Worker(a.new)) for _ in range(a.pairs)]
    old, new = pairs[0]
    specs = []
    if a.only in (None, '1d'): specs += [['1d', 4, 512, 4096, wf] for wf in (3, 7, 31)]
    if a.only in (None, '2d'): specs += [['2d', 256, 2, 56, 56, 3, 2, 1]]
    if a.only in (None, 'layers'): specs += [['layer', n, N] for n in new.ask(op='layers') for N in (1, 2)]
    tmp = tempfile.mkdtemp()
    print(f"{'shape':42s} {'old ms':>8s} {'new ms':>8s} {'new/old':>8s}  err old, new (vs float64); old vs new")
    rows = []
    for s in specs:
        for o, n in pairs:
            e_old = o.ask(op='run', spec=s, out=f"{tmp}/old")['err']; e_new = n.ask(op='run', spec=s, out=f"{tmp}/new")['err']
        yo, yn = np.load(f"{tmp}/old.npy").astype(np.float64), np.load(f"{tmp}/new.npy").astype(np.float64)
        diff = float(np.abs(yo - yn).max() / max(np.abs(yo).max(), 1e-30))
        to, tn = [], []
        for turn in range(a.repeat):
            for o, n in pairs:                        # who goes first alternates: the second of two runs pays for the first
                if turn % 2: tn.append(n.ask(op='time', spec=s, first=a.first)['t'])
                to.append(o.ask(op='time', spec=s, first=a.first)['t'])
                if not turn % 2: tn.append(n.ask(op='time', spec=s, first=a.first)['t'])
        ratio = statistics.median(n / o for n, o in zip(tn, to))
        name = ' '.join(map(str, s[1:])) if s[0] != 'layer' else f"{s[1]} N={s[2]}"
        rows.append((s[0], name, ratio))
        print(f"{s[0] + ' ' + name:42s} {statistics.median(to) * 1e3:8.1f} {statistics.median(tn) * 1e3:8.1f} "
              f"{ratio:7.2f}x  {e_old:.1e}, {e_new:.1e}; {diff:.1e}" + ('  ERROR' if max(e_old, e_new) > 1e-4 else ''))
    worst = max(rows, key=lambda r: r[2])
    print(f"worst: {worst[0]} {worst[1]} at {worst[2]:.2f}x; load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == '__main__': main()
