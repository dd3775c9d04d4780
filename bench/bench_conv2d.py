"""Benchmark: the simulated 2D depthwise kernel with LHS dilation against a direct NumPy depthwise convolution.

    python bench/bench_conv2d.py [--profile]

Shape (issue 4): C=256, N=2, H=W=56, 3x3 kernel, lhs_dilation (2, 2), padding 1 on every side, float32.
Both sides start from the same image; the NumPy side's dilated, padded input is built once and timed separately.
Prints the times side by side, their ratio (target: within 5x), the instruction counts, and the simulator's own
cost per instruction (tiny instructions, so that the arithmetic is negligible)."""
import sys, time, statistics
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from dwlit import trace
from dwlit.memory import NeuronCore, use_core, ndarray, float32, sbuf
from dwlit.isa import nisa, nl
from dwlit.conv2d import conv2d_depthwise_f01b_o01i_bf01, conv2d_plan

C, N, H, W, KH, KW, DIL, PAD = 256, 2, 56, 56, 3, 3, (2, 2), ((1, 1), (1, 1))
REPEAT = 5


def best_of(fn, repeat=REPEAT):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter(); r = fn(); ts.append(time.perf_counter() - t0)
    return min(ts), statistics.median(ts), r


def dilate_pad(img):
    "(C, H, W, N) -> (N, C, dil_H, dil_W) float32: zeros, strided assignment, padding."
    z = np.zeros((N, C, (H - 1) * DIL[0] + 1, (W - 1) * DIL[1] + 1), np.float32)
    z[:, :, ::DIL[0], ::DIL[1]] = img.transpose(3, 0, 1, 2)
    return np.pad(z, ((0, 0), (0, 0)) + PAD)


def numpy_taps(d, f):
    "Direct depthwise convolution: one multiply-add of a shifted slice per tap."
    oH, oW = d.shape[2] - KH + 1, d.shape[3] - KW + 1
    out = np.zeros((N, C, oH, oW), np.float32)
    for a in range(KH):
        for b in range(KW):
            out += d[:, :, a:a + oH, b:b + oW] * f[None, :, a, b, 0, None, None]
    return out


def numpy_einsum(d, f):
    return np.einsum('ncyxab,cab->ncyx', sliding_window_view(d, (KH, KW), axis=(2, 3)), f[..., 0], optimize=True)


def per_instruction_overhead(n=3000):
    "Seconds per call of tiny instructions (1 partition, 1 element), and of building one access pattern."
    core = NeuronCore()
    with use_core(core):
        a = ndarray((1, 4), float32, buffer=sbuf, name='a'); b = ndarray((1, 4), float32, buffer=sbuf, name='b')
        c = ndarray((1, 4), float32, buffer=sbuf, name='c')
        a.write(np.ones((1, 4))); b.write(np.ones((1, 4)))
        va, vb, vc = a.ap([[4, 1], [1, 1]]), b.ap([[4, 1], [1, 1]]), c.ap([[4, 1], [1, 1]])
        va3 = a.ap([[4, 1], [1, 1], [1, 1]])
        out = {}
        for name, fn in [('tensor_tensor', lambda: nisa.tensor_tensor(vc, va, vb, nl.multiply)),
                         ('tensor_reduce', lambda: nisa.tensor_reduce(vc, nl.add, va3, axis=2)),
                         ('memset', lambda: nisa.memset(vc, 0)),
                         ('dma_copy', lambda: nisa.dma_copy(vc, va)),
                         ('.ap() (one view)', lambda: a.ap([[4, 1], [1, 1]], offset=1))]:
            t0 = time.perf_counter()
            for _ in range(n): fn()
            out[name] = (time.perf_counter() - t0) / n
        with trace():
            t0 = time.perf_counter()
            for _ in range(n): nisa.tensor_tensor(vc, va, vb, nl.multiply)
            out['tensor_tensor, traced'] = (time.perf_counter() - t0) / n
    return out


