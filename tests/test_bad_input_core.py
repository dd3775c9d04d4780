"""Safe on any input (issue 11, section 2), for the simulator core: memory, access patterns, instructions, launcher.

The contract every test below asserts: an input ends with the right answer, or with a ValueError/TypeError whose
message names the argument (and, where the rule says so, its value). Inputs are generated (sets, lists, NumPy scalars
and arrays, zero and huge sizes, views, bools). Nothing is timed: the work is bounded by construction, since every
huge input here would take minutes (or terabytes) if it were not refused first, and every accepted one is small.
"""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dwlit import nisa, nl, simulate_kernel
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.memory import float32, hbm, hbm_tensor, ndarray, psum, sbuf, shared_hbm
from dwlit.sim.target import MAX_HBM_BYTES, MAX_PROGRAMS

SETTINGS = dict(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def must_fail(call, *names):
    "The input is bad: `call()` must raise ValueError or TypeError, and the message must contain each of `names`."
    try:
        r = call()
    except (ValueError, TypeError) as e:
        for n in names:
            assert n in str(e), f"the message does not name {n!r}: {e}"
        return e
    raise AssertionError(f"no error; got {r!r}")


# --- generated pieces ------------------------------------------------------------------------------------------------

HUGE = st.integers(2**40, 2**62)                      # any axis this long needs terabytes: MemoryError if allocated
small_dim = st.integers(1, 6)
np_int = st.builds(lambda v, t: t(v), st.integers(1, 6), st.sampled_from([np.int8, np.int32, np.int64, np.uint16]))
bad_item = st.one_of(st.just(0), st.integers(-5, -1), st.booleans(), st.just(np.True_), st.floats(1, 4),
                     st.just(None), st.just('3'), HUGE)


def items_to_container(items, kind):
    return {'tuple': tuple, 'list': list, 'set': set, 'gen': lambda x: (i for i in x),
            'array': lambda x: np.array(x, dtype=np.int64)}[kind](items)


# --- 1. allocations: shapes of any kind, sizes checked before any memory is taken -------------------------------------

@settings(**SETTINGS)
@given(items=st.lists(st.one_of(small_dim, np_int, bad_item), min_size=0, max_size=4),
       kind=st.sampled_from(['tuple', 'list', 'set', 'gen', 'array', 'int']),
       buffer=st.sampled_from([sbuf, psum, hbm, shared_hbm]))
def test_ndarray_takes_any_shape(items, kind, buffer):
    if kind == 'int':
        shape, items = (items[0] if items else 0), items[:1]
    elif kind == 'array' and not all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))
                                     and abs(int(i)) < 2**62 for i in items):
        assume(False)                                 # np.array cannot hold these as int64; covered by the other kinds
    else:
        shape = items_to_container(items, kind)
    ok_kind = kind in ('tuple', 'list', 'array', 'int') and (kind != 'int' or items)
    ints = all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in items)
    dims = [int(i) for i in items] if ints else []
    valid = ok_kind and ints and len(items) > 0 and min(dims) >= 1
    core = NeuronCore('trn1')
    if valid:
        nbytes = math.prod(dims) * 4
        if buffer.on_chip:
            cap = core.target.sbuf_partition_bytes if buffer is sbuf else core.target.psum_partition_bytes
            valid = dims[0] <= 128 and math.prod(dims[1:]) * 4 <= cap
        else:
            valid = nbytes <= MAX_HBM_BYTES
    with use_core(core):
        if valid:
            t = ndarray(shape, float32, buffer=buffer, name='x')
            assert t.shape == tuple(dims) and np.isnan(t.numpy()).all()
        else:
            must_fail(lambda: ndarray(shape, float32, buffer=buffer, name='x'), "'x'")


@pytest.mark.parametrize("shape,buffer", [((128, 4 * 10**6), sbuf), ((1, 2**40), sbuf), ((2, 2**41), psum),
                                          ((2**20, 2**20), hbm), ((2**45,), shared_hbm)])
