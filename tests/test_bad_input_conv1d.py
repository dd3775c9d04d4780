"""Safe on any input: the 1D kernels and planners end, in bounded time and memory, with the right answer or a
SimulatorError (a ValueError; SimulatorTypeError is also a TypeError) that names the argument, its value and the rule.

Each test replaces one argument of a valid call by a generated value of one of these classes:
  ok      an integer in range, as a Python int, a NumPy integer scalar, or (for sequences) a list, a tuple or an
          integer NumPy array: the answer must equal the one for the plain Python form;
  kind    a bool, a float (even 3.0), a string, None, a set, a dict, a generator, a nested or wrong-length
          sequence: a SimulatorTypeError or SimulatorError naming the argument;
  value   zero, negative, or a value a rule refuses: a SimulatorError naming the argument;
  huge    10**9 and beyond: the right answer or a SimulatorError, within the time and memory limits.
"""
import re
import signal
import sys
import time
import tracemalloc
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dwlit import SimulatorError, kernel, simulate_kernel
from dwlit.kernels.conv1d import (
    conv1d_depthwise_bf01_oi01_bf01,
    conv1d_depthwise_default,
    conv1d_depthwise_f_packing,
    conv1d_geometry,
    conv1d_sbuf_bytes,
)
from dwlit.kernels.conv1d_plan import conv1d_plan, max_W, sbuf_report
from dwlit.kernels.im2col import broadcast_ap, read_map, window_ap
from dwlit.kernels.tiling import dispatch_decision, instruction_free_sizes, spmd_tile_table
from dwlit.sim.checks import SimulatorTypeError
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.memory import float32, ndarray
from dwlit.sim.target import MAX_PROGRAMS

SECONDS, MEGABYTES = 10, 200          # every call ends within these, whatever it is given
LINE_NUMBER = re.compile(r"\bL\d{2,4}\b")


class TooSlow(BaseException):
    "Raised by the alarm; a BaseException so that no `except Exception` in the code under test can swallow it."


def address_space_cap(extra=2**31):
    """Lower the process's address-space limit to its current size + `extra` (Linux), so that a regression that tries to
    allocate tens of GB gets a MemoryError instead of the machine's memory; returns the limits to restore, or None."""
    try:
        import resource
        size = int(re.search(r"VmSize:\s+(\d+) kB", open('/proc/self/status').read()).group(1)) * 1024
        old = resource.getrlimit(resource.RLIMIT_AS)
        cap = size + extra if old[1] == resource.RLIM_INFINITY else min(size + extra, old[1])
        resource.setrlimit(resource.RLIMIT_AS, (cap, old[1]))
        return old
    except (ImportError, OSError, AttributeError, ValueError): return None


@contextmanager
def bounded():
    "Fail if the block runs longer than SECONDS or allocates more than MEGABYTES at its peak (tracemalloc)."
    def alarm(*_): raise TooSlow(f"more than {SECONDS} s")
    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, SECONDS)
    limits = address_space_cap()
    tracemalloc.start()
    try: yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0); signal.signal(signal.SIGALRM, old)
        if limits is not None:
            import resource
            resource.setrlimit(resource.RLIMIT_AS, limits)
        _, peak = tracemalloc.get_traced_memory(); tracemalloc.stop()
        assert peak < MEGABYTES * 2**20, f"peak memory {peak / 2**20:.0f} MB"


def outcome(fn):
    "('ok', result) or ('error', exception): any exception that is not a SimulatorError fails the test."
    with bounded():
        try: return 'ok', fn()
        except SimulatorError as e: return 'error', e
        except (MemoryError, TooSlow) as e: pytest.fail(f"unbounded: {type(e).__name__}: {e}")
        except Exception as e: pytest.fail(f"not a SimulatorError: {type(e).__name__}: {e}")


def names(e, *args):
    "The message names one of `args` and carries no line number of the original."
    msg = str(e)
    assert any(a in msg for a in args), f"message does not name {args}: {msg}"
    assert not LINE_NUMBER.search(msg), f"line number in the message: {msg}"


def same(a, b):
    "Results compare equal (NumPy arrays elementwise, dataclasses and lists field by field)."
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray): return np.array_equal(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict): return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


# --- generated values ---------------------------------------------------------------------------------------------

