"""Round four of hostile inputs (issue 30), the simulator's cases: each call ends at once in a clear error that names
the argument, never a crash, a wrong answer, or an allocation the size of the input. A property test then throws
arbitrary values at the same arguments."""
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dwlit.nki.language as nkl
from dwlit import nisa, nl
from dwlit.kernels.reference import depthwise1d
from dwlit.sim.checks import SimulatorError, check_ints
from dwlit.sim.core import NeuronCore
from dwlit.sim.launch import kernel
from dwlit.sim.memory import ndarray, sbuf, unset


def tile(shape=(4, 8), dtype='float32', fill=1.0):
    t = ndarray(shape, dtype, sbuf, name='t')
    if fill is not None: t.write(np.full(shape, fill, np.float32).astype(t.dtype))
    return t


def refused(call, *words, seconds=2.0):
    "`call()` raises a dwlit error (ValueError/TypeError) whose message holds each of `words`, within `seconds`."
    t0 = time.perf_counter()
    with pytest.raises((ValueError, TypeError)) as e:
        call()
    assert time.perf_counter() - t0 < seconds, f"took {time.perf_counter() - t0:.1f} s"
    assert isinstance(e.value, SimulatorError) or type(e.value).__module__.startswith('dwlit'), repr(e.value)
    for w in words: assert w in str(e.value), f"{w!r} not in: {e.value}"
    return str(e.value)


# The cases the round found, each with the word the message must hold
CASES = {
    'a slice past the end is not cut short': (lambda: tile()[nl.ds(2, 5), :], 'reaches past its end'),
    'nl.sum keepdims must be a bool': (lambda: nl.sum(tile(), 1, keepdims='no'), 'keepdims'),
    'nl.sum dtype must be a dtype': (lambda: nl.sum(tile(), 1, dtype=0), 'dtype'),
    'nl.sum of no axis': (lambda: nl.sum(tile(), axis=()), 'axis'),
    'nl.sum of None': (lambda: nl.sum(None, 1), 'x'),
    'nl.broadcast_to of None': (lambda: nl.broadcast_to(None, (4, 8)), 'x'),
    'nl.zeros_like of None': (lambda: nl.zeros_like(None), 'x'),
    "NKI's nl.sum of None": (lambda: nkl.sum(None, 1), 'x'),
    "NKI's nl.sum keepdims": (lambda: nkl.sum(tile(), 1, keepdims='no'), 'keepdims'),
    "NKI's nl.broadcast_to of None": (lambda: nkl.broadcast_to(None, (4, 8)), 'src'),
    "NKI's nl.zeros_like of None": (lambda: nkl.zeros_like(None), 'a'),
    "NKI's nl.exp of None": (lambda: nkl.exp(None), 'x'),
    'memset beyond fp16 is an error, not inf': (lambda: nisa.memset(tile(dtype='float16', fill=None), 1e6), 'float16'),
    'iota offset beyond int32': (lambda: nisa.iota(tile(fill=None), [[1, 8]], 10**30), 'offset'),
    'iota step beyond int32': (lambda: nisa.iota(tile(fill=None), [[10**20, 8]], 0), 'pattern[0]'),
    'a range of 10**10 items is counted, not listed': (lambda: check_ints(range(10**10), 'x', 2), 'x'),
    'a shape of 10**10 axes is counted, not listed': (lambda: ndarray(range(10**10), 'float32', sbuf), 'shape'),
    'storage for -1 elements': (lambda: unset(-1, 'float32'), 'n'),
    'a core of 0 programs': (lambda: NeuronCore(None, 0, 0), 'num_programs'),
    'a core running program -5': (lambda: NeuronCore(None, -5, 2), 'program_id'),
    'a kernel for trn9': (lambda: kernel(lambda x: x, platform_target='trn9'), 'trn9'),
    'the reference padded by 10**9': (lambda: depthwise1d(np.zeros((1, 4, 1, 16), np.float32),
                                                          np.zeros((4, 1, 1, 3), np.float32), (10**9, 0)), 'padding'),
}


