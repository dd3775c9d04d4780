"""Where the simulator's time beyond its replay goes, shape by shape: the kernel's own Python (views, loops, argument
checks, planning, launch allocations), measured with every instruction made a no-op, and the instructions' own
Python (their checks, plans and records) on top of the same NumPy work the replay does.

    python bench/overhead.py [--impl DIR] [--repeat 21] [--threads 1] [--memory reuse] [SHAPE ...]

SHAPE: a real layer as NAME:N (e.g. mobilenetv2-144x56:1, the names of real_layers.PICKS), `1d:W_f` (the 1D default
shape N=4, C=512, W=4096) or `2d` (the 2D default shape); default: every real layer in the kernels' contract at batch
1 and 2. CPU time, minimum of --repeat runs. "Kernel side" is the simulated run with each `nisa` intrinsic replaced by
a function that does nothing (so no arithmetic, no check, no record: what is left is the kernel's Python and the
launch); it is measured again with every view free as well (`Tensor.ap` and slicing return None, which the
no-op intrinsics accept): the kernel's loops, calls and launch alone, a floor no change to the simulator's views or
instructions can go below. "Instructions" is the rest of the overhead, sim - kernel side - replay. Both move by about 10% from run to
run on a shared machine.
"""
import argparse
import os
import time

from benchlib import set_memory_from_argv, set_threads_from_argv, use_impl_from_argv

THREADS = set_threads_from_argv()
MEMORY = set_memory_from_argv()
IMPL = use_impl_from_argv()
import numpy as np
import real_layers
from benchlib import load_avg, traced_replay

from dwlit import simulate_kernel
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01
from dwlit.sim import isa

KINDS = ('tensor_tensor', 'tensor_reduce', 'memset', 'dma_copy')


def launch_of(spec):
    "(label, run, inputs) for a SHAPE argument."
    rng, F32 = np.random.default_rng(0), np.float32
    if spec == '2d':
        sh = dict(C=256, N=2, H=56, W=56, k_H=3, k_W=3, padding=((1, 1), (1, 1)), lhs_dilation=(2, 2))
    elif spec.startswith('1d:'):
        W_f = int(spec[3:])
        sh = dict(N=4, C=512, W=4096, W_f=W_f, padding=(W_f // 2, W_f - 1 - W_f // 2))
    else:
        name, N = spec.rsplit(':', 1); sh = real_layers.shape(name, int(N))
    if 'H' in sh:
        C, N, H, W, kH, kW = (sh[k] for k in ('C', 'N', 'H', 'W', 'k_H', 'k_W'))
        img, filt = rng.standard_normal((C, H, W, N), dtype=F32), rng.standard_normal((C, kH, kW, 1), dtype=F32)
        run = lambda: conv2d_depthwise_f01b_o01i_bf01(img, filt, sh['padding'], lhs_dilation=sh.get('lhs_dilation'))
    else:
        N, C, W, W_f = sh['N'], sh['C'], sh['W'], sh['W_f']; pad = tuple(sh['padding'])
        img, filt = rng.standard_normal((N, C, 1, W), dtype=F32), rng.standard_normal((C, 1, 1, W_f), dtype=F32)
        shape = (N, C, 1, W + sum(pad) - W_f + 1)
        run = lambda: simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, ((0, 0), pad), out_shape=shape,
                                      num_programs=sh.get('programs', 1))
    return spec, run, {'img': img, 'filter': filt}


def best(f, n):
    ts = []
    for _ in range(n):
        t = time.process_time(); f(); ts.append(time.process_time() - t)
    return min(ts) * 1e3


def measure(spec, repeat):
    label, run, inputs = launch_of(spec)
    y, tr, rp = traced_replay(run, inputs)
    S, R, A = best(run, repeat), best(rp, repeat), best(rp.allocate, repeat)
    out = [f"{label}: {len(tr)} instructions; sim {S:.2f} ms, replay {R:.2f} ms ({S / R:.2f}x); overhead {S - R:.2f} ms "
           f"= {100 * (S - R) / R:.0f}% of the replay (1.25x allows {0.25 * R:.2f} ms)"]
    saved = {k: getattr(isa.nisa, k) for k in KINDS}
    try:
        for k in KINDS: setattr(isa.nisa, k, lambda *a, **kw: None)
        K = best(run, repeat)
    finally:
        for k, f in saved.items(): setattr(isa.nisa, k, f)
    from dwlit.sim.memory import Tensor
    views = Tensor.ap, Tensor.__getitem__
    try:   # and every view free too: what is left is the kernel's loops, its calls and the launch
        for k in KINDS: setattr(isa.nisa, k, lambda *a, **kw: None)
        Tensor.ap = Tensor.__getitem__ = lambda *a, **kw: None
        L = best(run, repeat)
    finally:
        for k, f in saved.items(): setattr(isa.nisa, k, f)
        Tensor.ap, Tensor.__getitem__ = views
    out.append(f"    kernel side, nothing issued: {K:.2f} ms = {100 * K / R:.0f}% of the replay (of which launch "
               f"allocations {A:.2f} ms; with every view free too, {L:.2f} ms = {100 * L / R:.0f}%); "
               f"instructions: {S - K - R:.2f} ms = {(S - K - R) / len(tr) * 1e3:.2f} us each")
    return '\n'.join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('shapes', nargs='*')
    ap.add_argument('--repeat', type=int, default=21)
    ap.add_argument('--threads', default='1'); ap.add_argument('--memory', default='reuse')
    ap.add_argument('--impl')
    a = ap.parse_args(argv)
    shapes = a.shapes or [f"{s['name'].split(' ')[0]}:{s.get('N')}" for s in
                          real_layers.BENCH_1D() + real_layers.BENCH_2D() if real_layers.in_contract(
                              real_layers.LAYERS[s['name'].split(' ')[0]])]
    print(f"dwlit from {IMPL or 'the installed package'}; CPU time, min of {a.repeat}; BLAS threads {THREADS}; memory "
          f"{MEMORY}; load average {load_avg():.1f} on {os.cpu_count()} CPUs at the start")
    for sh in shapes: print(measure(sh, a.repeat), flush=True)
    print(f"load average at the end: {load_avg():.1f}")


if __name__ == '__main__':
    main()