NP_INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp]
BAD_KINDS = [True, False, np.bool_(True), 3.0, np.float64(2.0), 2.5, '3', b'3', None, 3 + 0j, [3], (3,), {3},
             {'a': 3}, object(), slice(3)]
HUGE = [10**9, 2**31, 2**62, 2**63, 10**30]


def as_np(v):
    "The same integer as a NumPy scalar of a type that holds it, or the Python int itself."
    return st.sampled_from([t for t in NP_INTS if np.iinfo(t).min <= v <= np.iinfo(t).max] or [int]).map(lambda t: t(v))


def int_value(lo, hi):
    "('ok', int or NumPy scalar, plain int) for lo <= v <= hi."
    return st.integers(lo, hi).flatmap(lambda v: st.tuples(st.just('ok'), st.one_of(st.just(v), as_np(v)), st.just(v)))


def scalar(lo, hi, minimum):
    "A value for an integer argument whose valid values are minimum.., tested in lo..hi: tagged with its class."
    return st.one_of(
        int_value(lo, hi),
        st.sampled_from(BAD_KINDS).map(lambda v: ('kind', v, None)),
        st.integers(-10**6, minimum - 1).flatmap(lambda v: st.tuples(st.just('value'), st.one_of(st.just(v), as_np(v)),
                                                                      st.just(v))),
        st.sampled_from(HUGE).map(lambda v: ('huge', v, v)))


def seq_forms(values):
    "The same integers as a tuple, a list, or an integer NumPy array."
    vs = list(values)
    return st.sampled_from([tuple(vs), vs, np.array(vs, np.int64), np.array(vs, np.int32), tuple(np.int64(v) for v in vs)])


def bad_seq(values):
    "Sequences that must be refused: unordered, one-shot, the wrong length, or holding a non-integer."
    vs = list(values)
    return st.sampled_from([
        set(vs), frozenset(vs), dict.fromkeys(vs), (v for v in vs), iter(vs), str(tuple(vs)), tuple(vs) + (0,),
        tuple(vs[:-1]), tuple(vs[:-1]) + (True,), tuple(vs[:-1]) + (float(vs[-1]),), tuple(vs[:-1]) + (None,),
        np.array(vs, np.float64), np.array([vs, vs]), 7, None])


def read_as(value, n_out):
    """The W_out a padding `value` would give if read in iteration order (sets, dicts): so that a wrong kind is never
    caught by accident, as a mismatched out_shape, instead of by its own check."""
    if isinstance(value, (set, frozenset, dict)) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return sum(value) + n_out
    return None


def pair_value():
    "A (left, right) padding pair, tagged: ok, kind, value (negative) or huge."
    return st.one_of(
        st.tuples(st.integers(0, 4), st.integers(0, 4)).flatmap(lambda p: seq_forms(p).map(lambda f: ('ok', f, p))),
        st.tuples(st.integers(0, 4), st.integers(0, 4)).flatmap(lambda p: bad_seq(p).map(lambda f: ('kind', f, None))),
        st.tuples(st.integers(-5, -1), st.integers(0, 4)).flatmap(lambda p: st.permutations(p)).map(lambda p: ('value', tuple(p), None)),
        st.sampled_from(HUGE).map(lambda h: ('huge', (0, h), None)),
        # the case from the issue: a set reads in arbitrary order, {3, 1} iterates as (1, 3)
        st.just(('kind', {3, 1}, None)))


# --- conv1d_geometry: every argument ------------------------------------------------------------------------------

BASE = dict(img_shape=(2, 4, 1, 10), filter_shape=(4, 1, 1, 3), padding=((0, 0), (1, 1)), out_shape=(2, 4, 1, 10))


def geometry(**kw):
    a = dict(BASE, **kw)
    return conv1d_geometry(a.pop('img_shape'), a.pop('filter_shape'), a.pop('padding'), a.pop('out_shape'), **a)


