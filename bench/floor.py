"""The floor of the simulator's execution model, taken apart: where the replay's time goes, what else each instruction
could be executed with, and whether 2x the direct NumPy is within reach of the instruction stream at all.

    python bench/floor.py [--repeat 7] [--only 1d|2d] [--impl DIR] [--threads 1] [--memory reuse] [--clock cpu]

For each benchmark shape (the 1D and 2D defaults of bench_conv1d.py / bench_conv2d.py):
1. the replay's time split by instruction kind (multiply, reduce, DMA, memset), against the fastest direct NumPy;
2. every multiply (tensor_tensor) of the stream executed with each NumPy layout tried (the tap axis innermost,
   swapped to iterate the longer axis innermost, or one call per tap); all give the same bits (a product is a product);
3. every reduce (tensor_reduce) of the stream executed by each NumPy formulation tried, with a bit-for-bit comparison
   of the kernel's output when that formulation replaces every reduce of the stream, against the simulator's (np.matmul
   with a vector of ones over the (partitions, rows, taps) stack): only an identical one may replace it, since every
   result must stay what it is;
4. the floor = DMAs + memsets + the fastest multiply layout + the fastest identical reduce, and floor / direct.
If floor / direct > 2, no executor of this instruction stream through NumPy (one operation per instruction, each
finished before the next) reaches 2x the direct NumPy on that shape, however little it spends on checks.
"""
import argparse
from benchlib import set_threads_from_argv, set_memory_from_argv, use_impl_from_argv
THREADS = set_threads_from_argv()
MEMORY = set_memory_from_argv()
IMPL = use_impl_from_argv()
import numpy as np

from benchlib import set_clock, timed, med, load_avg, traced_replay, same_bits, _view, _ones, _reshaped
import bench_conv1d as b1
import bench_conv2d as b2
from dwlit import simulate_kernel
from dwlit.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.conv2d import conv2d_depthwise_f01b_o01i_bf01
from dwlit.isa import OPS


# ---------------------------------------------------------------- the ways to execute one multiply
def mul_ways(ins, store):
    "{layout: no-argument function} for one tensor_tensor record (fp32)."
    d, a, b = _view(store, ins.dst), _view(store, ins.srcs[0]), _view(store, ins.srcs[1])
    uf = OPS[ins.attrs['op']].ufunc
    if b.shape != a.shape: b = b.reshape(a.shape)
    out = _reshaped(d, a.shape)
    ways = {'tap axis innermost': lambda: uf(a, b, out=out)}
    if a.ndim >= 3:
        sa, sb, so = a.swapaxes(-1, -2), b.swapaxes(-1, -2), out.swapaxes(-1, -2)
        ways['longer axis innermost'] = lambda: uf(sa, sb, out=so, order='C')
        cols = [(a[..., k], b[..., k], out[..., k]) for k in range(a.shape[-1])]
        def per_tap():
            for x, y, z in cols: uf(x, y, out=z)
        ways['one call per tap'] = per_tap
    return ways


def red_ways(ins, store):
    "{formulation: (function, result view)} for one tensor_reduce record (fp32, add over the last axis)."
    d, x = _view(store, ins.dst), _view(store, ins.srcs[0])
    out = _reshaped(d, x.shape[:-1])
    k = x.shape[-1]; ones = _ones(k)
    ways = {'matmul with ones, per partition (the simulator)': lambda: np.matmul(x, ones, out=out),
            'np.add.reduce': lambda: np.add.reduce(x, axis=-1, out=out),
            'einsum': lambda: np.einsum('...k->...', x, out=out)}
    flat = _reshaped(x, (-1, k)) if x.flags.c_contiguous else None
    if flat is not None:
        of = out.reshape(-1)
        ways['matmul with ones, all rows at once'] = lambda: np.matmul(flat, ones, out=of)
    return ways, out


