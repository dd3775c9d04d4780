"""The fast paths of tensor_tensor / tensor_reduce (issue 3) give what plain fp32 NumPy gives, on the patterns the
depthwise kernels use (sliding windows, stride-0 broadcasts, strided and in-place destinations)."""
import numpy as np
from hypothesis import given, settings, strategies as st

from dwlit import NeuronCore, nl
from dwlit.memory import use_core, ndarray
from dwlit.isa import tensor_tensor, tensor_reduce, multiply, add, subtract, maximum

OPS = {'multiply': (multiply, np.multiply), 'add': (add, np.add), 'subtract': (subtract, np.subtract),
       'maximum': (maximum, np.maximum)}


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 128), st.integers(1, 200), st.integers(1, 40), st.sampled_from(sorted(OPS)),
       st.sampled_from(['float32', 'float16', 'bfloat16']), st.booleans(), st.integers(0, 2**16))
def test_tensor_tensor_on_windows(P, nv, k, opname, dt, strided_dst, seed):
    op, uf = OPS[opname]
    rng = np.random.default_rng(seed)
    with use_core(NeuronCore('trn3')):
        row = ndarray((P, nv + k + 3), dt); row.write(rng.standard_normal(row.shape))
        filt = ndarray((P, k), dt); filt.write(rng.standard_normal(filt.shape))
        win = row.ap([[row.partition_size, P], [1, nv], [1, k]], offset=2)
        bc = filt.ap([[k, P], [0, nv], [1, k]])
        if strided_dst:
            big = ndarray((P, 2, nv * k), dt)
            dst = big.ap([[2 * nv * k, P], [1, nv * k]], offset=nv * k)
        else:
            big = ndarray((P, nv, k), dt); dst = big
        a32 = win.numpy().astype(np.float32); b32 = bc.numpy().astype(np.float32)
        expect = uf(a32, b32).astype(row.dtype).reshape(P, nv * k)
        tensor_tensor(dst, win, bc, op)
        got = (dst.numpy() if strided_dst else big.numpy()).reshape(P, nv * k)
        assert np.array_equal(got.view(np.uint8), expect.view(np.uint8)) or np.array_equal(got, expect)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 64), st.integers(1, 100), st.integers(1, 9), st.integers(0, 2**16))
def test_tensor_tensor_in_place(P, n, k, seed):
    "dst aliasing data1 (same storage, other shape) is computed as if from a copy."
    rng = np.random.default_rng(seed)
    with use_core(NeuronCore()):
        t = ndarray((P, n * k), nl.float32); t.write(rng.standard_normal(t.shape))
        u = ndarray((P, k), nl.float32); u.write(rng.standard_normal(u.shape))
        before = t.numpy().reshape(P, n, k)
        tensor_tensor(t, t.ap([[n * k, P], [k, n], [1, k]]), u.ap([[k, P], [0, n], [1, k]]), multiply)
        assert np.array_equal(t.numpy(), (before * u.numpy()[:, None, :]).reshape(P, n * k))


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 128), st.integers(1, 200), st.integers(1, 64), st.sampled_from(['float32', 'float16', 'bfloat16']),
       st.booleans(), st.integers(0, 2**16))
def test_tensor_reduce_add_last_axis(P, nv, k, dt, strided, seed):
    rng = np.random.default_rng(seed)
    with use_core(NeuronCore('trn3')):
        buf = ndarray((P, nv + 1, k), dt); buf.write(rng.standard_normal(buf.shape))
        data = buf[:, :nv, :k] if strided else buf.ap([[(nv + 1) * k, P], [k, nv], [1, k]])
        out = ndarray((P, 3, nv), dt)
        dst = out.ap([[3 * nv, P], [1, nv]], offset=nv)
        tensor_reduce(dst, add, data, axis=2)
        x = data.numpy().astype(np.float64)
        ref = x.sum(-1)
        scale = np.abs(x).sum(-1)
        tol = {'float32': 2e-6, 'float16': 1e-3, 'bfloat16': 8e-3}[dt]
        assert np.all(np.abs(dst.numpy().astype(np.float64) - ref) <= tol * scale + 1e-30 + (6e-8 if dt == 'float16' else 0))
        # and the rest of `out` is untouched (still NaN)
        assert np.isnan(out.numpy()[:, 0].astype(np.float32)).all() and np.isnan(out.numpy()[:, 2].astype(np.float32)).all()


def test_reduce_propagates_nan_and_inf():
    with use_core(NeuronCore()):
        d = ndarray((2, 2, 3), nl.float32); d.write(np.array([[[1, np.inf, 2], [1, np.nan, 0]], [[np.inf, -np.inf, 0], [1, 2, 3]]]))
        o = ndarray((2, 2), nl.float32)
        with np.errstate(invalid='ignore'):          # inf + -inf is NaN, and NumPy says so
            tensor_reduce(o, add, d, axis=2)
        got = o.numpy()
        assert got[0, 0] == np.inf and np.isnan(got[0, 1]) and np.isnan(got[1, 0]) and got[1, 1] == 6
