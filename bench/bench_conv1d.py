"""Simulated 1D depthwise entry point vs a direct NumPy depthwise convolution, side by side in one run.

    python bench/bench_conv1d.py [--repeat 3] [--profile]

Shape: N=4, C=512, W=4096, 'same' padding (W_f // 2 each side, so W_out = W for odd W_f), one program, trn1, float32.
The simulator executes every instruction of the kernel (DMAs, memsets, every multiply and reduce through its
access-pattern views); NumPy computes the same convolution with sliding_window_view + einsum. Reported: best of
`repeat` wall-clock times of each, measured alternately, and their ratio (target: within 2x).
"""
import argparse, time
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from dwlit import simulate_kernel, trace
from dwlit.conv1d import conv1d_depthwise_bf01_oi01_bf01, PACK, div_ceil


def numpy_depthwise(img, filt, pad):
    "Direct NumPy depthwise 1D cross-correlation: pad, sliding windows, einsum over the taps."
    x = np.pad(img[:, :, 0, :], ((0, 0), (0, 0), pad))
    win = sliding_window_view(x, filt.shape[3], axis=2)            # (N, C, W_out, W_f), no copy
    return np.einsum('ncwk,ck->ncw', win, filt[:, 0, 0, :])[:, :, None, :]


def interleaved(f, g, repeat):
    "Best-of-`repeat` times of f and g, measured alternately so both see the same machine load."
    tf, tg = [], []
    for _ in range(repeat):
        t = time.perf_counter(); rf = f(); tf.append(time.perf_counter() - t)
        t = time.perf_counter(); rg = g(); tg.append(time.perf_counter() - t)
    return min(tf), rf, min(tg), rg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--profile', action='store_true')
    a = ap.parse_args()
    N, C, W = 4, 512, 4096
    rng = np.random.default_rng(0)
    print(f"N={N} C={C} W={W} float32, one program, 'same' padding; best of {a.repeat}")
    print(f"{'W_f':>4} {'path':>10} {'instructions':>13} {'simulated s':>12} {'numpy s':>9} {'ratio':>7}")
    for W_f in (3, 7, 31):
        img = rng.standard_normal((N, C, 1, W), dtype=np.float32)
        filt = rng.standard_normal((C, 1, 1, W_f), dtype=np.float32)
        pad = (W_f // 2, W_f - 1 - W_f // 2)
        W_out = W + sum(pad) - W_f + 1
        sim = lambda: simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, ((0, 0), pad),
                                      out_shape=(N, C, 1, W_out))
        ref = lambda: numpy_depthwise(img, filt, pad)
        if a.profile:
            import cProfile, pstats
            cProfile.runctx('sim()', globals(), locals(), '/tmp/conv1d.prof')
            pstats.Stats('/tmp/conv1d.prof').sort_stats('tottime').print_stats(14)
        with trace() as tr: sim()
        t_sim, y_sim, t_ref, y_ref = interleaved(sim, ref, a.repeat)
        err = np.abs(y_sim - y_ref).max()
        assert err < 1e-3, f"simulated result differs from NumPy by {err}"
        path = 'default' if div_ceil(W_out, div_ceil(PACK, W_f)) == 1 else 'f_packing'
        print(f"{W_f:>4} {path:>10} {len(tr):>13} {t_sim:>12.3f} {t_ref:>9.3f} {t_sim / t_ref:>6.2f}x")


if __name__ == '__main__':
    main()