def test_huge_allocations_are_refused_before_any_memory_is_taken(shape, buffer):
    import tracemalloc
    tracemalloc.start()
    try:
        with use_core(NeuronCore()):
            must_fail(lambda: ndarray(shape, float32, buffer=buffer, name='big'), "'big'", str(shape[-1]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20, peak


# --- 2. kernel inputs: views measured by what they show, zero sizes, dtypes ------------------------------------------

views = st.one_of(
    st.builds(lambda s, v: np.broadcast_to(np.float32(v), s), st.lists(small_dim, min_size=1, max_size=3).map(tuple), st.floats(-2, 2)),
    st.builds(lambda s, big, k, v: np.broadcast_to(np.float32(v), s[:k] + (big,) + s[k:]),   # shows 256 GiB or more
              st.lists(small_dim, max_size=2).map(tuple), st.integers(2**36, 2**40), st.integers(0, 2), st.floats(-2, 2)),
    st.builds(lambda n, m, step: np.arange(n * m, dtype=np.float32).reshape(n, m)[::-1, ::step], small_dim, small_dim, st.integers(1, 3)),
    st.builds(lambda s: np.zeros(s, np.float32), st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)),
    st.builds(lambda s, dt: np.ones(s, dt), st.lists(small_dim, min_size=1, max_size=2).map(tuple),
              st.sampled_from([np.float16, ml_dtypes.bfloat16, np.float64, np.int32, np.bool_, np.complex64])),
)


@settings(**SETTINGS)
@given(a=views)
def test_hbm_tensor_takes_any_array(a):
    dtype_ok = a.dtype in (np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.bool_)   # NKI's dtypes; not float64, complex64
    valid = dtype_ok and a.ndim >= 1 and a.size * a.dtype.itemsize <= MAX_HBM_BYTES   # an empty array is moved as it is
    if valid:
        t = hbm_tensor(a, 'img')
        np.testing.assert_array_equal(t.numpy(), np.asarray(a))
    else:
        must_fail(lambda: hbm_tensor(a, 'img'), 'img')


def test_a_terabyte_broadcast_input_is_refused_by_its_shown_size():
    tb = np.broadcast_to(np.float32(1), (2**20, 2**20))
    must_fail(lambda: simulate_kernel(lambda img: img, tb), "'img'", "4,398,046,511,104 B", "MAX_HBM_BYTES")


# --- 3. the launcher: num_programs, and which arguments become tensors -----------------------------------------------

def _copy(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm, name='out')
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name='t')
    nisa.dma_copy(t, x); nisa.dma_copy(out, t)
    return out


@settings(max_examples=80, deadline=None)
@given(n=st.one_of(st.integers(-3, 8), st.integers(MAX_PROGRAMS + 1, 10**12), st.booleans(), st.just(np.True_),
                   st.builds(np.int64, st.integers(1, 4)), st.floats(1, 4), st.just('2'), st.just(None), st.just([2])))
def test_num_programs_is_bounded(n):
    x = np.arange(3, dtype=np.float32)
    if isinstance(n, (int, np.integer)) and not isinstance(n, (bool, np.bool_)) and 1 <= n <= MAX_PROGRAMS:
        np.testing.assert_array_equal(simulate_kernel(_copy, x, num_programs=n), x)
    else:   # 10**12 programs would run for days if not refused
        must_fail(lambda: simulate_kernel(_copy, x, num_programs=n), 'num_programs')


values = st.one_of(      # arrays with an axis are tensors, whatever their dtype (tests/test_nki_launch.py): not values
    st.builds(np.int64, st.integers(0, 9)), st.builds(np.float32, st.floats(0, 1)), st.builds(np.array, st.integers(0, 9)),
    st.builds(lambda v: np.array(v, dtype=np.float32), st.floats(0, 1)),      # 0-d float: a value, not a tensor
    st.tuples(st.integers(0, 3), st.integers(0, 3)), st.lists(st.integers(0, 3)), st.none(), st.integers(), st.text(max_size=3),
)


