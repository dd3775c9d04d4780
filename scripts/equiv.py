"""Same results, same traces, same errors: dump what a dwlit package does on many generated cases, or compare two dumps.

    python scripts/equiv.py dump OUT.pkl [--impl DIR] [--seed 12345] [--cases 1d=150,2d=60,ops=200,isa=200,bad=200,launch=120,plans=200,scalar=150]
    python scripts/equiv.py compare A.pkl B.pkl [--expect REGEX]

A change to how the simulator executes must leave every result and every trace exactly as they
were. `dump` runs generated cases through the package (the installed one, or the one in DIR with `--impl`) and keeps,
for each case:
- every output's dtype, shape, bytes (sha256) and layout flags; for a tuple or list, its type and each item;
- every field of every trace record, and each record's text (tensor ids renumbered by first use: they come from a
  global counter, so two processes number them differently);
- every core's SBUF and PSUM peak and final usage (`cores=`);
- every error's type and message, and what a case did before it.
The cases: the three 1D kernels and the 2D kernel on random shapes, padding, dilations, programs and dtypes (fp32,
fp16, bf16); single instructions on random windows, broadcasts, in-place and strided destinations; every other
intrinsic (copies, transposes, matmuls, DMAs, fills) with good and bad operands; generated bad patterns, offsets and
indexes, each tried twice after a good one (a remembered pattern must never turn a bad call into a good one, nor
change a good one); and launches (what a kernel returns, which arguments become tensors, the launcher's own checks).
`compare` exits 1 and shows the first differences if any case differs; with `--expect REGEX`, a case whose first
difference is a call the new code refuses with a message matching REGEX (a deliberate new rule) is counted apart.
"""
import hashlib
import math
import os
import pickle
import re
import sys

if os.environ.get('PYTHONHASHSEED') != '0':   # a set of strings prints in hash order: the same order in every dump
    os.environ['PYTHONHASHSEED'] = '0'; os.execv(sys.executable, [sys.executable] + sys.argv)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'bench'))
from benchlib import use_impl_from_argv  # noqa: E402  (bench/benchlib.py: --impl DIR)

IMPL = use_impl_from_argv()
import ml_dtypes
import numpy as np

import dwlit
from dwlit import SimulatorError, kernel, simulate_kernel, trace
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01, conv1d_depthwise_default, conv1d_depthwise_f_packing
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01
from dwlit.sim import isa as nisa
from dwlit.sim import language as nl
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.memory import bfloat16, float16, float32, hbm, ndarray, psum, sbuf, shared_hbm

DT = {'float32': np.float32, 'float16': np.float16, 'bfloat16': ml_dtypes.bfloat16}
DTS = [float32, float16, bfloat16]


# ---------------------------------------------------------------- canonical forms
def acc(a):
    "An Access record's fields (the ones every version has), as a tuple."
    return (a.tensor, a.tensor_id, a.buffer, a.pattern, a.offset, a.lo, a.hi)


def rec(tr):
    "Every field of every record, as plain tuples, and the record's text."
    return [(i.op, i.engine, i.program_id, acc(i.dst), tuple(acc(s) for s in i.srcs), i.partitions, i.free_elems,
             i.dtype, tuple(sorted((k, repr(v)) for k, v in i.attrs.items())), str(i)) for i in tr.instructions]


def norm_ids(records):
    "Tensor ids renumbered by first appearance."
    m = {}
    def f(a): return (a[0], m.setdefault(a[1], len(m)), *a[2:])
    return [(r[0], r[1], r[2], f(r[3]), tuple(f(s) for s in r[4]), *r[5:]) for r in records]


def digest(y):
    "dtype, shape, layout flags and bytes of an array."
    c = np.ascontiguousarray(y)
    return ('array', y.dtype.str, y.shape, bool(y.flags.c_contiguous), bool(y.flags.writeable),
            hashlib.sha256(c.tobytes()).hexdigest())


class Attempt(tuple):
    "What `attempt` saw: ('ok', canonical result) or ('error', type, message)."


def canon(x):
    "A comparable description of any result."
    if isinstance(x, Attempt): return tuple(x)
    if isinstance(x, np.ndarray): return digest(x)
    if isinstance(x, (tuple, list)): return (type(x).__name__, tuple(canon(v) for v in x))
    if type(x).__name__ == 'View':
        return ('View', repr(x), repr(x.pattern), type(x.pattern).__name__, type(x.pattern[0]).__name__, x.offset,
                x.shape, digest(x.array) if x.size <= 10**6 else None)
    return ('value', type(x).__name__, clean(repr(x)))


def clean(msg: str) -> str:
    "A message without the memory addresses some reprs carry (a generator's, a function's): they differ per process."
    return re.sub(r' at 0x[0-9a-f]+', ' at 0x?', msg)


def attempt(f):
    "('ok', result) or ('error', type, message)."
    try: return Attempt(('ok', canon(f())))
    except Exception as e: return Attempt(('error', type(e).__name__, clean(str(e))))