def main():
    rng = np.random.default_rng(0)
    img = rng.standard_normal((C, H, W, N)).astype(np.float32)
    filt = rng.standard_normal((C, KH, KW, 1)).astype(np.float32)
    kernel = lambda: conv2d_depthwise_f01b_o01i_bf01(img, filt, PAD, lhs_dilation=DIL)

    t_dil, _, d = best_of(lambda: dilate_pad(img))
    t_taps, m_taps, r_taps = best_of(lambda: numpy_taps(d, filt))
    t_ein, m_ein, r_ein = best_of(lambda: numpy_einsum(d, filt))
    kernel()                                                                  # warm up
    t_sim, m_sim, y = best_of(kernel)
    np.testing.assert_allclose(y, r_taps, atol=1e-4)
    np.testing.assert_allclose(r_ein, r_taps, atol=1e-4)
    with trace() as tr: kernel()
    plan = conv2d_plan(img.shape, filt.shape, PAD, lhs_dilation=DIL)
    n_ins = len(tr)

    print(f"shape: C={C}, N={N}, H=W={H}, kernel {KH}x{KW}, lhs_dilation {DIL}, padding {PAD}, float32")
    print(f"dilated, padded input {plan.dil_H}x{plan.dil_W}; output {N}x{C}x{plan.out_H}x{plan.out_W}")
    print(f"\n{'':<44}{'best':>10}{'median':>10}")
    print(f"{'simulated kernel (dwlit)':<44}{t_sim * 1e3:>8.1f}ms{m_sim * 1e3:>8.1f}ms")
    print(f"{'NumPy, one multiply-add per tap (float32)':<44}{t_taps * 1e3:>8.1f}ms{m_taps * 1e3:>8.1f}ms")
    print(f"{'NumPy, sliding_window_view + einsum':<44}{t_ein * 1e3:>8.1f}ms{m_ein * 1e3:>8.1f}ms")
    print(f"{'(NumPy: building the dilated, padded input)':<44}{t_dil * 1e3:>8.1f}ms")
    base = min(t_taps, t_ein)
    print(f"\nratio simulated / fastest NumPy = {t_sim / base:.2f}x (target: within 5x); "
          f"vs NumPy including its dilation: {t_sim / (base + t_dil):.2f}x")
    print(f"\ninstructions: {n_ins} in all, {tr.counts()}")
    print(f"simulated time per instruction: {t_sim / n_ins * 1e6:.1f} us")
    ov = per_instruction_overhead()
    print("\nsimulator overhead per call (1 partition x 1 element, so no arithmetic to speak of):")
    for k, v in ov.items(): print(f"  {k:<24}{v * 1e6:>7.1f} us")
    fixed = sum(cnt * ov.get(op, ov['tensor_tensor']) for op, cnt in tr.counts().items())
    print(f"=> fixed overhead of this kernel's {n_ins} instructions ~ {fixed * 1e3:.0f} ms of {t_sim * 1e3:.0f} ms; "
          f"the rest is NumPy arithmetic on (128 x {plan.out_W}) operands")

    # the one operation that dominates: tensor_reduce over a short trailing axis (the kernel's (128, out_W, 9) products)
    v = np.random.default_rng(1).standard_normal((128, plan.out_W, KH * KW)).astype(np.float32)
    t_red, _, _ = best_of(lambda: [np.add.reduce(v, axis=2) for _ in range(20)])
    t_ein1, _, _ = best_of(lambda: [np.einsum('pwk->pw', v) for _ in range(20)])
    print(f"\nNumPy reduce of one (128, {plan.out_W}, {KH * KW}) product over its last axis: np.add.reduce "
          f"{t_red / 20 * 1e6:.0f} us, einsum {t_ein1 / 20 * 1e6:.0f} us; x {tr.counts()['tensor_reduce']} reduces = "
          f"{t_red / 20 * tr.counts()['tensor_reduce'] * 1e3:.0f} ms vs {t_ein1 / 20 * tr.counts()['tensor_reduce'] * 1e3:.0f} ms")

    if '--profile' in sys.argv:
        import cProfile, pstats
        pr = cProfile.Profile(); pr.enable(); kernel(); pr.disable()
        pstats.Stats(pr).sort_stats('tottime').print_stats(12)


if __name__ == '__main__':
    main()