@settings(max_examples=300, deadline=None)
@given(pair_value(), st.sampled_from(['W', 'H']))
@example(('kind', {3, 1}, None), 'W').via('the issue: computes with (1, 3)')
@example(('kind', {0, 2}, None), 'W').via('a set in sorted order')
def test_geometry_padding(p, which):
    cls, value, plain = p
    padding = ((0, 0), value) if which == 'W' else (value, (1, 1))
    W_out = sum(plain) + 10 - 3 + 1 if cls == 'ok' and which == 'W' else (which == 'W' and read_as(value, 8)) or 10
    kind, r = outcome(lambda: geometry(padding=padding, out_shape=(2, 4, 1, W_out)))
    if cls == 'ok' and which == 'W':
        assert kind == 'ok', r
        assert (r.W_padding_l, r.W_padding_r, r.W_out) == (*plain, W_out)
        assert all(type(v) is int for v in (r.W_padding_l, r.W_padding_r, r.W_out))
    else:
        if cls == 'ok' and plain == (0, 0): assert kind == 'ok'; return      # H padding (0, 0) in any form is fine
        # a huge or mismatched W padding may also be refused as a wrong out_shape: out_shape is derived from it
        assert kind == 'error', f"{padding!r} accepted: {r}"
        names(r, 'padding', 'out_shape')
        if cls == 'kind': assert 'padding' in str(r)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.sampled_from([2, 4, 1, 10]).flatmap(lambda _: seq_forms((2, 4, 1, 10)).map(lambda f: ('ok', f))),
                 bad_seq((2, 4, 1, 10)).map(lambda f: ('kind', f)),
                 st.sampled_from([(2, 4, 1, 11), (0, 4, 1, 10), (2, 4, 1, 0), (2, 4, 2, 10), (-2, 4, 1, 10), 10,
                                  (2, 4, 1, 10**9)]).map(lambda f: ('value', f))))
def test_geometry_out_shape(o):
    cls, value = o
    kind, r = outcome(lambda: geometry(out_shape=value))
    if cls == 'ok': assert kind == 'ok' and r.out_shape == (2, 4, 1, 10) and all(type(v) is int for v in r.out_shape)
    else: assert kind == 'error'; names(r, 'out_shape')


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(['img_shape', 'filter_shape']), st.integers(0, 3), scalar(1, 6, 1))
def test_geometry_shapes(which, axis, v):
    "One dimension of img.shape or filter.shape replaced: zero, negative, huge, or not an integer."
    cls, value, plain = v
    shape = list(BASE[which]); shape[axis] = value
    kind, r = outcome(lambda: geometry(**{which: tuple(shape)}))
    arg = 'img.shape' if which == 'img_shape' else 'filter.shape'
    if kind == 'ok':
        assert cls in ('ok', 'huge'), f"{shape} accepted"
        ref = geometry(**{which: tuple(plain if i == axis else s for i, s in enumerate(shape))})
        assert r == ref
    else:
        # a valid but different dimension makes the call inconsistent: the message may name the rule it breaks
        names(r, arg, 'out_shape', 'H', 'W_f', 'C_', 'filter', 'padded row')
        if cls == 'kind': assert isinstance(r, SimulatorTypeError) and arg in str(r)
        if cls == 'value': assert arg in str(r)


UNSUPPORTED = st.one_of(st.integers(2, 9), st.tuples(st.just(1), st.integers(2, 9)), st.tuples(st.integers(2, 9), st.just(1)),
                        st.integers(2, 9).map(lambda v: np.array([1, v])), st.integers(2, 9).map(np.int64))
UNIT = st.sampled_from([None, 1, (1, 1), [1], np.int64(1), np.array([1, 1]), (np.int32(1), 1)])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(['stride', 'rhs_dilation', 'lhs_dilation']), st.one_of(UNSUPPORTED.map(lambda v: ('value', v)),
       UNIT.map(lambda v: ('ok', v)), st.sampled_from([True, 1.0, {1}, '1', (1.0, 1), (True, 1), (i for i in (1, 1))]).map(lambda v: ('kind', v))),
       st.sampled_from(['right', 'for stride 2', 'wrong']))
def test_unsupported_options_are_reported_first(opt, v, out):
    "An option the 1D kernels do not compute is reported before any derived-shape check, whatever out_shape says."
    cls, value = v
    out_shape = {'right': (2, 4, 1, 10), 'for stride 2': (2, 4, 1, 5), 'wrong': (2, 4, 1, 99)}[out]
    kind, r = outcome(lambda: geometry(out_shape=out_shape, **{opt: value}))
    if cls == 'ok':
        if out == 'right': assert kind == 'ok'
        else: assert kind == 'error' and 'out_shape' in str(r)
    else:
        assert kind == 'error', r
        assert str(r).split(": ", 1)[1].startswith(opt), str(r)
        if cls == 'kind': assert isinstance(r, SimulatorTypeError)