def analyse(label, sim, inputs, direct_fns, repeat):
    y, tr, rp = traced_replay(sim, inputs)
    kinds = {}
    for ins, op in zip(tr.instructions, rp.ops): kinds.setdefault(ins.op, []).append(op)
    def run_all(ops):
        def f():
            for o in ops: o()
        return f
    t = timed({'replay': rp, **{f'replay: {k}': run_all(v) for k, v in kinds.items()}, **direct_fns}, repeat)
    best = min(direct_fns, key=lambda k: med(t[k]))
    d = med(t[best])
    print(f"\n== {label}: {len(tr)} instructions; fastest direct NumPy {best} {d * 1e3:.1f} ms")
    print(f"   replay {med(t['replay']) * 1e3:.1f} ms = {med(t['replay']) / d:.2f}x direct; by kind: " +
          ', '.join(f"{k} {med(t[f'replay: {k}']) * 1e3:.1f} ms ({len(v)})" for k, v in kinds.items()))

    # multiplies, every layout (same bits: a product does not depend on the order it is computed in)
    muls = [ins for ins in tr.instructions if ins.op == 'tensor_tensor']
    ways = [mul_ways(ins, rp.store) for ins in muls]
    names = sorted(set().union(*ways))
    tm = timed({n: run_all([w[n] for w in ways if n in w]) for n in names if all(n in w for w in ways)}, repeat)
    for n in names:
        if n in tm: print(f"   multiply, {n:<44} {med(tm[n]) * 1e3:8.1f} ms")
    best_mul = min(tm, key=lambda n: med(tm[n]))

    # reduces, every formulation, checked bit for bit against the simulator's
    reds = [ins for ins in tr.instructions if ins.op == 'tensor_reduce']
    rw = [red_ways(ins, rp.store) for ins in reds]
    # bit for bit: the whole stream replayed with each formulation in place of every reduce, its output compared
    same = {}
    for n in rw[0][0]:
        if not all(n in w for w, _ in rw): continue
        it = iter(w[n] for w, _ in rw)
        ops = [next(it) if ins.op == 'tensor_reduce' else op for ins, op in zip(tr.instructions, rp.ops)]
        run_all(ops)()
        same[n] = same_bits(rp.out[:y.size].reshape(y.shape), y)
    rnames = list(same)
    trd = timed({n: run_all([w[n] for w, _ in rw]) for n in rnames}, repeat)
    for n in rnames:
        print(f"   reduce, {n:<46} {med(trd[n]) * 1e3:8.1f} ms   {'same bits' if same[n] else 'DIFFERENT bits'}")
    best_red = min((n for n in rnames if same[n]), key=lambda n: med(trd[n]))

    other = sum(med(t[f'replay: {k}']) for k in kinds if k not in ('tensor_tensor', 'tensor_reduce'))
    floor = other + med(tm[best_mul]) + med(trd[best_red])
    verdict = ('2x is out of reach for this instruction stream' if floor > 2 * d else
               'the stream itself leaves room for 2x')
    print(f"   floor = DMAs and memsets {other * 1e3:.1f} + multiplies ({best_mul}) {med(tm[best_mul]) * 1e3:.1f} + "
          f"reduces ({best_red.split(' (')[0]}) {med(trd[best_red]) * 1e3:.1f} = {floor * 1e3:.1f} ms = "
          f"{floor / d:.2f}x direct: {verdict}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=7)
    ap.add_argument('--only', choices=['1d', '2d'])
    ap.add_argument('--threads', default='1'); ap.add_argument('--memory', default='reuse')
    ap.add_argument('--clock', default='cpu', choices=['cpu', 'wall']); ap.add_argument('--impl')
    a = ap.parse_args(argv)
    set_clock(a.clock)
    print(f"floor analysis, float32; dwlit from {IMPL or 'the installed package'}; medians of {a.repeat} runs in "
          f"turns, {a.clock} time; BLAS threads {THREADS}; memory {MEMORY}; load average {load_avg():.1f}")
    rng = np.random.default_rng(0)
    if a.only != '2d':
        for sh in b1.default_shapes([3, 7, 31]):
            N, C, W, W_f = sh['N'], sh['C'], sh['W'], sh['W_f']
            pad = (W_f // 2, W_f - 1 - W_f // 2)
            img = rng.standard_normal((N, C, 1, W), dtype=np.float32)
            filt = rng.standard_normal((C, 1, 1, W_f), dtype=np.float32)
            sim = lambda: simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, ((0, 0), pad),
                                          out_shape=(N, C, 1, W))
            direct = {v.__name__: (lambda v=v: v(img, filt, pad)) for v in (b1.taps_blocked, b1.correlate)}
            analyse(sh['name'], sim, {'img': img, 'filter': filt}, direct, a.repeat)
    if a.only != '1d':
        for sh in b2.DEFAULT:
            img = rng.standard_normal((sh['C'], sh['H'], sh['W'], sh['N'])).astype(np.float32)
            filt = rng.standard_normal((sh['C'], sh['k_H'], sh['k_W'], 1)).astype(np.float32)
            dil, pad = sh['lhs_dilation'], sh['padding']
            sim = lambda: conv2d_depthwise_f01b_o01i_bf01(img, filt, pad, lhs_dilation=dil)
            direct = {v.__name__: (lambda v=v: v(img, filt, dil, pad)) for v in (b2.taps_blocked, b2.polyphase)}
            analyse(sh['name'], sim, {'img': img, 'filter': filt}, direct, a.repeat)
    print(f"\nload average at the end: {load_avg():.1f}")


if __name__ == '__main__':
    main()