def run_case(fn):
    cores = []
    with trace() as tr:
        try: y = fn(cores)
        except Exception as e: return ('error', type(e).__name__, clean(str(e)), norm_ids(rec(tr)))
    peaks = [(c.sbuf.peak, c.psum.peak, c.sbuf.used, c.psum.used) for c in cores]
    return ('ok', canon(y), norm_ids(rec(tr)), peaks)


# ---------------------------------------------------------------- the kernels
def cases_1d(n, rng):
    for k in range(n):
        dt = ['float32', 'float16', 'bfloat16'][k % 3]
        N = int(rng.integers(1, 4)); C = int(rng.choice([1, 5, 127, 128, 129, 200, 256, 300, 384]))
        W_f = int(rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 100, 255, 511]))
        pl, pr = int(rng.integers(0, 5)), int(rng.integers(0, 5))
        F = -(-512 // W_f)
        W_out = int(rng.integers(1, min(2500, F * 12) + 1))
        W = W_out + W_f - 1 - pl - pr
        if W < 1: W = 1; W_out = W + pl + pr - W_f + 1
        if W_out < 1: continue
        P = int(rng.integers(1, -(-C // 128) + 2))
        which = ['entry', 'default', 'f_packing'][k % 3] if W_f < 512 else 'default'
        img = rng.standard_normal((N, C, 1, W)).astype(DT[dt]); filt = rng.standard_normal((C, 1, 1, W_f)).astype(DT[dt])
        def fn(cores, img=img, filt=filt, pl=pl, pr=pr, P=P, which=which, shape=(N, C, 1, W_out)):
            pad = ((0, 0), (pl, pr))
            if which == 'entry':
                return simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, pad, out_shape=shape, num_programs=P,
                                       cores=cores)
            k = conv1d_depthwise_default if which == 'default' else conv1d_depthwise_f_packing
            return simulate_kernel(k, img, filt, np.zeros(shape, img.dtype), pad, num_programs=P, cores=cores)
        yield (f"1d {which} N={N} C={C} W={W} W_f={W_f} pad=({pl},{pr}) P={P} {dt}", fn)


def cases_2d(n, rng):
    for k in range(n):
        dt = ['float32', 'float16', 'bfloat16'][k % 3]
        C = int(rng.choice([1, 3, 64, 128, 130, 256])); N = int(rng.integers(1, 3))
        H, W = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        kh, kw = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        dh, dw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        pads = tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(2))
        perm = (1, 0, 3, 2) if k % 5 == 4 else None
        shape = (C, N, W, H) if perm else (C, H, W, N)
        img = rng.standard_normal(shape).astype(DT[dt]); filt = rng.standard_normal((C, kh, kw, 1)).astype(DT[dt])
        book = 'literal' if k % 7 == 6 else 'fixed'
        def fn(cores, img=img, filt=filt, pads=pads, dh=dh, dw=dw, perm=perm, book=book):
            return simulate_kernel(conv2d_depthwise_f01b_o01i_bf01, img, filt, pads, lhs_dilation=(dh, dw), in_perm=perm,
                                   bookkeeping=book, cores=cores)
        yield (f"2d C={C} N={N} H={H} W={W} k={kh}x{kw} dil=({dh},{dw}) pads={pads} perm={perm} {book} {dt}", fn)


# ---------------------------------------------------------------- multiply and reduce on random windows
def cases_ops(n, rng):
    "Single instructions on random patterns, including in-place, broadcast, strided and bad ones."
    ops = [nl.multiply, nl.add, nl.subtract, nl.maximum, nl.minimum]
    for k in range(n):
        dt = DTS[k % 3]
        P = int(rng.integers(1, 129)); a_ = int(rng.integers(1, 40)); b_ = int(rng.integers(1, 12))
        seed = int(rng.integers(0, 2**31)); kind = k % 8
        def fn(cores, dt=dt, P=P, a_=a_, b_=b_, seed=seed, kind=kind, op=ops[k % 5]):
            r = np.random.default_rng(seed)
            core = NeuronCore(); cores.append(core)
            with use_core(core):
                t = ndarray((P, a_ + b_ + 2, b_), dt, name='t'); t.write(r.standard_normal(t.shape))
                u = ndarray((P, b_), dt, name='u'); u.write(r.standard_normal(u.shape))
                o = ndarray((P, a_ * b_ + 3), dt, name='o')
                ps = t.partition_size
                win = t.ap([[ps, P], [1, a_], [1, b_]], offset=int(r.integers(0, 3)))
                bc = u.ap([[b_, P], [0, a_], [1, b_]])
                if kind == 0: nisa.tensor_tensor(o[:, :a_ * b_], win, bc, op)
                elif kind == 1: nisa.tensor_tensor(o.ap([[o.partition_size, P], [b_, a_], [1, b_]], offset=1), bc, win, op)
                elif kind == 2:
                    nisa.tensor_tensor(t.ap([[ps, P], [1, a_ * b_]]), t.ap([[ps, P], [b_, a_], [1, b_]], offset=1), bc, op)
                    o = t
                elif kind == 3: nisa.tensor_reduce(o[:, :a_], op, t.ap([[ps, P], [b_, a_], [1, b_]]), axis=2)
                elif kind == 4: nisa.tensor_reduce(o[:, 1:2], op, t.ap([[ps, P], [b_, a_], [1, b_]]), axis=(1, 2), negate=True)
                elif kind == 5:
                    nisa.memset(o, 0.5); nisa.dma_copy(o[:, :a_], t.ap([[ps, P], [1, a_]]))
                elif kind == 6: nisa.tensor_tensor(o[:, :a_ * b_], win, t[:, :a_, :b_], op)      # getitem views
                else:
                    errs = []
                    for bad in (lambda: t.ap([[ps, P], [1, a_ * 1000]]), lambda: t.ap([[ps, P], [1.0, 2]]),
                                lambda: t.ap([[ps, P], [1, 2]], offset=-1), lambda: t.ap([[ps, P], [1, 2]], offset=1.5),
                                lambda: t.ap([]), lambda: (t.ap([[ps, P], [1, 2]]), t.ap([[ps, P], [1.0, 2]])),
                                lambda: (t[:, :2], t[:, :2.0]), lambda: (t[:, 1:3], t[:, np.int64(1):3])[1].pattern,
                                lambda: t.ap([[ps, P], [True, 2]]).pattern, lambda: t.ap([[ps + 1, 2], [1, 2]]),
                                lambda: t[0], lambda: t[:, :2.0], lambda: t[:, ::0], lambda: t[:, 10**6],
                                lambda: t[:, True], lambda: t.ap(x for x in [[ps, P], [1, 2]]),
                                lambda: t.ap([[ps, P], [1, 0]]), lambda: nisa.tensor_tensor(o[:, :3], win, bc, op),
                                lambda: nisa.tensor_tensor(o.ap([[o.partition_size, P], [0, 2]]), win[:, :1, :2],
                                                           bc[:, :1, :2], op)):
                        for _ in range(2):      # twice: a cache must not turn the second call into a success
                            errs.append(attempt(bad))
                    raise SimulatorError(repr(errs))
                return o.numpy()
        yield (f"op kind={kind} P={P} a={a_} b={b_} {np.dtype(dt).name}", fn)


# ---------------------------------------------------------------- every other intrinsic, good and bad operands
def _tile(r, shape, dt, buffer, name):
    t = ndarray(shape, dt, buffer=buffer, name=name)
    t.write(r.standard_normal(shape))
    return t


def cases_isa(n, rng):
    ops = [nl.multiply, nl.add, nl.subtract, nl.maximum, nl.minimum]
    buffers = [sbuf, psum, hbm]
    for k in range(n):
        seed = int(rng.integers(0, 2**31)); kind = k % 9
        def fn(cores, seed=seed, kind=kind):
            r = np.random.default_rng(seed)
            pick = lambda xs: xs[int(r.integers(0, len(xs)))]
            core = NeuronCore(pick(['trn1', 'trn2', 'trn3'])); cores.append(core)
            out = []
            with use_core(core):
                P, F = int(r.integers(1, 129)), int(r.integers(1, 40))
                dt1, dt2 = pick(DTS), pick(DTS)
                if kind == 0:                                       # tensor_copy, SBUF/PSUM, engines, in place
                    a = _tile(r, (P, F), dt1, pick([sbuf, psum]), 'a')
                    b = _tile(r, (P, F), dt2, pick([sbuf, psum, hbm]), 'b')
                    eng = pick(['Vector', 'Scalar', 'GpSimd', 'Tensor', 'DMA'])
                    out.append(attempt(lambda: nisa.tensor_copy(b, a, engine=eng)))
                    out.append(attempt(lambda: nisa.tensor_copy(a[:, :F // 2 + 1], a[:, F // 2:], engine='Vector')))
                    out.append(attempt(lambda: nisa.tensor_copy(a, b[:, :max(F - 1, 1)])))
                    out += [attempt(lambda: a.numpy()), attempt(lambda: b.numpy())]
                elif kind == 1:                                     # dve_transpose, perms good and bad
                    x, y = int(r.integers(1, 6)), int(r.integers(1, 6))
                    a = _tile(r, (P, x, y, 2), dt1, sbuf, 'a')
                    b = ndarray((P, 2, y, x), dt2, buffer=pick([sbuf, sbuf, psum, hbm]), name='b')
                    perm = pick([None, (3, 2, 1), (1, 2, 3), (2, 1), (3, 2, 2), [3, 2, 1], (3.0, 2, 1), (True, 2, 3), 321])
                    out.append(attempt(lambda: nisa.dve_transpose(b, a, perm)))
                    out.append(attempt(lambda: nisa.dve_transpose(b[:, :1], a)))
                    out.append(attempt(lambda: b.numpy()))
                elif kind == 2:                                     # nc_matmul
                    K, M, N = int(r.integers(1, 129)), pick([1, 5, 128, 129]), pick([1, 7, 512, 513])
                    st_ = _tile(r, (K, M), dt1, pick([sbuf, sbuf, psum]), 'st')
                    mv = _tile(r, (pick([K, K, K + 1]) if K < 128 else K, N), dt2, sbuf, 'mv')
                    d = ndarray((M, N), float32, buffer=pick([psum, psum, sbuf]), name='d') if M <= 128 else None
                    if d is not None:
                        out.append(attempt(lambda: nisa.memset(d, 0.25)))
                        out.append(attempt(lambda: nisa.nc_matmul(d, st_, mv, accumulate=bool(r.integers(0, 2)))))
                        out.append(attempt(lambda: nisa.nc_matmul(d, st_[:, :1], mv)))
                        out.append(attempt(lambda: d.numpy()))
                    out.append(attempt(lambda: nisa.nc_matmul(mv, st_, mv)))
                elif kind == 3:                                     # nc_transpose, data in any buffer
                    a = _tile(r, (P, F), dt1, pick(buffers), 'a')
                    d = ndarray((F, P), dt2, buffer=pick([psum, psum, sbuf]), name='d') if F <= 128 else None
                    if d is not None:
                        out.append(attempt(lambda: nisa.nc_transpose(d, a)))
                        out.append(attempt(lambda: d.numpy()))
                        out.append(attempt(lambda: nisa.nc_transpose(d[:, :1], a)))
                    out.append(attempt(lambda: nisa.nc_transpose(a, a)))
                elif kind == 4:                                     # dma_copy, any pattern, any buffer
                    h = _tile(r, (F, P), dt1, pick([hbm, shared_hbm]), 'h')
                    s = ndarray((P, F), pick([dt1, dt1, dt2]), buffer=pick([sbuf, sbuf, psum]), name='s')
                    out.append(attempt(lambda: nisa.dma_copy(s, h.ap([[1, P], [P, F]]))))
                    out.append(attempt(lambda: nisa.dma_copy(h.ap([[1, P], [P, F]]), s)))
                    out.append(attempt(lambda: nisa.dma_copy(h.ap([[P, F - 1 if F > 1 else 1], [1, P]], offset=P if F > 1 else 0),
                                                             h.ap([[P, F - 1 if F > 1 else 1], [1, P]]))))   # overlapping, same tensor
                    out.append(attempt(lambda: nisa.dma_copy(s[:, :1], h)))
                    out.append(attempt(lambda: nisa.dma_copy(h.ap([[0, 2], [1, 2]]), s[:1, :2] if F >= 2 else s)))
                    out += [attempt(lambda: h.numpy()), attempt(lambda: s.numpy())]
                elif kind == 5:                                     # memset, values of every kind
                    t = ndarray((P, F), dt1, buffer=pick([sbuf, psum, hbm]), name='t')
                    for v in (pick([0.0, 1.5, -3, 10**400, 2**70, np.float16(0.5), np.int64(3), True, np.True_, None,
                                    '1', 1 + 2j, [1.0], np.array(0.5), float('nan'), float('inf'), 1e39]), 2.0):
                        out.append(attempt(lambda: nisa.memset(t, v)))
                    out.append(attempt(lambda: nisa.memset(t.ap([[F, P], [0, 2]]) if t.buffer.on_chip else t.ap([[0, 2]]), 0.0)))
                    out.append(attempt(lambda: t.numpy()))
                elif kind == 6:                                     # tensor_reduce: ops, axes, negate, keepdims
                    x, y = int(r.integers(1, 9)), int(r.integers(1, 9))
                    a = _tile(r, (P, x, y), dt1, sbuf, 'a')
                    d = ndarray((P, x), dt2, buffer=pick([sbuf, sbuf, psum, hbm]), name='d')
                    d1 = ndarray((P, 1), dt2, name='d1')
                    ax = pick([2, (2,), [2], np.int64(2), (1, 2), [2, 1], 1, 0, True, 2.0, (), 'x', 3, -1])
                    op = pick(ops + ['add', None])
                    neg = bool(r.integers(0, 2))
                    out.append(attempt(lambda: nisa.tensor_reduce(d, op, a, axis=ax, negate=neg)))
                    out.append(attempt(lambda: nisa.tensor_reduce(d1, op, a, axis=ax, negate=neg, keepdims=True)))
                    out.append(attempt(lambda: nisa.tensor_reduce(d, nl.add, a.ap([[x * y, P], [0, x], [0, 10**7]]), axis=2)))
                    out += [attempt(lambda: d.numpy()), attempt(lambda: d1.numpy())]
                elif kind == 7:                                     # tensor_tensor: dtypes, buffers, kinds
                    a = _tile(r, (P, F), dt1, pick([sbuf, sbuf, psum, hbm]), 'a')
                    b = _tile(r, (P, F), dt2, sbuf, 'b')
                    d = ndarray((P, F), pick(DTS), buffer=pick([sbuf, psum]), name='d')
                    op = pick(ops + ['multiply', np.multiply])
                    out.append(attempt(lambda: nisa.tensor_tensor(d, a, b, op)))
                    out.append(attempt(lambda: nisa.tensor_tensor(d, b, np.ones((P, F), np.float32), nl.add)))
                    out.append(attempt(lambda: nisa.tensor_tensor(d, b, 3.0, nl.add)))
                    out.append(attempt(lambda: nisa.tensor_tensor(d, b[:max(P - 1, 1)], b, nl.add)))
                    out.append(attempt(lambda: nisa.tensor_tensor(d.ap([[F, P], [0, F]]), b, b, nl.add)))
                    out.append(attempt(lambda: d.numpy()))
                else:                                               # views of views, slicing with every index kind
                    a = _tile(r, (P, F, 3), dt1, pick([sbuf, hbm]), 'a')
                    for idx in ((slice(None), slice(1, None)), (slice(None), 0), (slice(None), -1, slice(None, None, 2)),
                                (Ellipsis, 1), (slice(None), slice(None, None, -1)), (slice(0, 1),)):
                        out.append(attempt(lambda: a[idx]))
                        out.append(attempt(lambda: a[idx][:, 0]))
                        out.append(attempt(lambda: a[:, :][idx]))
                    out.append(attempt(lambda: nisa.memset(a[:, 0], 7.0) if a.buffer.on_chip else None))
                    out.append(attempt(lambda: a.numpy()))
            return out
        yield (f"isa kind={kind} seed={seed}", fn)


# ---------------------------------------------------------------- generated bad patterns and indexes, each twice
def _item(r, pick):
    return pick([0, 1, 2, 3, -1, -4, 7, 12, True, False, np.True_, np.int64(2), np.int32(1), np.uint8(3), 1.0, 2.5,
                 None, '2', 2**62, 10**30, np.float32(1)])


def cases_bad(n, rng):
    for _k in range(n):
        seed = int(rng.integers(0, 2**31))
        def fn(cores, seed=seed):
            r = np.random.default_rng(seed)
            pick = lambda xs: xs[int(r.integers(0, len(xs)))]
            core = NeuronCore(); cores.append(core)
            out = []
            with use_core(core):
                P, F = int(r.integers(1, 9)), int(r.integers(1, 13))
                buf = pick([sbuf, psum, hbm, shared_hbm])
                t = _tile(r, (P, F), pick(DTS), buf, 't')
                ps = F if buf.on_chip else 1
                for _ in range(12):
                    # a good pattern, then variants of it with one item replaced, each twice
                    good = [[ps if buf.on_chip else F, P], [1, int(r.integers(1, F + 1))]]
                    off = int(r.integers(0, 3))
                    out.append(attempt(lambda: t.ap(good, off)))
                    bad = [list(p) for p in good]
                    i, j = int(r.integers(0, 2)), int(r.integers(0, 2))
                    bad[i][j] = _item(r, pick)
                    shape = pick(['list', 'tuple', 'set', 'array', 'gen', 'pairset', 'pairtuple'])
                    def make(bad=bad, shape=shape):
                        if shape in ('set', 'pairset') and any(v is None for p in bad for v in p):
                            shape = 'list'   # None hashes by address: a set holding it prints in a different order per run
                        if shape == 'tuple': return tuple(tuple(p) for p in bad)
                        if shape == 'set':
                            try: return {tuple(p) for p in bad}
                            except TypeError: return bad
                        if shape == 'array':
                            try: return np.array(bad, dtype=np.int64)
                            except (TypeError, ValueError, OverflowError): return bad
                        if shape == 'gen': return (p for p in bad)
                        if shape == 'pairset':
                            try: return [set(p) for p in bad]
                            except TypeError: return bad
                        if shape == 'pairtuple': return [tuple(p) for p in bad]
                        return bad
                    o2 = pick([off, off, -1, 1.0, True, np.int64(off), None, 2**70, t.size, '0'])
                    for _ in range(2):
                        out.append(attempt(lambda: t.ap(make(), o2)))
                    # an index, good then generated
                    idx = tuple(pick([slice(None), slice(0, 1), slice(1, None), slice(None, None, -1), slice(None, None, 2),
                                      slice(0, F + 5), slice(-2, None), 0, 1, -1, F, -F - 1, np.int64(0), True,
                                      np.False_, None, Ellipsis, [0, 1], np.array([0]), np.array([True] * F), 1.0,
                                      slice(0, 2.0), slice(None, None, 0), slice(np.int64(0), np.int64(2)), 'a'])
                                for _ in range(int(r.integers(0, 4))))
                    if len(idx) == 1 and r.integers(0, 2): idx = idx[0]
                    for _ in range(2):
                        out.append(attempt(lambda: t[idx]))
                    out.append(attempt(lambda: t[:, :][idx] if buf.on_chip else t[:][idx]))
            return out
        yield (f"bad seed={seed}", fn)


# ---------------------------------------------------------------- launches: what goes in, what comes out
def _double_into(out_buffer, ret):
    def k(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=out_buffer)
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(t, x)
        nisa.tensor_tensor(t, t, t, nl.add)
        if out_buffer is nl.psum: nisa.tensor_copy(out, t)
        else: nisa.dma_copy(out, t)
        return ret(out, t, x)
    return k


RETURNS = [lambda o, t, x: o, lambda o, t, x: t, lambda o, t, x: o[:, 0:1], lambda o, t, x: o.ap([[1, 2], [2, 2]]),
           lambda o, t, x: None, lambda o, t, x: (o, o), lambda o, t, x: [o, x], lambda o, t, x: (o, t), lambda o, t, x: (),
           lambda o, t, x: 3.0, lambda o, t, x: o.numpy(), lambda o, t, x: x, lambda o, t, x: (x, o[0:1])]


def cases_launch(n, rng):
    for k in range(n):
        seed = int(rng.integers(0, 2**31)); kind = k % 5
        def fn(cores, seed=seed, kind=kind):
            r = np.random.default_rng(seed)
            pick = lambda xs: xs[int(r.integers(0, len(xs)))]
            out = []
            x = r.standard_normal((int(r.integers(2, 6)), int(r.integers(2, 6)))).astype(pick([np.float32, np.float16, ml_dtypes.bfloat16]))
            if kind == 0:                                           # what a kernel returns, launched three ways
                ri = int(r.integers(0, len(RETURNS)))
                kk = _double_into(pick([nl.shared_hbm, nl.shared_hbm, nl.hbm, nl.psum, nl.sbuf]), RETURNS[ri])
                P = pick([1, 2, 3])
                out.append(attempt(lambda: simulate_kernel(kk, x, num_programs=P, cores=cores)))
                out.append(attempt(lambda: kernel(kk)(x)))
                out.append(attempt(lambda: kernel(kk)[P](x)))
                out.append(attempt(lambda: kk(x)))
            elif kind == 1:                                         # the launcher's own arguments
                kk = _double_into(nl.shared_hbm, RETURNS[0])
                P = pick([0, 1, 2, -1, True, np.int64(2), 2.0, '2', None, [2], 5000, 10**12])
                tg = pick([None, 'trn1', 'trn2', 'trn3', 'trn9', {'trn1'}, 1])
                cs = pick([None, cores, (), 'x'])
                out.append(attempt(lambda: simulate_kernel(kk, x, num_programs=P, target=tg, cores=cs)))
                out.append(attempt(lambda: simulate_kernel(3, x)))
                out.append(attempt(lambda: simulate_kernel(kk, x, x)))
                out.append(attempt(lambda: simulate_kernel(kk)))
            elif kind == 2:                                         # which arguments become tensors
                seen = {}
                def k1(x, opt=None, *rest, **kw):
                    seen['types'] = (type(x).__name__, type(opt).__name__, [type(v).__name__ for v in rest],
                                     sorted((a, type(v).__name__) for a, v in kw.items()))
                    return x
                v = pick([np.array([1, 2]), np.array([[0, 0], [1, 1]], np.int32), np.array([True]), np.int64(3),
                          np.float32(0.5), np.array(2.0, np.float32), np.ones(3, np.float16), np.ones(2, np.float64),
                          (1, 2), [3], None, 7, 'x', np.zeros((0,), np.float32)])
                out.append(attempt(lambda: simulate_kernel(k1, x, v, v, w=v)))
                out.append(('seen', repr(seen)))
            elif kind == 3:                                         # shared_hbm allocations that differ per program
                def k2(x):
                    pid = nl.program_id(0)
                    o = nl.ndarray(x.shape if pid == 0 or r.integers(0, 2) else (1, 1), x.dtype, buffer=nl.shared_hbm)
                    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(t, x); nisa.dma_copy(o.ap([[x.shape[1], x.shape[0]], [1, x.shape[1]]]), t)
                    return o
                out.append(attempt(lambda: simulate_kernel(k2, x, num_programs=3, cores=cores)))
            else:                                                   # names dwlit does not model; a one-program kernel
                name = pick(['load', 'exp', 'ndaray', 'zeros', 'matmul', '_x', 'ndarray'])
                out.append(attempt(lambda: repr(getattr(nl, name))))
                out.append(attempt(lambda: repr(getattr(nisa, pick(['activation', 'tensor_scalar', 'memset', 'iota'])))))
                @kernel
                def k3(x):
                    o = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
                    s = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(s, x); nisa.memset(s[:, 0:1], 1.0); nisa.dma_copy(o, s)
                    return o
                out.append(attempt(lambda: k3(x)))
                out.append(attempt(lambda: k3[2](x)))
            return out
        yield (f"launch kind={kind} seed={seed}", fn)


# ---------------------------------------------------------------- the same patterns again: remembered plans
def cases_plans(n, rng):
    """Random sequences of instructions over a few tensors that share geometries (same size and partitions in SBUF,
    PSUM and HBM, in two dtypes), on views of a few patterns that mostly fit each other, drawn from a small pool of
    View objects used again and again and made afresh: what the simulator remembers per pattern (its rule) and per
    instruction (its checked plan) must give what a first call gives, whichever tensor, buffer, dtype, op, axis,
    negate or value comes next, and bad calls (a wrong op, sizes that do not fit, PSUM operands) among them."""
    ops = [nl.multiply, nl.add, nl.subtract, nl.maximum, nl.minimum]
    for k in range(n):
        seed = int(rng.integers(0, 2**31))
        # both inputs of a tensor_tensor in PSUM: refused since chapter 4 follows the ISA reference; such calls only
        # in one case in ten, so that the others compare whole sequences
        def fn(cores, seed=seed, both_psum_rare=k % 10 != 9):
            r = np.random.default_rng(seed)
            pick = lambda xs: xs[int(r.integers(0, len(xs)))]
            core = NeuronCore(); cores.append(core)
            out = []
            with use_core(core):
                P, a_, b_ = int(r.integers(1, 9)), int(r.integers(1, 4)), int(r.integers(2, 5))
                F = a_ * b_ + 2
                dts = [pick([float32, float32, float16, bfloat16]), pick(DTS)]   # fp32 often: the fast routes
                ts = [_tile(r, (P, F), dts[d], buf, f"t{i}") for i, (buf, d) in
                      enumerate([(sbuf, 0), (sbuf, 0), (psum, 0), (hbm, 0), (shared_hbm, 0), (sbuf, 1), (psum, 1)])]
                kinds = {'flat': [[1, a_ * b_]], 'tiles': [[b_, a_], [1, b_]], 'swapped': [[1, b_], [b_, a_]],
                         'windows': [[1, a_], [1, b_]], 'bcast': [[0, a_], [1, b_]], 'rows': [[1, a_]], 'one': [[1, 1]]}
                def view(kind):
                    t = pick(ts)
                    if kind == 'flat' and t.buffer.on_chip and r.integers(0, 4) == 0: return t[:, :a_ * b_]
                    return t.ap([[F, P]] + kinds[kind], offset=int(r.integers(0, 2)))
                pool = {kd: [view(kd) for _ in range(2)] for kd in kinds}
                v = lambda *ks: (lambda kd: pick(pool[kd]) if r.integers(0, 3) else view(kd))(pick(ks))
                buf_of = lambda x: getattr(x, 'tensor', x).buffer
                for _ in range(40):
                    kind = int(r.integers(0, 6))
                    if kind <= 1:
                        d, x, y = v('flat', 'tiles', 'swapped'), v('flat', 'tiles', 'swapped', 'windows', 'bcast'), \
                                  v('tiles', 'windows', 'bcast', 'rows')
                        if both_psum_rare and buf_of(x) is psum and buf_of(y) is psum: continue
                        op = pick(ops + ops + ['add', np.multiply])
                        out.append(attempt(lambda: nisa.tensor_tensor(d, x, y, op)))
                    elif kind == 2:
                        ax = pick([2, 2, 2, 2, (1, 2), [2], np.int64(2), 1, -1, True])
                        d, x = (v('one', 'rows') if isinstance(ax, tuple) else v('rows', 'one')), v('tiles', 'windows', 'bcast')
                        op, neg = pick(ops + [nl.add, nl.add, nl.add, 'add']), pick([False, False, False, True, 0, 1])
                        out.append(attempt(lambda: nisa.tensor_reduce(d, op, x, axis=ax, negate=neg)))
                    elif kind == 3:
                        d, val = v('flat', 'tiles', 'rows', 'bcast', 'one'), pick([0, 0.0, 1, -2.5, 2**60, np.float16(3), 7, None])
                        out.append(attempt(lambda: nisa.memset(d, val)))
                    elif kind == 4:
                        d, x = v('flat', 'tiles', 'swapped', 'rows'), v('flat', 'tiles', 'swapped', 'windows')
                        out.append(attempt(lambda: nisa.dma_copy(d, x)))
                    else:
                        d, x = v('flat', 'tiles', 'swapped'), v('flat', 'tiles', 'windows', 'bcast')
                        out.append(attempt(lambda: nisa.tensor_copy(d, x, engine=pick(['Vector', 'GpSimd']))))
                out += [attempt(lambda t=t: t.numpy()) for t in ts]
            return out
        yield (f"plans seed={seed}", fn)


# ---------------------------------------------------------------- tensor_scalar: numbers and columns, in place, every dtype
def cases_scalar(n, rng):
    "tensor_scalar on fp32 and narrower destinations, of data's shape or another, numbers and (P, 1) columns good and bad."
    ops = [nl.multiply, nl.add, nl.subtract, nl.maximum, nl.minimum, nl.divide, nl.less, nl.equal]
    for _k in range(n):
        seed = int(rng.integers(0, 2**31))
        def fn(cores, seed=seed):
            r = np.random.default_rng(seed)
            pick = lambda xs: xs[int(r.integers(0, len(xs)))]
            core = NeuronCore(pick(['trn1', 'trn2', 'trn3'])); cores.append(core)
            out = []
            with use_core(core):
                P, x, y = int(r.integers(1, 129)), int(r.integers(1, 9)), int(r.integers(1, 9))
                shape = pick([(P, x), (P, x, y)])
                a = _tile(r, shape, pick(DTS), pick([sbuf, sbuf, psum, hbm]), 'a')
                d = ndarray(pick([shape, shape, (P, math.prod(shape[1:]))]), pick([float32, float32] + DTS),
                            buffer=pick([sbuf, sbuf, psum]), name='d')
                c = _tile(r, (pick([P, P, max(P - 1, 1)]), pick([1, 1, 2])), pick(DTS), pick([sbuf, sbuf, psum, hbm]), 'c')
                s0 = pick([2.5, -1, np.float32(0.5), c, c[:, 0:1], 'x', None, np.ones((P, 1))])
                op1, s1 = pick([(None, None), (pick(ops), pick([1.0, c, -3])), (nl.add, None)])
                out.append(attempt(lambda: nisa.tensor_scalar(d, a, pick(ops), s0, reverse0=bool(r.integers(0, 2)), op1=op1,
                                                              operand1=s1, reverse1=bool(r.integers(0, 2)),
                                                              engine=pick([None, nisa.engine.vector, nisa.engine.scalar]))))
                out.append(attempt(lambda: nisa.tensor_scalar(a, a, nl.multiply, c[:, 0:1], op1=nl.add, operand1=0.5)))  # in place
                if len(shape) == 3:
                    out.append(attempt(lambda: nisa.tensor_scalar(a[:, 1:, :], a[:, :x - 1, :] if x > 1 else a[:, :, :],
                                                                  nl.subtract, 1.0, reverse0=True)))   # overlapping windows
                out.append(attempt(lambda: nl.multiply(a, 3.0) if a.buffer.on_chip else None))
                out += [attempt(lambda: d.numpy()), attempt(lambda: a.numpy())]
            return out
        yield (f"scalar seed={seed}", fn)


GENERATORS = {'1d': cases_1d, '2d': cases_2d, 'ops': cases_ops, 'isa': cases_isa, 'bad': cases_bad,
              'launch': cases_launch, 'plans': cases_plans, 'scalar': cases_scalar}
DEFAULT = {'1d': 150, '2d': 60, 'ops': 200, 'isa': 200, 'bad': 200, 'launch': 120, 'plans': 200, 'scalar': 150}


def dump(path, counts, seed=12345):
    rng = np.random.default_rng(seed)
    res = {}
    for g, gen in GENERATORS.items():
        for name, fn in gen(counts[g], rng):
            res[f"{g}: {name}" if name in res else name] = run_case(fn)
    with open(path, 'wb') as f: pickle.dump(res, f)
    n_rec = sum(len(r[2]) if r[0] == 'ok' else len(r[3]) for r in res.values())
    print(f"{len(res)} cases ({dwlit.__file__}): {sum(r[0] == 'ok' for r in res.values())} ok, "
          f"{sum(r[0] == 'error' for r in res.values())} errors; {n_rec} trace records")


def _expected(x, y, expect) -> bool:
    "True if case result `y` first departs from `x` with an error whose message matches regex `expect` (a new rule)."
    if not expect: return False
    if y[0] == 'error': return x[:3] != y[:3] and re.search(expect, y[2]) is not None
    items = lambda r: r[1][1] if r[0] == 'ok' and isinstance(r[1], tuple) and r[1][:1] == ('list',) else None
    u, v = items(x), items(y)
    if u is None or v is None: return False
    first = next((i for i, (p, q) in enumerate(zip(u, v)) if p != q), None)
    return first is not None and v[first][0] == 'error' and re.search(expect, v[first][2]) is not None


def compare(a, b, show=10, expect=None):
    A, B = (pickle.load(open(p, 'rb')) for p in (a, b))
    assert A.keys() == B.keys(), "different case lists"
    differ = [k for k in A if A[k] != B[k]]
    expected = [k for k in differ if _expected(A[k], B[k], expect)]
    bad = [k for k in differ if k not in expected]
    if expected: print(f"{len(expected)} cases differ only from a call the new rules refuse ({expect!r}), as they should")
    for k in bad[:show]:
        print('DIFFERS:', k)
        x, y = A[k], B[k]
        if x[0] != y[0]: print('  ', x[:3], '\n  ', y[:3])
        elif x[0] == 'ok':
            print('   output same:', x[1] == y[1], ' trace same:', x[2] == y[2], ' peaks same:', x[3] == y[3])
            if x[1] != y[1] and isinstance(x[1], tuple) and x[1][:1] == ('list',):
                for i, (u, v) in enumerate(zip(x[1][1], y[1][1])):
                    if u != v: print(f'   item {i}:\n    {u}\n    {v}')
            for r1, r2 in zip(x[2], y[2]):
                if r1 != r2: print('   first differing record:\n    ', r1, '\n    ', r2); break
        else: print('  ', x[1:3], '\n  ', y[1:3])
    n_rec = sum(len(r[2]) if r[0] == 'ok' else len(r[3]) for r in A.values())
    print(f"{len(A)} cases ({n_rec} trace records) compared: {len(A) - len(differ)} identical, "
          + (f"{len(expected)} differ by the expected refusals only, " if expect else '') + f"{len(bad)} differ")
    return not bad


if __name__ == '__main__':
    if sys.argv[1] == 'dump':
        given = dict(d.split('=') for d in (sys.argv[sys.argv.index('--cases') + 1].split(',') if '--cases' in sys.argv else []))
        counts = {k: int(given.get(k, v)) for k, v in DEFAULT.items()}
        dump(sys.argv[2], counts, int(sys.argv[sys.argv.index('--seed') + 1]) if '--seed' in sys.argv else 12345)
    else:
        expect = sys.argv[sys.argv.index('--expect') + 1] if '--expect' in sys.argv else None
        sys.exit(0 if compare(sys.argv[2], sys.argv[3], expect=expect) else 1)