def test_the_stride_2_case_of_the_issue():
    "A stride-2 call that passes its stride-2 out_shape is told that stride must be 1."
    x = np.zeros((1, 256, 1, 898), np.float32); f = np.zeros((256, 1, 1, 3), np.float32)
    with pytest.raises(SimulatorError, match=r"stride must be 1"):
        conv1d_depthwise_bf01_oi01_bf01(x, f, ((0, 0), (1, 1)), stride=(1, 2), out_shape=(1, 256, 1, 449))


# --- the kernels ----------------------------------------------------------------------------------------------------

rng = np.random.default_rng(0)
IMG = rng.standard_normal((2, 130, 1, 12)).astype(np.float32)
FILT = rng.standard_normal((130, 1, 1, 3)).astype(np.float32)


def reference(pl, pr):
    x = np.pad(IMG[:, :, 0].astype(np.float64), ((0, 0), (0, 0), (pl, pr)))
    return np.stack([[np.correlate(x[n, c], FILT[c, 0, 0].astype(np.float64), 'valid') for c in range(130)]
                     for n in range(2)])[:, :, None]


def entry(padding, out_shape, k=1, **kw):
    "The entry point with padding/out_shape/options given as they are: not through simulate_kernel's argument placement."
    @kernel
    def call(img, filt): return conv1d_depthwise_bf01_oi01_bf01(img, filt, padding, out_shape=out_shape, **kw)
    return simulate_kernel(call, IMG, FILT, num_programs=k)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair_value(), st.booleans())
@example(('kind', {3, 1}, None), False).via('the issue: computes with (1, 3)')
@example(('ok', np.array([3, 1]), (3, 1)), True).via('an integer NumPy array')
def test_entry_point_padding(p, out_from_plain):
    "NumPy arrays, NumPy integers and lists as padding give the right answer; sets and the rest a clear error."
    cls, value, plain = p
    W_out = (sum(plain) if cls == 'ok' else read_as(value, 0) or 2) + 12 - 3 + 1
    out_shape = np.array([2, 130, 1, W_out]) if out_from_plain else [2, 130, 1, W_out]
    kind, r = outcome(lambda: entry(((0, 0), value), out_shape))
    if cls == 'ok':
        assert kind == 'ok', r
        np.testing.assert_allclose(r, reference(*plain), rtol=1e-5, atol=1e-5)
    else:
        assert kind == 'error', f"padding {value!r} accepted"
        names(r, 'padding', 'out_shape')


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([conv1d_depthwise_default, conv1d_depthwise_f_packing, conv1d_depthwise_bf01_oi01_bf01]),
       st.sampled_from(['img', 'filter', 'out']),
       st.sampled_from([None, [[1.0, 2.0]], ((1.0,),), 3.0, 'img', {'a': 1}, [[[[1.0] * 12] * 130] * 2]]))
def test_kernel_arguments_that_are_not_tensors(kern, arg, value):
    "Lists, tuples, None, scalars where a tensor belongs: a SimulatorTypeError naming the argument."
    if kern is conv1d_depthwise_bf01_oi01_bf01 and arg == 'out': arg = 'img'
    args = dict(img=IMG, filter=FILT, out=np.zeros((2, 130, 1, 12), np.float32))
    args[arg] = value
    if kern is conv1d_depthwise_bf01_oi01_bf01:
        fn = lambda: kern(args['img'], args['filter'], ((0, 0), (1, 1)), out_shape=(2, 130, 1, 12))
    else:
        fn = lambda: kern(args['img'], args['filter'], args['out'], ((0, 0), (1, 1)))
    kind, r = outcome(fn)
    assert kind == 'error' and isinstance(r, SimulatorTypeError), r
    names(r, arg)