@settings(**SETTINGS)
@given(v=values, how=st.sampled_from(['positional', 'keyword', 'varargs', 'varkw']))
def test_values_reach_the_kernel_unchanged(v, how):
    "NumPy scalars, 0-d arrays and plain values are options: the kernel receives the object itself."
    seen = {}
    def k1(x, opt): seen['opt'] = opt; return x
    def k2(x, opt=None): seen['opt'] = opt; return x
    def k3(x, *opts): seen['opt'] = opts[0]; return x
    def k4(x, **kw): seen['opt'] = kw['opt']; return x
    x = np.arange(4, dtype=np.float32)
    run = {'positional': lambda: simulate_kernel(k1, x, v), 'keyword': lambda: simulate_kernel(k2, x, opt=v),
           'varargs': lambda: simulate_kernel(k3, x, v), 'varkw': lambda: simulate_kernel(k4, x, opt=v)}[how]
    np.testing.assert_array_equal(run(), x)
    assert seen['opt'] is v


@settings(max_examples=60, deadline=None)
@given(dt=st.sampled_from([np.float32, np.float16, ml_dtypes.bfloat16]), shape=st.lists(small_dim, min_size=1, max_size=3))
def test_floating_arrays_become_hbm_tensors(dt, shape):
    got = {}
    def k(x, *, w): got['w'] = w; return w
    w = np.ones(shape, dt)
    np.testing.assert_array_equal(simulate_kernel(k, np.zeros(1, np.float32), w=w), w)
    assert got['w'].buffer is hbm and got['w'].name == 'w'


# --- 4. slicing a tensor: basic indexing only, every index checked ----------------------------------------------------

index_item = st.one_of(
    st.integers(-8, 8), st.builds(np.int64, st.integers(-8, 8)), st.booleans(), st.just(np.False_),
    st.builds(slice, st.one_of(st.none(), st.integers(-8, 8)), st.one_of(st.none(), st.integers(-8, 8)),
              st.one_of(st.none(), st.integers(-3, 3))),
    st.lists(st.integers(-4, 4), min_size=0, max_size=3), st.builds(np.array, st.lists(st.integers(0, 3), min_size=1, max_size=3)),
    st.builds(lambda m: np.array(m, dtype=bool), st.lists(st.booleans(), min_size=4, max_size=4)),
    st.just(None), st.just(Ellipsis), st.floats(0, 3),
)


def _basic(i):
    return (isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))) or isinstance(i, slice) or i is Ellipsis


@settings(max_examples=300, deadline=None)
@given(idx=st.lists(index_item, min_size=0, max_size=3).map(tuple), single=st.booleans())
def test_tensor_indexing_is_basic_and_checked(idx, single):
    shape = (4, 6)
    with use_core(NeuronCore()):
        h = ndarray(shape, float32, buffer=hbm, name='h')
    ref = np.arange(24, dtype=np.float32).reshape(shape)
    h.write(ref)
    idx = idx[0] if single and len(idx) == 1 else idx
    items = idx if isinstance(idx, tuple) else (idx,)
    if not all(_basic(i) for i in items):
        bad = next(i for i in items if not _basic(i))
        shown = 'None' if bad is None else ('array' if isinstance(bad, np.ndarray) else repr(bad)[:8])
        must_fail(lambda: h[idx], "'h'", shown)
        return
    try:
        expect = ref[idx]
    except (IndexError, ValueError, TypeError) as e:   # out of range, too many indices, two ..., slice step 0
        err = must_fail(lambda: h[idx], "'h'")
        if 'out of bounds' in str(e) or 'out of range' in str(e):
            assert 'axis' in str(err), str(err)
        return
    lengths = _axis_lengths(items, shape)
    past_end = any(isinstance(i, slice) and n is not None and not _slice_inside(i, n) for i, n in zip(items, lengths))
    if np.size(expect) == 0 or past_end:                # nothing selected, or a slice NumPy would cut short: refused
        err = str(must_fail(lambda: h[idx], "'h'"))
        assert 'selects nothing' in err or 'reaches past its end' in err, err
        return
    np.testing.assert_array_equal(h[idx].numpy().ravel(), np.ravel(expect))


