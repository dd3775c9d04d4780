"""Each instruction dwlit added for NKI's wider ISA (appendix 34d) and the integer dtypes, as property tests against
NumPy on generated inputs: the numbers NumPy computes from the reference's description, never from dwlit."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dwlit.nki.isa as nisa
import dwlit.nki.language as nl
from dwlit import NotModelledError, SimulatorError
from dwlit.sim.memory import NeuronCore, use_core
from dwlit.sim.nki1 import promote

SETTINGS = dict(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
parts, frees = st.integers(1, 16), st.integers(2, 40)


def core(target='trn3'): return use_core(NeuronCore(target))


def sbuf(a, dtype=np.float32):
    t = nl.ndarray(np.shape(a), dtype, buffer=nl.sbuf, name='t'); t.write(a); return t


def arrays(P, F, lo=-4.0, hi=4.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, (P, F)).astype(np.float32)


@settings(**SETTINGS)
@given(P=parts, F=frees, seed=st.integers(0, 99))
def test_reciprocal(P, F, seed):
    x = arrays(P, F, 0.1, 8, seed) * np.where(np.arange(F) % 2, 1, -1).astype(np.float32)
    with core():
        np.testing.assert_allclose(nisa.reciprocal(sbuf(x)).numpy(), 1 / x, rtol=1e-6)          # first generation
        d = nl.ndarray((P, F), nl.float32); nisa.reciprocal(d, sbuf(x))                            # current
        np.testing.assert_allclose(d.numpy(), 1 / x, rtol=1e-6)


@settings(**SETTINGS)
@given(P=parts, F=st.integers(2, 512), chunks=st.integers(1, 3), seed=st.integers(0, 99))
def test_bn_stats_then_bn_aggr_is_mean_and_variance(P, F, chunks, seed):
    x = arrays(P, F * chunks, -3, 5, seed)
    with core():
        st_ = nl.ndarray((P, 6 * chunks), nl.float32)
        for j in range(chunks): nisa.bn_stats(st_[:, 6 * j:6 * j + 6], sbuf(x[:, F * j:F * (j + 1)]))
        mv = nisa.bn_aggr(st_)
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(mv.numpy()[:, 0], x64.mean(1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(mv.numpy()[:, 1], x64.var(1), rtol=1e-4, atol=1e-5)
        even = st_.numpy()[:, 0:3]
        np.testing.assert_allclose(even[:, 0], (F + 1) // 2)
        np.testing.assert_allclose(even[:, 1], x64[:, 0:F:2].mean(1), rtol=1e-5, atol=1e-5)


@settings(**SETTINGS)
@given(P=parts, F=frees, cm=st.integers(-2, 2), step=st.integers(-2, 2), off=st.integers(-20, 20),
       cmp=st.sampled_from(['greater_equal', 'less', 'equal']))
def test_affine_select(P, F, cm, step, off, cmp):
    x = arrays(P, F)
    value = off + cm * np.arange(P)[:, None] + step * np.arange(F)[None, :]
    keep = getattr(np, cmp)(value, 0)
    with core():
        d = nl.ndarray((P, F), nl.float32)
        nisa.affine_select(d, [[step, F]], cm, sbuf(x), -7.5, cmp_op=getattr(nl, cmp), offset=off)
        np.testing.assert_array_equal(d.numpy(), np.where(keep, x, np.float32(-7.5)))


@settings(**SETTINGS)
@given(P=parts, F=frees, seed=st.integers(0, 99), reverse=st.booleans(), pdt=st.sampled_from([np.uint8, np.uint16, np.uint32]))
def test_tensor_copy_predicated_and_select_reduce(P, F, seed, reverse, pdt):
    rng = np.random.default_rng(seed)
    x, y, pred = arrays(P, F, seed=seed), arrays(P, F, seed=seed + 1), rng.integers(0, 2, (P, F)).astype(pdt)
    keep = (pred != 0) != reverse
    with core():
        d = sbuf(y); nisa.tensor_copy_predicated(d, sbuf(x), sbuf(pred, pdt), reverse_pred=reverse)
        np.testing.assert_array_equal(d.numpy(), np.where(keep, x, y))
        col, res = arrays(P, 1, seed=seed + 2), nl.ndarray((P, 1), nl.float32)
        out = nl.ndarray((P, F), nl.float32)
        nisa.select_reduce(out, sbuf(pred, pdt), sbuf(x), sbuf(col), reduce_res=res,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce, reverse_pred=reverse)
        want = np.where(keep, x, col)
        np.testing.assert_array_equal(out.numpy(), want)
        np.testing.assert_array_equal(res.numpy(), want.max(1, keepdims=True))


@settings(**SETTINGS)
@given(P=parts, F=frees, start=st.integers(-5, 30), b0=st.integers(-3, 20), b1=st.integers(0, 40))
def test_range_select(P, F, start, b0, b1):
    x = arrays(P, F)
    i = start + np.arange(F)[None, :]
    want = np.where((i >= b0) & (i < b1), x, np.finfo(np.float32).min)
    with core('trn2'):
        d, r = nl.ndarray((P, F), nl.float32), nl.ndarray((P, 1), nl.float32)
        nisa.range_select(d, sbuf(x), nl.greater_equal, nl.less, sbuf(np.full((P, 1), b0)), sbuf(np.full((P, 1), b1)),
                          reduce_res=r, range_start=start)
        np.testing.assert_array_equal(d.numpy(), want)
        np.testing.assert_array_equal(r.numpy(), want.max(1, keepdims=True))


@settings(**SETTINGS)
@given(P=parts, F=frees, op1=st.sampled_from(['add', 'maximum', 'multiply']), seed=st.integers(0, 99))
def test_tensor_scalar_cumulative_and_its_accumulator(P, F, op1, seed):
    x = arrays(P, F, 0.5, 1.5, seed)
    step = {'add': np.add, 'maximum': np.maximum, 'multiply': np.multiply}[op1]
    with core():
        d = nl.ndarray((P, F), nl.float32)
        nisa.tensor_scalar_cumulative(d, sbuf(x), nl.multiply, getattr(nl, op1), 2.0, imm1=1.5,
                                      reduce_cmd=nisa.reduce_cmd.load_reduce)
        acc, want = np.full(P, 1.5), np.empty((P, F))
        for i in range(F): acc = step(2 * x[:, i].astype(np.float64), acc); want[:, i] = acc
        np.testing.assert_allclose(d.numpy(), want, rtol=1e-4)
        nisa.tensor_scalar_cumulative(d, sbuf(x), nl.multiply, getattr(nl, op1), 1.0, reduce_cmd=nisa.reduce_cmd.reduce)
        np.testing.assert_allclose(d.numpy()[:, 0], step(x[:, 0].astype(np.float64), acc), rtol=1e-4)


@settings(**SETTINGS)
@given(P=parts, shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), op=st.sampled_from(['add', 'maximum', 'minimum']))
def test_tensor_partition_reduce(P, shape, op):
    x = np.random.default_rng(P).standard_normal((P, *shape)).astype(np.float32)
    with core():
        r = nisa.tensor_partition_reduce(getattr(nl, op), sbuf(x))
        want = {'add': np.add, 'maximum': np.maximum, 'minimum': np.minimum}[op].reduce(x.astype(np.float64), 0, keepdims=True)
        np.testing.assert_allclose(r.numpy(), want, rtol=1e-5, atol=1e-5)


@settings(**SETTINGS)
@given(shape=st.sampled_from([(5, 7), (3, 4, 6), (2, 3, 4, 5)]))
def test_dma_transpose(shape):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    axes = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}[len(shape)]
    with core():
        h = nl.ndarray(shape, nl.float32, buffer=nl.hbm, name='h'); h.write(x)
        if x.transpose(axes).shape[0] <= 128:
            np.testing.assert_array_equal(nisa.dma_transpose(h).numpy(), x.transpose(axes))


@settings(**SETTINGS)
@given(P=parts, F=st.integers(8, 60), seed=st.integers(0, 99))
def test_max8_and_find_index8(P, F, seed):
    x = np.random.default_rng(seed).permutation(P * F).reshape(P, F).astype(np.float32)     # distinct values
    with core():
        top = nisa.max8(sbuf(x))
        np.testing.assert_array_equal(top.numpy(), -np.sort(-x, 1)[:, :8])
        vals = np.concatenate([top.numpy()[:, :7], np.full((P, 1), -1.0, np.float32)], 1)   # one value never present
        idx = nisa.nc_find_index8(sbuf(x), sbuf(vals)).numpy().astype(np.int64)
        np.testing.assert_array_equal(idx[:, :7], np.argsort(-x, 1)[:, :7])
        np.testing.assert_array_equal(idx[:, 7], 2**32 - 1)


@settings(**SETTINGS)
@given(P=st.sampled_from([32, 64, 96]), seed=st.integers(0, 99))
def test_nc_stream_shuffle(P, seed):
    rng = np.random.default_rng(seed)
    mask = [int(m) if rng.random() > 0.2 else 255 for m in rng.integers(0, 32, 32)]
    x, y = arrays(P, 5, seed=seed), arrays(P, 5, seed=seed + 1)
    want = y.copy()
    for q in range(0, P, 32):
        for i, m in enumerate(mask):
            if m != 255: want[q + i] = x[q + m]
    with core():
        d = sbuf(y); nisa.nc_stream_shuffle(d, sbuf(x), mask)
        np.testing.assert_array_equal(d.numpy(), want)


@settings(**SETTINGS)
@given(F=st.integers(2, 30), off=st.integers(0, 50), pad=st.integers(-9, -1), seed=st.integers(0, 99))
def test_nonzero_with_count(F, off, pad, seed):
    x = (np.random.default_rng(seed).random((128, F)) < 0.4).astype(np.float32)
    with core('trn2'):
        o = nl.zeros((128, F + 1), nl.int32)
        nisa.nonzero_with_count(o, sbuf(x), index_offset=off, padding_val=pad)
        got = o.numpy()
    for p in range(128):
        if p % 16:
            assert (got[p] == 0).all()                                    # the other partitions are left as they were
            continue
        nz = np.flatnonzero(x[p]) + off
        np.testing.assert_array_equal(got[p], list(nz) + [pad] * (F - nz.size) + [nz.size])


@settings(**SETTINGS)
@given(P=parts, F=frees, op0=st.sampled_from(['multiply', 'add', 'subtract', 'bypass']), seed=st.integers(0, 99))
def test_activate2(P, F, op0, seed):
    x = arrays(P, F, -2, 2, seed)
    op1 = 'add' if op0 == 'multiply' else 'bypass'
    v = {'multiply': x * 1.5, 'add': x + 1.5, 'subtract': x - 1.5, 'bypass': x}[op0].astype(np.float64)
    v = v + 0.25 if op1 == 'add' else v
    with core('trn3'):
        d = nl.ndarray((P, F), nl.float32)
        nisa.activate2(d, nl.tanh, sbuf(x), 1.5, 0.25, getattr(nl, op0), getattr(nl, op1))
        np.testing.assert_allclose(d.numpy(), np.tanh(v), rtol=1e-5, atol=1e-6)
    with core('trn2'):
        with pytest.raises(SimulatorError, match="NeuronCore-v4"):
            nisa.activate2(nl.ndarray((P, F), nl.float32), nl.tanh, sbuf(x), 1.0, 0.0, nl.multiply, nl.add)


@settings(**SETTINGS)
@given(n=st.integers(1, 128), dt=st.sampled_from([nl.uint8, nl.float32, nl.bfloat16]))
def test_shared_identity_matrix_and_transpose_mode(n, dt):
    with core('trn2'):
        eye = nl.shared_identity_matrix(n, dtype=dt)
        np.testing.assert_array_equal(eye.numpy().astype(np.float32), np.eye(n))
        x = np.random.default_rng(n).standard_normal((n, 7)).astype(np.float32)
        x[0, 0] = np.nan                                                  # transpose mode is bit for bit: NaN survives
        t = nl.ndarray((7, n), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(t, sbuf(x), nl.shared_identity_matrix(n, dtype=nl.float32), is_transpose=True)
        np.testing.assert_array_equal(t.numpy(), x.T)
        with pytest.raises(NotModelledError, match="not an identity matrix"):
            nisa.nc_matmul(t, sbuf(x), sbuf(np.full((n, n), 2.0)), is_transpose=True)


@settings(**SETTINGS)
@given(n=st.integers(1, 20), rows=st.integers(21, 60), seed=st.integers(0, 99))
def test_indirect_gather_and_scatter_add(n, rows, seed):
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((rows, 6)).astype(np.float32)
    idx = rng.permutation(rows)[:n].astype(np.int32)
    with core():
        h = nl.ndarray(table.shape, nl.float32, buffer=nl.hbm, name='h'); h.write(table)
        ix = sbuf(idx[:, None], np.int32)
        g = nl.ndarray((n, 6), nl.float32)
        nisa.dma_copy(dst=g, src=h.ap([[6, n], [1, 6]], vector_offset=ix, indirect_dim=0))     # current NKI
        np.testing.assert_array_equal(g.numpy(), table[idx])
        nisa.dma_copy(dst=h.ap([[6, n], [1, 6]], vector_offset=ix, indirect_dim=0), src=g, dst_rmw_op=nl.add)
        want = table.copy(); want[idx] *= 2
        np.testing.assert_array_equal(h.numpy(), want)


@settings(**SETTINGS)
@given(v=st.lists(st.integers(-2**31, 2**31 - 1), min_size=1, max_size=9), dt=st.sampled_from([np.int32, np.uint32, np.int16]))
def test_integers_are_exact_where_the_reference_says_so(v, dt):
    info = np.iinfo(dt)
    a = np.clip(np.array(v, np.int64), info.min, info.max).astype(dt)[None, :]
    with core():
        t = sbuf(a, dt)
        np.testing.assert_array_equal(nisa.tensor_copy(t).numpy(), a)                    # same dtype: bit for bit
        m = nl.ndarray(a.shape, dt); nisa.memset(m, int(a[0, 0]))
        np.testing.assert_array_equal(m.numpy(), np.full(a.shape, a[0, 0]))              # an integer fill: exact
        if np.abs(a.astype(np.int64)).max() > 2**24 and dt != np.int16:                   # arithmetic is fp32: big ones round
            with pytest.raises(NotModelledError, match="only whole numbers in"):
                nisa.tensor_copy(t, dtype=nl.int8)


@settings(max_examples=80, deadline=None)
@given(a=st.sampled_from(['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'float8_e4m3', 'float8_e5m2', 'float16', 'bfloat16', 'float32']),
       b=st.sampled_from(['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'float8_e4m3', 'float8_e5m2', 'float16', 'bfloat16', 'float32']))
def test_promotion_follows_the_reference_rules(a, b):
    "(float, int): the float; (int, int) and (float, float): a dtype holding both (a signed with uint32: float32)."
    da, db = (np.dtype(getattr(nl, n)) for n in (a, b))
    p = promote(np.zeros(1, da)[0], np.zeros(1, db)[0])
    assert p == promote(np.zeros(1, db)[0], np.zeros(1, da)[0])
    ints = [d for d in (da, db) if d.kind in 'iu']
    if len(ints) == 1: assert p == next(d for d in (da, db) if d.kind not in 'iu')
    elif len(ints) == 2 and 'uint32' in (a, b) and any(d.kind == 'i' for d in ints): assert p == np.float32   # no int64
    elif len(ints) == 2:
        assert p.kind in 'iu' and all(np.iinfo(p).min <= np.iinfo(d).min and np.iinfo(p).max >= np.iinfo(d).max for d in ints)
    else:
        for d in (da, db):
            fp, fd = ml_dtypes.finfo(p), ml_dtypes.finfo(d)
            assert float(fp.max) >= float(fd.max) and fp.nmant >= fd.nmant


@settings(**SETTINGS)
@given(P=parts, F=frees, seed=st.integers(0, 99), scale=st.floats(0.1, 2.0))
def test_activation_row_sums(P, F, seed, scale):
    x = arrays(P, F, -2, 2, seed)
    with core():
        e, s = nl.ndarray((P, F), nl.float32), nl.ndarray((P, 1), nl.float32)
        nisa.activation(e, nl.exp, sbuf(x), scale=scale, reduce_op=nl.add, reduce_res=s, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        want = np.exp(x.astype(np.float64) * np.float32(scale))
        np.testing.assert_allclose(e.numpy(), want, rtol=1e-5)
        np.testing.assert_allclose(s.numpy()[:, 0], want.sum(1), rtol=1e-5)
        s2 = nl.ndarray((P, 1), nl.float32)
        e2 = nisa.activation_reduce(np.exp, sbuf(x), reduce_op=np.add, reduce_res=s2, scale=scale)    # first generation
        np.testing.assert_array_equal(s2.numpy(), s.numpy()); np.testing.assert_array_equal(e2.numpy(), e.numpy())
        with pytest.raises(NotModelledError, match="models its reduction as reduce_op=nl.add"):
            nisa.activation(e, nl.exp, sbuf(x), reduce_op=nl.add, reduce_res=s, reduce_cmd=nisa.reduce_cmd.reduce)


@settings(**SETTINGS)
@given(v=st.integers(0, 50), w=st.integers(0, 9))
def test_registers_and_dynamic_ranges(v, w):
    with core():
        r = nisa.register_alloc()
        with pytest.raises(SimulatorError, match="read before anything was put in it"):
            list(nl.dynamic_range(r))
        nisa.register_load(r, sbuf(np.array([[v]]), np.int32))
        assert list(nl.dynamic_range(r)) == list(range(v))
        q = nisa.register_alloc(w); nisa.register_move(r, q)
        assert list(nl.dynamic_range(1, r, 2)) == list(range(1, w, 2))
        t = nl.ndarray((1, 1), nl.int32); nisa.register_store(t, r)
        assert t.numpy()[0, 0] == w


@settings(**SETTINGS)
@given(P=parts, F=frees, seed=st.integers(0, 99))
def test_where_var_softmax_expand_dims(P, F, seed):
    rng = np.random.default_rng(seed)
    x, y = arrays(P, F, seed=seed), arrays(P, F, seed=seed + 1)
    cond = rng.integers(0, 2, (P, F)).astype(np.uint8)
    with core():
        np.testing.assert_array_equal(nl.where(sbuf(cond, np.uint8), sbuf(x), sbuf(y)).numpy(), np.where(cond, x, y))
        np.testing.assert_array_equal(nl.where(nl.less(sbuf(x), sbuf(y)), sbuf(x), 0.5).numpy(), np.where(x < y, x, 0.5))
        np.testing.assert_allclose(nl.var(sbuf(x), axis=1).numpy(), x.astype(np.float64).var(1), rtol=1e-4, atol=1e-5)
        e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
        np.testing.assert_allclose(nl.softmax(sbuf(x)).numpy(), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)
        v = nl.expand_dims(sbuf(x), 1)
        assert v.shape == (P, 1, F) and np.array_equal(v.numpy()[:, 0], x)