@pytest.mark.parametrize('kern', [conv1d_depthwise_default, conv1d_depthwise_f_packing])
def test_out_none_on_the_direct_kernels(kern):
    kind, r = outcome(lambda: kern(IMG, FILT, None, ((0, 0), (1, 1))))
    assert kind == 'error' and isinstance(r, SimulatorTypeError)
    names(r, 'out')


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(['img', 'filter', 'out']), st.integers(0, 3), st.sampled_from([conv1d_depthwise_default,
       conv1d_depthwise_f_packing, conv1d_depthwise_bf01_oi01_bf01]))
def test_zero_size_dimensions_are_named_as_given(arg, axis, kern):
    "A zero in any dimension of any tensor is reported as that argument's shape, not as an internal buffer."
    shapes = dict(img=[2, 130, 1, 12], filter=[130, 1, 1, 3], out=[2, 130, 1, 12])
    if kern is conv1d_depthwise_bf01_oi01_bf01 and arg == 'out': arg = 'out_shape'; shapes['out_shape'] = shapes.pop('out')
    shapes[arg][axis] = 0
    a = {k: np.zeros(s, np.float32) for k, s in shapes.items() if k != 'out_shape'}
    if kern is conv1d_depthwise_bf01_oi01_bf01:
        fn = lambda: kern(a['img'], a['filter'], ((0, 0), (1, 1)), out_shape=shapes.get('out_shape', [2, 130, 1, 12]))
    else:
        fn = lambda: kern(a['img'], a['filter'], a['out'], ((0, 0), (1, 1)))
    kind, r = outcome(fn)
    assert kind == 'error', r
    # the launcher moves an empty array as it is; the kernel's own checks name the argument's shape
    names(r, {'img': 'img.shape', 'filter': 'filter.shape', 'out': 'out.shape', 'out_shape': 'out_shape'}[arg])
    assert '_sbuf' not in str(r) and 'img_full' not in str(r), str(r)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(HUGE + [10**5, 3 * 10**4, 2 * 10**4]), st.one_of(st.integers(1, 2), st.integers(1000, 4000)),
       st.sampled_from(['left', 'right']))
def test_huge_padding_and_batch_end_in_an_error_before_allocating(pad, N, side):
    "A padded row or an output too big for the simulator is refused before the output is allocated."
    img = np.zeros((N, 128, 1, 1), np.float32); filt = np.zeros((128, 1, 1, 1), np.float32)
    padding = ((0, 0), (pad, 0) if side == 'left' else (0, pad))
    @kernel
    def call(img, filt): return conv1d_depthwise_bf01_oi01_bf01(img, filt, padding, out_shape=(N, 128, 1, pad + 1))
    kind, r = outcome(lambda: simulate_kernel(call, img, filt, num_programs=1))
    if kind == 'ok': assert r.shape == (N, 128, 1, pad + 1) and N * 128 * (pad + 1) * 4 <= 2**30
    else: names(r, 'padding', 'SBUF', 'output')
    if N * 128 * (pad + 1) * 4 > 2**30: assert kind == 'error'


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scalar(1, 2, 1))
def test_lnc(v):
    "lnc is accepted and unused: 1 or 2 as any integer gives the same answer; anything else is refused."
    cls, value, plain = v
    kind, r = outcome(lambda: entry(((0, 0), (1, 1)), (2, 130, 1, 12), lnc=value))
    if cls == 'ok': assert kind == 'ok'; np.testing.assert_allclose(r, reference(1, 1), rtol=1e-5, atol=1e-5)
    else: assert kind == 'error'; names(r, 'lnc')


# --- the planners ---------------------------------------------------------------------------------------------------

