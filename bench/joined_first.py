"""An experiment, not a design: what a first launch would cost if it computed as the replay does (issue 31).

    python bench/joined_first.py [--repeat 5]

The book's kernels on the bench shapes (1D: N=4, C=512, W=4096, W_f 3, 7, 31; 2D: C=256, N=2, 56x56, 3x3, lhs_dilation
2), each timed in turns, process CPU time, BLAS on one thread, medians of the turns:
- first: the first launch as dwlit runs it (every instruction checked, computed and recorded);
- joined: the same launch in three parts, each timed: a *dry run* (every check, view and record, but the four compute
  functions of chapter 4 the replay uses, `elementwise`, `reduce_last`, `fill`, `copy_values`, swapped for no-ops),
  the *join* (appendix 34's `Program.join` of what the dry run recorded), and the *run* of the joined steps;
- repeat: a replayed launch (joined steps, no checks);
- direct: the fastest direct NumPy formulation of bench_conv1d.py / bench_conv2d.py.
The joined launch's output is compared bit for bit with the first launch's.

The swap is done from outside the package, for this measurement only. A first launch built this way would need the
compute step of each instruction to go through the executor, a way to refuse (and simulate in full) any launch whose
checks or Python read a value the dry run did not compute, and the caller's arrays kept from the dry run's write-back.
The point of the experiment is the bound it gives: even with no checks at all, a launch costs `repeat`.
"""
import argparse
import dataclasses
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.update(OPENBLAS_NUM_THREADS='1', OMP_NUM_THREADS='1', MKL_NUM_THREADS='1')
import bench_conv1d  # noqa: E402
import bench_conv2d  # noqa: E402
import numpy as np  # noqa: E402

from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01 as k1  # noqa: E402
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01 as k2  # noqa: E402
from dwlit.sim import isa  # noqa: E402
from dwlit.sim import replay as R  # noqa: E402
from dwlit.sim.launch import EXECUTORS, to_numpy  # noqa: E402

COMPUTE = ('elementwise', 'reduce_last', 'fill', 'copy_values')


class JoinedFirst(R.Replay):
    "A replay executor whose first launch is a dry run, then the joined steps of what it recorded (times kept in `parts`)."
    name = 'joined-first (experiment)'

    def __init__(self):
        super().__init__()
        self.parts = {}

    def run(self, job):
        key = R.signature(job)
        assert key is not None and key not in self.programs, "the experiment times first launches only"
        t0 = time.process_time()
        saved = {n: getattr(isa, n) for n in COMPUTE}
        for n in COMPUTE: setattr(isa, n, lambda *a, **k: None)
        try:
            with isa.listen(R.Recorder()) as rec: result = dataclasses.replace(job, arrays=[]).simulate()
        finally:
            for n, f in saved.items(): setattr(isa, n, f)
        t1 = time.process_time()
        if not self.keep(key, rec.issued, job.inputs, result): raise AssertionError("a step the replay does not run")
        p = self.programs[key]
        p.join()
        t2 = time.process_time()
        out = to_numpy(p.run(job.inputs), copy=True)
        self.parts = dict(dry=t1 - t0, join=t2 - t1, run=time.process_time() - t2)
        return out


def cases():
    rng = np.random.default_rng(0)
    for W_f in (3, 7, 31):
        N, C, W = 4, 512, 4096
        pad = (W_f // 2, W_f - 1 - W_f // 2)
        img = rng.standard_normal((N, C, 1, W), dtype=np.float32)
        f = rng.standard_normal((C, 1, 1, W_f), dtype=np.float32)
        yield (f"1D W_f={W_f}", lambda img=img, f=f, pad=pad: k1(img, f, ((0, 0), pad), out_shape=img.shape),
               [lambda v=v, img=img, f=f, pad=pad: v(img, f, pad) for v in bench_conv1d.VARIANTS])
    img = rng.standard_normal((256, 56, 56, 2), dtype=np.float32)
    f = rng.standard_normal((256, 3, 3, 1), dtype=np.float32)
    yield ('2D', lambda: k2(img, f, ((1, 1), (1, 1)), lhs_dilation=(2, 2)),
           [lambda v=v: v(img, f, (2, 2), ((1, 1), (1, 1))) for v in bench_conv2d.VARIANTS])


def cpu(f):
    t = time.process_time(); y = f(); return time.process_time() - t, y


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=5)
    a = ap.parse_args()
    joined, load0 = JoinedFirst(), os.getloadavg()[0]
    rows = []
    for label, run, direct in cases():
        fastest = min(direct, key=lambda g: statistics.median(cpu(g)[0] for _ in range(3)))
        t = {k: [] for k in ('first', 'dry', 'join', 'run', 'joined', 'repeat', 'direct')}
        for _ in range(a.repeat):
            EXECUTORS['replay'] = R.REPLAY; R.REPLAY.forget()
            dt, y = cpu(run); t['first'].append(dt)
            EXECUTORS['replay'] = joined; joined.forget()
            dt, yj = cpu(run); t['joined'].append(dt)
            for k, v in joined.parts.items(): t[k].append(v)
            if y.tobytes() != yj.tobytes(): raise AssertionError(f"{label}: the joined launch's output differs")
            EXECUTORS['replay'] = R.REPLAY
            run(); run(); run()                            # seen, recorded, joined: the next is a replay
            t['repeat'].append(cpu(run)[0])
            t['direct'].append(cpu(fastest)[0])
        rows.append((label, {k: statistics.median(v) * 1e3 for k, v in t.items()},
                     {k: statistics.median(x / y for x, y in zip(t[k], t['direct'])) for k in ('first', 'joined', 'repeat')}))
    EXECUTORS['replay'] = R.REPLAY
    print(f"CPU time, median of {a.repeat} turns; load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"{'shape':<9}{'first':>8}{'dry':>8}{'join':>7}{'run':>8}{'joined':>8}{'repeat':>8}{'direct':>8}"
          f"{'first/dir':>10}{'joined/dir':>11}{'rep/dir':>8}{'joined/first':>13}")
    for label, m, r in rows:
        print(f"{label:<9}" + ''.join(f"{m[k]:>8.1f}" if k != 'join' else f"{m[k]:>7.1f}"
                                      for k in ('first', 'dry', 'join', 'run', 'joined', 'repeat', 'direct'))
              + f"{r['first']:>9.2f}x{r['joined']:>10.2f}x{r['repeat']:>7.2f}x{m['joined'] / m['first']:>12.2f}x")
    print("ms; joined = dry + join + run; every joined output the same bits as the first launch's")


if __name__ == '__main__': main()