def _axis_lengths(items, shape) -> list:
    "The length of the axis each item of a basic index reads (None for the ..., which stands for the axes left over)."
    if Ellipsis not in items: return list(shape[:len(items)])
    k = items.index(Ellipsis); rest = len(items) - k - 1
    return list(shape[:k]) + [None] + list(shape[len(shape) - rest:])


def _slice_inside(i: slice, n: int) -> bool:
    "The bounds of slice `i` lie inside an axis of length `n` (NumPy would otherwise cut the slice short)."
    return all(b is None or -n <= b <= n for b in (i.start, i.stop)) and \
        not ((i.step or 1) < 0 and i.start is not None and i.start >= n)


def test_out_of_range_index_names_tensor_and_axis():
    with use_core(NeuronCore()):
        t = ndarray((4, 6), float32, buffer=sbuf, name='tile')
        must_fail(lambda: t[:, 6], "'tile'", 'axis 1', 'length 6')
        must_fail(lambda: t[0:2, :][:, -7], "tile.ap(", 'axis 1')
        must_fail(lambda: t[[0, 1]], "'tile'")                          # fancy on the partition axis


# --- 5. access patterns: bools, sets and floats refused as steps, nums and offsets -------------------------------------

scalar = st.one_of(st.integers(-3, 6), st.booleans(), st.just(np.True_), st.builds(np.int32, st.integers(0, 5)), st.floats(0, 3))


@settings(max_examples=300, deadline=None)
@given(pairs=st.lists(st.tuples(scalar, scalar), min_size=0, max_size=3), kind=st.sampled_from(['list', 'tuple', 'set']),
       pair_kind=st.sampled_from(['list', 'tuple', 'set']), offset=scalar)
def test_ap_refuses_bools_sets_and_floats(pairs, kind, pair_kind, offset):
    with use_core(NeuronCore()):
        h = ndarray((40,), float32, buffer=hbm, name='h')
    h.write(np.arange(40, dtype=np.float32))
    mk = {'list': list, 'tuple': tuple, 'set': set}
    try:
        pattern = mk[kind](mk[pair_kind](p) for p in pairs)
    except TypeError:
        assume(False)                                  # a set of lists cannot be made: nothing to test
    is_int = lambda v: isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
    well_formed = (kind != 'set' and pair_kind != 'set' and len(pairs) > 0
                   and all(is_int(s) and is_int(n) and n >= 1 for s, n in pairs) and is_int(offset) and offset >= 0)
    if not well_formed:
        must_fail(lambda: h.ap(pattern, offset), "'h'")
        return
    addrs = np.full([int(n) for _, n in pairs], int(offset))
    for ax, (s, n) in enumerate(pairs):
        addrs = addrs + int(s) * np.arange(int(n)).reshape([-1 if a == ax else 1 for a in range(len(pairs))])
    if addrs.min() < 0 or addrs.max() >= 40:
        must_fail(lambda: h.ap(pattern, offset), "'h'", 'out of bounds')
    else:
        np.testing.assert_array_equal(h.ap(pattern, offset).numpy(), addrs.astype(np.float32))


# --- 6. instructions: fill values, and step-0 views of any size -------------------------------------------------------

fill = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=False), st.builds(np.float16, st.floats(-100, 100)),
                 st.builds(np.int64, st.integers(-9, 9)), st.just(10**400), st.none(), st.booleans(), st.just(np.True_),
                 st.text(max_size=3), st.lists(st.floats(0, 1), max_size=2), st.just(1 + 2j), st.builds(np.array, st.floats(0, 1)))


