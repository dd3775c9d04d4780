"Property tests for access patterns: every valid pattern reads what an explicit index computation says; every out-of-bounds one raises."
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dwlit.sim.checks import AccessPatternError, SimulatorError
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.memory import float32, hbm, ndarray, sbuf


def explicit_addresses(pattern, offset):
    "Enumerate addresses with plain Python loops: offset + sum(i_k * step_k), the NKI definition."
    nums = [n for _, n in pattern]
    out = np.empty(nums, dtype=np.int64)
    for idx in itertools.product(*[range(n) for n in nums]):
        out[idx] = offset + sum(i * s for i, (s, _) in zip(idx, pattern))
    return out


pairs = st.lists(st.tuples(st.integers(-6, 9), st.integers(1, 5)), min_size=1, max_size=3)


@settings(max_examples=300, deadline=None)
@given(size=st.integers(1, 60), pattern=pairs, offset=st.integers(0, 70))
def test_hbm_pattern_reads_exactly_the_indexed_elements(size, pattern, offset):
    with use_core(NeuronCore()):
        t = ndarray((size,), float32, buffer=hbm, name='h')
    t.write(np.arange(size, dtype=np.float32))
    addrs = explicit_addresses(pattern, offset)
    if addrs.min() < 0 or addrs.max() >= size:
        with pytest.raises(AccessPatternError, match="out of bounds"):
            t.ap([list(p) for p in pattern], offset)
        return
    v = t.ap([list(p) for p in pattern], offset)
    np.testing.assert_array_equal(v.numpy(), addrs.astype(np.float32))   # element value == its address
    np.testing.assert_array_equal(v.addresses(), addrs)
    assert np.shares_memory(v.array, t.storage)


@settings(max_examples=300, deadline=None)
@given(P=st.integers(1, 8), F=st.integers(1, 12), nparts=st.integers(1, 9),
       free=st.lists(st.tuples(st.integers(-3, 6), st.integers(1, 6)), min_size=1, max_size=2),
       p0=st.integers(0, 8), f0=st.integers(0, 13))
def test_sbuf_pattern_stays_inside_partitions(P, F, nparts, free, p0, f0):
    with use_core(NeuronCore()):
        t = ndarray((P, F), float32, buffer=sbuf, name='s')
        t.write(np.arange(P * F, dtype=np.float32).reshape(P, F))
        pattern = [[F, nparts]] + [list(p) for p in free]
        offset = p0 * F + f0
        addrs = explicit_addresses(pattern, offset)
        # valid iff the partitions exist and each partition's free walk stays within [0, F):
        # the flat offset names partition offset // F, element offset % F
        first_p, first_f = divmod(offset, F)
        free_addrs = explicit_addresses([list(p) for p in free], first_f)
        ok = first_p + nparts <= P and free_addrs.min() >= 0 and free_addrs.max() < F
        if not ok:
            with pytest.raises(AccessPatternError):
                t.ap(pattern, offset)
            return
        v = t.ap(pattern, offset)
        np.testing.assert_array_equal(v.numpy(), addrs.astype(np.float32))


def test_error_names_tensor_pattern_offset_and_size():
    with use_core(NeuronCore()):
        t = ndarray((4, 12), float32, name='tile')
        with pytest.raises(AccessPatternError) as e:
            t.ap([[12, 5], [1, 12]], offset=0)
    msg = str(e.value)
    for part in ["'tile'", "[[12, 5], [1, 12]]", "offset=0", "0..59", "0..47"]:
        assert part in msg, (part, msg)


def test_errors_are_simulator_errors_and_value_errors():
    assert issubclass(AccessPatternError, SimulatorError) and issubclass(SimulatorError, ValueError)


@pytest.mark.parametrize("bad", [[], [[1]], [[1, 0]], [[1.5, 2]], "x"])
def test_malformed_patterns_raise(bad):
    with use_core(NeuronCore()):
        t = ndarray((8,), float32, buffer=hbm)
        with pytest.raises(AccessPatternError):
            t.ap(bad)