PLANNERS = {
    # name: (function, valid keyword arguments, {argument: (tested range, minimum)})
    'dispatch_decision': (dispatch_decision, dict(W_out=400, W_f=7), dict(W_out=(1, 3000, 1), W_f=(1, 511, 1))),
    'instruction_free_sizes': (instruction_free_sizes, dict(W_out=400, W_f=7), dict(W_out=(1, 3000, 1), W_f=(1, 511, 1))),
    'spmd_tile_table': (spmd_tile_table, dict(C=600, num_programs=4), dict(C=(1, 5000, 1), num_programs=(1, 64, 1))),
    'sbuf_report': (sbuf_report, dict(N=2, C=300, W=100, W_f=3, num_programs=2),
                    dict(N=(1, 8, 1), C=(1, 2000, 1), W=(3, 3000, 1), W_f=(1, 100, 1), num_programs=(1, 40, 1))),
    'max_W': (max_W, dict(full_tiles=2, W_f=3, N=1), dict(full_tiles=(1, 16, 1), W_f=(1, 511, 1), N=(1, 8, 1))),
    'read_map': (read_map, dict(W=8, W_f=3, pad_l=1, pad_r=1), dict(W=(3, 200, 1), W_f=(1, 3, 1), pad_l=(0, 5, 0), pad_r=(0, 5, 0))),
    'conv1d_sbuf_bytes': (conv1d_sbuf_bytes, dict(path='f_packing', N=2, W_f=3, W_out=100, image_size=102, full_tiles=1,
                                                  partial=True), dict(N=(1, 9, 1), W_f=(1, 99, 1), W_out=(1, 1000, 1),
                                                                      full_tiles=(0, 9, 0))),
}


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(PLANNERS)).flatmap(
    lambda p: st.sampled_from(sorted(PLANNERS[p][2])).flatmap(
        lambda a: st.tuples(st.just(p), st.just(a), scalar(*PLANNERS[p][2][a])))))
def test_planner_integer_arguments(case):
    "Each integer argument of each planner: NumPy integers give the int answer; bools, floats, sets... a TypeError."
    name, arg, (cls, value, plain) = case
    fn, kw, _ = PLANNERS[name]
    kind, r = outcome(lambda: fn(**dict(kw, **{arg: value})))
    if cls == 'ok':
        ok_kind, ref = outcome(lambda: fn(**dict(kw, **{arg: plain})))
        assert kind == ok_kind, r
        if kind == 'ok': assert same(r, ref), (r, ref)
        else: assert str(r) == str(ref).replace(repr(plain), repr(value)) or str(r) == str(ref)
    elif cls == 'kind':
        assert kind == 'error' and isinstance(r, SimulatorTypeError), f"{arg}={value!r} accepted: {r}"
        names(r, arg)
    elif cls == 'value':
        assert kind == 'error', f"{arg}={value!r} accepted: {r}"
        names(r, arg)
    else:
        if kind == 'error': names(r, arg, 'W_out', 'padded row', 'num_programs', 'SBUF')


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(['spmd_tile_table', 'sbuf_report', 'conv1d_plan']), st.sampled_from(HUGE + [MAX_PROGRAMS + 1]))
def test_huge_num_programs_is_refused_at_once(name, k):
    "Planners that build one row per program refuse more than MAX_PROGRAMS programs instead of hanging."
    fn = {'spmd_tile_table': lambda: spmd_tile_table(600, k), 'sbuf_report': lambda: sbuf_report(1, 600, 100, 3, num_programs=k),
          'conv1d_plan': lambda: conv1d_plan((1, 600, 1, 100), (600, 1, 1, 3), ((0, 0), (1, 1)), num_programs=k)}[name]
    t0 = time.perf_counter()
    kind, r = outcome(fn)
    assert kind == 'error' and time.perf_counter() - t0 < 1
    names(r, 'num_programs')
    assert f"{MAX_PROGRAMS:,}" in str(r)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(['sbuf_report', 'max_W']), pair_value())
def test_planner_padding_pairs(name, p):
    "sbuf_report and max_W take padding as a (left, right) pair: the same contract as the kernels'."
    cls, value, plain = p
    fn = {'sbuf_report': lambda pad: sbuf_report(1, 300, 100, 3, pad, 2), 'max_W': lambda pad: max_W(2, 3, pad)}[name]
    kind, r = outcome(lambda: fn(value))
    if cls == 'ok':
        assert kind == 'ok', r
        assert same(r, fn(plain))
    elif cls == 'huge':
        if kind == 'error': names(r, 'padding', 'padded row')
        else: assert name == 'max_W' and r == 0
    else:
        assert kind == 'error', f"padding={value!r} accepted: {r}"
        names(r, 'padding')


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(pair_value().map(lambda p: ('padding', p)),
                 st.sampled_from(['img_shape', 'filter_shape']).flatmap(
                     lambda w: st.one_of(seq_forms((1, 300, 1, 100) if w == 'img_shape' else (300, 1, 1, 3)).map(lambda f: ('ok', f, None)),
                                         bad_seq((1, 300, 1, 100) if w == 'img_shape' else (300, 1, 1, 3)).map(lambda f: ('kind', f, None)))
                     .map(lambda v: (w, v)))),
       scalar(1, 12, 1))
