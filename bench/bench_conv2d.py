"""The simulated 2D depthwise kernel (LHS dilation) against the fastest direct NumPy and its instruction stream run bare, in one run.

    python bench/bench_conv2d.py [--repeat 5] [--layer name:C,N,H,W,k_H,k_W,dil_H,dil_W,pad_t,pad_b,pad_l,pad_r]...
                                 [--layers MODULE:ATTR] [--dtype float32] [--threads 1] [--clock cpu|wall]
                                 [--memory reuse|default] [--impl DIR] [--profile]

Default shape: C=256, N=2, H=W=56, 3x3 kernel, lhs_dilation (2, 2), padding 1 on every side.
For each shape, measured in turns so that all see the same machine load:
- sim: `conv2d_depthwise_f01b_o01i_bf01(img, filt, ...)` through the simulator, everything included;
- direct: every direct NumPy formulation below, each timed from the same (C, H, W, N) image to the (N, C, H', W')
  output, so the dense ones include building the dilated, padded image; the fastest is the baseline;
- replay: the kernel's instruction stream as bare NumPy calls on views built beforehand (benchlib.Replay),
  reproducing the simulated output bit for bit.
`polyphase` skips the zeros the dilation inserts (it multiplies only the taps that land on image pixels); the kernel,
like the original, multiplies every tap on the dilated grid, so `dense` names the fastest that does the same work.
`--layer`/`--layers` add shapes (the real layers of chapter 25): dicts with keys name, C, N, H, W, k_H, k_W and
optionally lhs_dilation=(dH, dW), padding=((t, b), (l, r)) ('same' for the kernel if absent), stride (passed to the
kernel: a shape out of its contract prints the kernel's error instead of times).
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

from dwlit import SimulatorError
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01

F32 = np.float32


# ---------------------------------------------------------------- direct NumPy: one function per formulation
def dilate_pad(img, dil, pad):
    "(C, H, W, N) -> (N, C, dil_H, dil_W) float32: zeros, a strided assignment, padding."
    C, H, W, N = img.shape
    (t, b), (l, r) = pad
    z = np.zeros((N, C, (H - 1) * dil[0] + 1 + t + b, (W - 1) * dil[1] + 1 + l + r), F32)
    z[:, :, t:t + (H - 1) * dil[0] + 1:dil[0], l:l + (W - 1) * dil[1] + 1:dil[1]] = img.transpose(3, 0, 1, 2)
    return z


def einsum_optimize(img, filt, dil, pad):
    "dilate + sliding_window_view + einsum(optimize=True)"
    d = dilate_pad(img, dil, pad)
    kH, kW = filt.shape[1:3]
    return np.einsum('ncyxab,cab->ncyx', sliding_window_view(d, (kH, kW), axis=(2, 3)), filt[..., 0].astype(F32),
                     optimize=True)


def einsum_plain(img, filt, dil, pad):
    "dilate + sliding_window_view + einsum"
    d = dilate_pad(img, dil, pad)
    kH, kW = filt.shape[1:3]
    return np.einsum('ncyxab,cab->ncyx', sliding_window_view(d, (kH, kW), axis=(2, 3)), filt[..., 0].astype(F32))


def matmul_blocked(img, filt, dil, pad, B=8):
    "dilate + im2col of 8 channels at a time @ their filters (matmul)"
    d = dilate_pad(img, dil, pad)
    N, C = d.shape[:2]; kH, kW = filt.shape[1:3]
    oH, oW = d.shape[2] - kH + 1, d.shape[3] - kW + 1
    f = filt[..., 0].astype(F32).reshape(C, kH * kW, 1)
    out = np.empty((N, C, oH, oW), F32)
    for n in range(N):
        for c0 in range(0, C, B):
            cols = sliding_window_view(d[n, c0:c0 + B], (kH, kW), axis=(1, 2)).reshape(-1, oH * oW, kH * kW)
            out[n, c0:c0 + B] = np.matmul(cols, f[c0:c0 + B]).reshape(-1, oH, oW)
    return out


def taps(img, filt, dil, pad):
    "dilate + one shifted multiply-add per tap, whole arrays"
    d = dilate_pad(img, dil, pad)
    kH, kW = filt.shape[1:3]; f = filt[..., 0].astype(F32)
    oH, oW = d.shape[2] - kH + 1, d.shape[3] - kW + 1
    out = d[:, :, 0:oH, 0:oW] * f[None, :, 0, 0, None, None]; tmp = np.empty_like(out)
    for a in range(kH):
        for b in range(kW):
            if a or b:
                np.multiply(d[:, :, a:a + oH, b:b + oW], f[None, :, a, b, None, None], out=tmp); out += tmp
    return out


def taps_blocked(img, filt, dil, pad, B=8):
    "dilate + one shifted multiply-add per tap, 8 channels at a time"
    d = dilate_pad(img, dil, pad)
    N, C = d.shape[:2]; kH, kW = filt.shape[1:3]; f = filt[..., 0].astype(F32)[:, :, :, None, None]
    oH, oW = d.shape[2] - kH + 1, d.shape[3] - kW + 1
    out = np.empty((N, C, oH, oW), F32); tmp = np.empty((B, oH, oW), F32)
    for n in range(N):
        for c0 in range(0, C, B):
            o, x, ff = out[n, c0:c0 + B], d[n, c0:c0 + B], f[c0:c0 + B]
            t = tmp[:o.shape[0]]
            np.multiply(x[:, 0:oH, 0:oW], ff[:, 0, 0], out=o)
            for a in range(kH):
                for b in range(kW):
                    if a or b:
                        np.multiply(x[:, a:a + oH, b:b + oW], ff[:, a, b], out=t); o += t
    return out


def polyphase(img, filt, dil, pad, B=8):
    "no dilated image: each tap multiplies only the pixels it lands on, into a strided slice of the output"
    C, H, W, N = img.shape; kH, kW = filt.shape[1:3]
    (t, b), (l, r) = pad
    oH = (H - 1) * dil[0] + 1 + t + b - kH + 1; oW = (W - 1) * dil[1] + 1 + l + r - kW + 1
    X = img.transpose(3, 0, 1, 2).astype(F32)                  # (N, C, H, W) view
    f = filt[..., 0].astype(F32)[:, :, :, None, None]
    out = np.zeros((N, C, oH, oW), F32)

    def hits(k, p, dl, n, on):
        "output rows y (start, stop) and image rows i (start) with y + k - p = i * dl, 0 <= i < n, 0 <= y < on"
        ys = [y for y in range(on) if (y + k - p) % dl == 0 and 0 <= (y + k - p) // dl < n]
        return (ys[0], ys[-1] + 1, (ys[0] + k - p) // dl, len(ys)) if ys else None
    plan = []
    for a in range(kH):
        for c in range(kW):
            hy, hx = hits(a, t, dil[0], H, oH), hits(c, l, dil[1], W, oW)
            if hy and hx: plan.append((a, c, hy, hx))
    for n in range(N):
        for c0 in range(0, C, B):
            o, x, ff = out[n, c0:c0 + B], X[n, c0:c0 + B], f[c0:c0 + B]
            for a, c, (y0, y1, i0, ny), (x0, x1, j0, nx) in plan:
                o[:, y0:y1:dil[0], x0:x1:dil[1]] += x[:, i0:i0 + ny, j0:j0 + nx] * ff[:, a, c]
    return out


VARIANTS = [einsum_optimize, einsum_plain, matmul_blocked, taps, taps_blocked, polyphase]
DENSE = {'einsum_optimize', 'einsum_plain', 'matmul_blocked', 'taps', 'taps_blocked'}


def reference64(img, filt, dil, pad):
    "float64 result and the scale sum |x * f| per output element."
    C, H, W, N = img.shape
    (t, b), (l, r) = pad
    z = np.zeros((N, C, (H - 1) * dil[0] + 1 + t + b, (W - 1) * dil[1] + 1 + l + r))
    z[:, :, t:t + (H - 1) * dil[0] + 1:dil[0], l:l + (W - 1) * dil[1] + 1:dil[1]] = \
        img.astype(np.float64).transpose(3, 0, 1, 2)
    kH, kW = filt.shape[1:3]
    win = sliding_window_view(z, (kH, kW), axis=(2, 3))
    f = filt[..., 0].astype(np.float64)
    return np.einsum('ncyxab,cab->ncyx', win, f), np.einsum('ncyxab,cab->ncyx', np.abs(win), np.abs(f))


# ---------------------------------------------------------------- shapes
DEFAULT = [dict(name="C=256 N=2 56x56 3x3 dil 2 pad 1", C=256, N=2, H=56, W=56, k_H=3, k_W=3, lhs_dilation=(2, 2),
                padding=((1, 1), (1, 1)))]


def parse_layer(s):
    "'name:C,N,H,W,k_H,k_W[,dil_H,dil_W[,pad_t,pad_b,pad_l,pad_r]]' -> shape dict"
    name, _, nums = s.rpartition(':')
    v = [int(x) for x in nums.split(',')]
    d = dict(name=name or s, C=v[0], N=v[1], H=v[2], W=v[3], k_H=v[4], k_W=v[5])
    if len(v) >= 8: d['lhs_dilation'] = (v[6], v[7])
    if len(v) >= 12: d['padding'] = ((v[8], v[9]), (v[10], v[11]))
    return d


def run_shape(sh, dtype, repeat, prof):
    C, N, H, W, kH, kW = (sh[k] for k in ('C', 'N', 'H', 'W', 'k_H', 'k_W'))
    dil = tuple(sh.get('lhs_dilation', (1, 1)))
    pad = tuple(tuple(p) for p in sh.get('padding', ((kH // 2, kH - 1 - kH // 2), (kW // 2, kW - 1 - kW // 2))))
    rng = np.random.default_rng(0)
    img = rng.standard_normal((C, H, W, N), dtype=F32).astype(dtype)
    filt = rng.standard_normal((C, kH, kW, 1), dtype=F32).astype(dtype)
    stride = sh.get('stride')                             # anything but (1, 1) is out of the kernel's contract
    sim = lambda: conv2d_depthwise_f01b_o01i_bf01(img, filt, pad, stride=stride, lhs_dilation=dil)
    try: y, tr, rp = traced_replay(sim, {'img': img, 'filter': filt})
    except SimulatorError as e: return f"{sh['name']:<40}out of contract: {str(e)[:160]}", None
    ref, scale = reference64(img, filt, dil, pad)
    check_close(y, ref, scale, dtype, kH * kW)
    direct, once = {}, {}
    for v in VARIANTS:
        fn = (lambda v=v: v(img, filt, dil, pad).astype(dtype, copy=False))
        t0 = CLOCK[0](); y_v = fn(); once[v.__name__] = CLOCK[0]() - t0
        check_close(y_v, ref, scale, dtype, kH * kW)
        direct[v.__name__] = fn
    slow = {k: [t] for k, t in once.items() if t > 4 * min(once.values())}
    direct = {k: f for k, f in direct.items() if k not in slow}
    warm(sim)
    if prof: profile(sim)
    fns = dict(sim=sim, replay=rp, alloc=rp.allocate, **direct)
    t = timed(fns, repeat)
    tdir = {k: t[k] for k in direct}
    best = min(tdir, key=lambda k: med(tdir[k]))
    dense = [k for k in tdir if k in DENSE]
    best_dense = min(dense, key=lambda k: med(tdir[k])) if dense else None
    lines = [row(sh['name'], t['sim'], tdir[best], t['replay'], best)]
    if best_dense and best_dense != best:
        lines.append(row('  same, vs the fastest dense NumPy', t['sim'], tdir[best_dense], t['replay'], best_dense))
    extra = {f'{k} (once)': v for k, v in slow.items()}
    more = (targets(t['sim'], tdir[best], t['replay']) + '\n' + detail(tdir, extra, t) +
            f"\n    {len(tr)} instructions: " +
            ', '.join(f"{k} {v}" for k, v in tr.counts().items()))
    return '\n'.join(lines), more


def main(shapes=None, argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--repeat', type=int, default=5)
    ap.add_argument('--layer', action='append', default=[], help="name:C,N,H,W,k_H,k_W[,dil_H,dil_W[,t,b,l,r]]")
    ap.add_argument('--layers', help="MODULE:ATTR, a list of shape dicts (e.g. the real layers' table)")
    add_common_args(ap)
    a = ap.parse_args(argv)
    shapes = shapes_of(shapes, DEFAULT, a, parse_layer)
    report([(run_shape, sh) for sh in shapes], a, '2D depthwise (lhs dilation)', IMPL, THREADS, MEMORY)

if __name__ == '__main__':
    main()