@settings(**SETTINGS)
@given(value=fill, dt=st.sampled_from([np.float32, ml_dtypes.bfloat16]))
def test_memset_takes_numbers_only(value, dt):
    with use_core(NeuronCore()):
        t = ndarray((2, 3), dt, buffer=sbuf, name='t')
        number = (isinstance(value, (int, float, np.integer, np.floating))
                  and not isinstance(value, (bool, np.bool_)))
        if number and not (isinstance(value, int) and abs(value) > 10**308):
            with np.errstate(over='ignore'):
                nisa.memset(t, value)
                expect = np.full((2, 3), np.float32(float(value))).astype(dt)
            np.testing.assert_array_equal(t.numpy().astype(np.float32), expect.astype(np.float32))
        else:
            must_fail(lambda: nisa.memset(t, value), 'memset', 'value')


@pytest.mark.parametrize("dt", [np.float32, ml_dtypes.bfloat16])
def test_step0_views_of_any_size_are_bounded(dt):
    "A step-0 pattern shows 10**12 elements of a 24-element tile: reads, writes and copies of it are refused, not run."
    with use_core(NeuronCore()):
        t = ndarray((2, 12), dt, buffer=sbuf, name='t')
        r = ndarray((2, 4), dt, buffer=sbuf, name='r')
        nisa.memset(t, 1.0)
        wide = t.ap([[12, 2], [0, 4], [0, 10**12]])
        must_fail(lambda: nisa.tensor_reduce(r, nl.add, wide, axis=2), 'tensor_reduce', 'data', 'MAX_FREE_ELEMENTS')
        must_fail(lambda: nisa.memset(t.ap([[12, 2], [0, 10**12]]), 0.0), 'memset', 'more than once')
        must_fail(lambda: nisa.tensor_tensor(t.ap([[12, 2], [0, 10**12]]), wide[:, 0, :], wide[:, 0, :], nl.add),
                  'tensor_tensor', 'MAX_FREE_ELEMENTS')
        must_fail(lambda: wide.numpy(), 't.ap(', 'MAX_VIEW_ELEMENTS')
        must_fail(lambda: wide.addresses(), 't.ap(', 'MAX_VIEW_ELEMENTS')
        h = ndarray((2, 12), dt, buffer=hbm, name='h')
        must_fail(lambda: nisa.dma_copy(h.ap([[0, 10**6], [0, 10**6]]), wide[:, 0, :]), 'dma_copy')


@settings(max_examples=60, deadline=None)
@given(a=st.one_of(st.builds(lambda s: np.full((2, 3), s), st.text(max_size=2)), st.just(np.full((2, 3), None)),
                   st.builds(lambda v: np.full((2, 3), v), st.complex_numbers(max_magnitude=5)),
                   st.builds(lambda v: np.full((2, 3), v), st.floats(-5, 5)),
                   st.builds(lambda v: np.full((2, 3), v, dtype=np.int16), st.integers(-5, 5))))
def test_write_takes_real_numbers_only(a):
    with use_core(NeuronCore()):
        t = ndarray((2, 3), float32, buffer=hbm, name='t')
    if a.dtype.kind in 'iuf':
        t.write(a)
        np.testing.assert_array_equal(t.numpy(), a.astype(np.float32))
    else:
        must_fail(lambda: t.write(a), "'t'", str(a.dtype))


def test_dtype_arguments_are_named_or_refused():
    "as_dtype and kernel_dtype (chapter 2) take a name, a NumPy dtype or a type, and refuse the rest by name."
    from dwlit.sim.memory import DTYPES, as_dtype, int8, kernel_dtype
    assert as_dtype('bfloat16').itemsize == 2 and as_dtype('>f4') == float32       # a byte order is still float32
    assert as_dtype('int8', allowed=DTYPES) == int8                                  # a tensor may hold int8 and fp8
    assert kernel_dtype('bfloat16').name == 'bfloat16'
    must_fail(lambda: as_dtype('int32'), "dtype must be one of float32, float16, bfloat16, got dtype='int32'")
    must_fail(lambda: kernel_dtype('int8', 'img.dtype'), "img.dtype must be one of float32, float16, bfloat16")