def index_strategy(n):
    "A basic index into an axis of length n: an int (negative allowed) or a slice with any step sign."
    ints = st.integers(-n, n - 1)
    bounds = st.one_of(st.none(), st.integers(-n - 2, n + 2))
    slices = st.builds(slice, bounds, bounds, st.one_of(st.none(), st.integers(-4, 4).filter(lambda k: k != 0)))
    return st.one_of(ints, slices)


def fits(i, n) -> bool:
    "A slice whose bounds stay inside the axis (NKI does not cut a slice short, as NumPy does); an int always fits here."
    if not isinstance(i, slice): return True
    bounds_in = all(b is None or -n <= b <= n for b in (i.start, i.stop))
    return bounds_in and not ((i.step or 1) < 0 and i.start is not None and i.start >= n)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 6), min_size=1, max_size=3))
def test_hbm_slicing_matches_numpy(data, shape):
    shape = tuple(shape)
    idx = tuple(data.draw(index_strategy(n)) for n in shape)
    with use_core(NeuronCore()):
        t = ndarray(shape, float32, buffer=hbm, name='h')
    ref = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    t.write(ref)
    expect = ref[idx]
    if expect.size == 0 or not all(fits(i, n) for i, n in zip(idx, shape)):   # empty, or NumPy would cut it short
        with pytest.raises(AccessPatternError):
            t[idx]
        return
    np.testing.assert_array_equal(t[idx].numpy().ravel(), np.ravel(expect))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), shape=st.lists(st.integers(1, 6), min_size=2, max_size=4), on_chip=st.booleans(),
       twice=st.booleans())
def test_an_index_view_is_the_storage_its_pattern_names(data, shape, on_chip, twice):
    """`t[idx]` (of a tensor, or of a view of it) is cut from the view it indexes; whatever the index, its array must be
    the elements its own pattern and offset name, and writing through it must change the tensor (an index of integers
    only once gave a NumPy scalar, a copy)."""
    from dwlit.sim.ap import make_view
    shape = tuple(shape)
    with use_core(NeuronCore()):
        t = ndarray(shape, float32, buffer=sbuf if on_chip else hbm, name='t')
    t.write(np.arange(np.prod(shape), dtype=np.float32).reshape(shape))
    x = t[tuple(slice(None) for _ in shape)] if twice else t
    idx = tuple(data.draw(index_strategy(n)) for n in shape)          # negative integers, steps of either sign
    try: v = x[idx]
    except AccessPatternError: return                                   # empty, or past an axis: refused (tested above)
    fresh = make_view(t, [list(p) for p in v.pattern], v.offset)          # the same pattern, made and checked anew
    assert v.shape == fresh.shape and np.array_equal(v.array, fresh.array)
    v.array[...] = -1
    assert (t.storage[v.addresses().ravel()] == -1).all()                 # written through: a view, not a copy


def test_ap_of_a_view_with_a_dtype_reinterprets_its_bytes():
    """`view.ap(pattern, dtype=...)` reads the same bytes in another dtype. (When appendix 34c replaced `.ap` by a wrapper
    whose third positional argument was NKI's `scalar_offset`, this call passed its dtype as that offset and got a
    view whose start moved at run time.)"""
    with use_core(NeuronCore()):
        t = ndarray((4, 8), float32, buffer=sbuf, name='t')
    t.write(np.arange(32, dtype=np.float32).reshape(4, 8))
    v = t[:, 2:6].ap([[16, 4], [1, 4]], dtype=np.float16)
    assert type(v).__name__ == 'View' and v.dtype == np.float16 and v.offset == 4
    np.testing.assert_array_equal(v.numpy().view(np.float32), t.numpy()[:, 2:4])
    s = t.ap([[16, 4], [1, 2]], 0, dtype=np.float16)                   # the tensor's own .ap: 16 fp16 per partition
    assert s.dtype == np.float16 and s.shape == (4, 2)
    d = t.ap([[8, 4], [1, 2]], 0, 1)                                   # NKI's order: the third is scalar_offset
    assert t.ap([[8, 4], [1, 2]], None).offset == 0                    # offset=None is 0, as for a view's .ap
    assert 'offset=0 + 8 * 1' in repr(d)