def test_conv1d_plan(arg_value, programs):
    "conv1d_plan checks its arguments as the kernels do, and plans the same call for any valid form of them."
    arg, (cls, value, plain) = arg_value
    pcls, k, kplain = programs
    kw = dict(img_shape=(1, 300, 1, 100), filter_shape=(300, 1, 1, 3), padding=((0, 0), (1, 1)), num_programs=k)
    kw[arg] = ((0, 0), value) if arg == 'padding' else value
    kind, r = outcome(lambda: conv1d_plan(**kw))
    if cls == 'ok' and pcls == 'ok':
        assert kind == 'ok', r
        plain_kw = dict(kw, num_programs=kplain, **{arg: ((0, 0), plain) if arg == 'padding' else tuple(int(v) for v in value)})
        assert str(r) == str(conv1d_plan(**plain_kw))
    elif pcls in ('kind', 'value') or cls in ('kind', 'value'):
        assert kind == 'error', f"{kw} accepted"
        names(r, arg.replace('_shape', '.shape'), 'num_programs', 'out_shape')
    elif kind == 'error': names(r, 'padding', 'padded row', 'num_programs')


TARGET_OR_DTYPE = st.sampled_from([('target', v) for v in ({'trn1'}, ['trn1'], 'trn9', 3, True, b'trn1', ('trn1',))] +
                                   [('dtype', v) for v in ({'float32'}, ['float32'], 'float64', np.int32, 4, True, None)])


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(['sbuf_report', 'max_W', 'conv1d_plan']), TARGET_OR_DTYPE)
def test_planner_target_and_dtype(name, tv):
    "A target or dtype the planners do not know: a SimulatorError naming it (never a bare TypeError from a dict)."
    arg, value = tv
    fn = {'sbuf_report': lambda **kw: sbuf_report(1, 300, 100, 3, (1, 1), 2, **kw), 'max_W': lambda **kw: max_W(2, 3, **kw),
          'conv1d_plan': lambda **kw: conv1d_plan((1, 300, 1, 100), (300, 1, 1, 3), ((0, 0), (1, 1)), 2, **kw)}[name]
    kind, r = outcome(lambda: fn(**{arg: value}))
    assert kind == 'error', f"{arg}={value!r} accepted"
    names(r, arg)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(['window_ap', 'broadcast_ap']), st.sampled_from(['W_out', 'W_f', 'offset']),
       scalar(1, 3, 0))
def test_views(fn, arg, v):
    "The two views of chapter 8 check their integer arguments (the access pattern checks the bounds)."
    cls, value, plain = v
    f = {'window_ap': window_ap, 'broadcast_ap': broadcast_ap}[fn]
    with use_core(NeuronCore()):
        t = ndarray((4, 8), float32, name='row')
        kw = dict(W_out=3, W_f=3, offset=0); kw[arg] = value
        kind, r = outcome(lambda: f(t, **kw))
        if cls == 'ok':
            ref = f(t, **dict(kw, **{arg: plain}))
            assert kind == 'ok' and np.array_equal(r.addresses(), ref.addresses())
        elif cls == 'kind':
            assert kind == 'error' and isinstance(r, SimulatorTypeError); names(r, arg)
        elif kind == 'error': names(r, arg, 'pattern', 'offset')
        if arg == 'offset' and cls == 'value' and value < 0: assert kind == 'error'


def test_the_checks_can_fail(monkeypatch):
    "The helpers above reject what they must: a non-SimulatorError, a message without the name, a line number."
    with pytest.raises(pytest.fail.Exception): outcome(lambda: [].pop())
    with pytest.raises(AssertionError): names(SimulatorError("x must be 1"), 'padding')
    with pytest.raises(AssertionError): names(SimulatorError("padding must be 1 (L717)"), 'padding')
    monkeypatch.setattr(sys.modules[__name__], "SECONDS", 1)
    with pytest.raises(pytest.fail.Exception): outcome(lambda: time.sleep(2))
    with pytest.raises(AssertionError): outcome(lambda: np.ones(MEGABYTES * 2**18 + 2**20, np.float32).sum())