@pytest.mark.parametrize('case', list(CASES))
def test_round_four_case_is_refused_by_name(case):
    call, word = CASES[case]
    refused(call, word)


def test_the_slice_rule_still_takes_slices_that_fit():
    v = tile()[nl.ds(1, 3), 2:8]
    assert tuple(v.shape) == (3, 6)
    assert tuple(tile()[0:4, :].shape) == (4, 8)


def test_fp16_still_takes_its_largest_number_and_inf():
    t = tile(dtype='float16', fill=None)
    nisa.memset(t, 65504.0)
    assert float(t.numpy().max()) == 65504.0
    nisa.memset(t, -np.inf)                                  # the start of a max: not a finite number out of range
    assert np.isneginf(t.numpy()).all()


def test_a_kernel_takes_a_known_target_and_no_unknown_option():
    assert kernel(lambda x: x, platform_target='trn2').target == 'trn2'
    with pytest.raises(TypeError, match='platform_targt'):
        kernel(lambda x: x, platform_targt='trn2')


HOSTILE = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True), st.text(max_size=5),
                    st.sets(st.integers(0, 3), max_size=3), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
                    st.lists(st.integers(-3, 10**12), max_size=6), st.just(range(10**12)), st.just(np.uint8(255)),
                    st.just(np.array([[1, 2]])))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(axis=HOSTILE, keepdims=HOSTILE, dtype=HOSTILE)
def test_nl_sum_ends_in_a_tile_or_a_clear_error_on_any_arguments(axis, keepdims, dtype):
    for f in (nl.sum, nkl.sum):
        try:
            out = f(tile(), axis, dtype=dtype, keepdims=keepdims)
        except (ValueError, TypeError) as e:
            assert isinstance(e, SimulatorError) or type(e).__module__.startswith('dwlit'), repr(e)
            assert any(w in str(e) for w in ('axis', 'keepdims', 'dtype')), str(e)
        else:
            assert out.shape[0] == 4 and isinstance(keepdims, bool)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.integers(-10, 12), size=st.integers(-2, 12), stop=st.one_of(st.none(), st.integers(-10, 12)))
def test_indexing_a_tile_gives_the_numpy_rows_or_a_clear_error(start, size, stop):
    rows = np.arange(4)
    try:
        got = tile()[nl.ds(start, size), :]
    except (ValueError, TypeError) as e:
        assert isinstance(e, SimulatorError), repr(e)
        assert not (0 <= start and 1 <= size and start + size <= 4), f"nl.ds({start}, {size}) fits 4 rows: {e}"
    else:
        assert list(rows[start:start + size]) == list(range(start, start + size)) and got.shape[0] == size
    try:
        got = tile()[start:stop, :]
    except (ValueError, TypeError) as e:
        assert isinstance(e, SimulatorError), repr(e)
    else:
        assert got.shape[0] == len(rows[start:stop])


def test_trace_where_refuses_a_name_no_instruction_records():
    "A misspelt op or engine matched nothing and answered [], as if the kernel had issued none (the last case of round 4)."
    from dwlit import simulate_kernel, trace
    from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01 as conv1d
    with trace() as tr:
        simulate_kernel(conv1d, np.ones((1, 4, 1, 20), np.float32), np.ones((4, 1, 1, 3), np.float32), ((0, 0), (1, 1)),
                        out_shape=(1, 4, 1, 20))
    assert len(tr.where(op='tensor_tensor')) == 1 and tr.where(op='nc_matmul') == []     # absent but real: nothing
    for bad, hint in ((dict(op='tensor_tensr'), "did you mean 'tensor_tensor'"), (dict(engine='vector'), "'Vector'"),
                      (dict(op=3), "op=3 is not a name")):
        with pytest.raises(SimulatorError, match=hint):
            tr.where(**bad)
