"""Safe on any input: every call of the 2D kernel, its planners, the layout functions and the dilation helpers ends,
in bounded time and memory, with the right answer or a `SimulatorError` / `SimulatorTypeError` (a `ValueError`, and
for wrong kinds also a `TypeError`) whose message names the argument.

Each call runs in a forked child with a time limit and an address-space limit, so that a hang, a huge allocation or
a crash is reported as a failed contract instead of taking the test run (or the machine) down."""
import os
import pickle
import re
import resource
import select
import signal
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from dwlit.kernels.conv2d import _check_conv2d_args, conv2d_plan, h_tile_budget
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01 as K
from dwlit.kernels.dilation import (
    calc_dilated_dimension,
    calc_inverse_dilated_dimension,
    dilate_tile,
    dilated_row_sources,
    h_window_plan,
    plan_errors,
    tile_rows,
)
from dwlit.kernels.layouts import (
    contiguous_runs,
    convert_layout,
    f01b_gather,
    in_perm_label,
    parse_conv_labels,
    parse_layout,
    tiled_dve_transpose_210,
)
from dwlit.sim.checks import SimulatorError, SimulatorTypeError
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.memory import hbm_tensor

SECONDS = 20          # per call; every call here needs well under a second when it behaves
MEGABYTES = 1500      # address space a call may add; the machine is shared, so a runaway allocation must fail fast


class _Timeout(BaseException):
    "Raised in the child by the alarm; a BaseException so that no `except Exception` in the code under test eats it."


def _vm_bytes():
    for line in open('/proc/self/status'):
        if line.startswith('VmSize:'): return int(line.split()[1]) * 1024
    return 0


def bounded(fn, seconds=SECONDS, megabytes=MEGABYTES):
    """Run `fn()` in a forked child under a time and memory limit. Returns ('ok', value), ('raised', type name,
    message, is SimulatorError, is ValueError, is TypeError), ('timeout',), ('memory',) or ('crash', what)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                                        # the child
        os.close(r)
        try:
            lim = _vm_bytes() + megabytes * 2**20
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
            signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(_Timeout()))
            signal.setitimer(signal.ITIMER_REAL, seconds)
            try: out = ('ok', fn())
            except _Timeout: out = ('timeout',)
            except MemoryError: out = ('memory',)
            except BaseException as e:
                out = ('raised', type(e).__name__, str(e), isinstance(e, SimulatorError), isinstance(e, ValueError),
                       isinstance(e, TypeError))
            signal.setitimer(signal.ITIMER_REAL, 0)
            try: data = pickle.dumps(out)
            except BaseException as e: data = pickle.dumps(('crash', f"unpicklable result: {e!r}"))
        except BaseException as e:
            data = pickle.dumps(('crash', repr(e)))
        view = memoryview(data)
        while view: view = view[os.write(w, view):]
        os._exit(0)
    os.close(w)
    chunks, deadline = [], time.monotonic() + seconds + 15
    while True:                                                         # the parent: read until EOF or a hard deadline
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([r], [], [], left)[0]:
            os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0); os.close(r)
            return ('timeout',)
        b = os.read(r, 1 << 16)
        if not b: break
        chunks.append(b)
    os.close(r); os.waitpid(pid, 0)
    return pickle.loads(b''.join(chunks)) if chunks else ('crash', 'the child died without a word')


def expect_error(out, *names):
    "The contract for an input that must be refused: a SimulatorError (a ValueError) whose message names the argument."
    assert out[0] == 'raised', f"expected an error naming {names}, got {out[0]}: {str(out[1:])[:300]}"
    _, tname, msg, is_sim, is_value, _ = out
    assert is_sim and is_value, f"{tname} instead of a SimulatorError: {msg}"
    assert any(n in msg for n in names), f"the message does not name {names}: {msg}"
    assert not re.search(r"\bL\d{2,4}\b", msg), f"the rule in words, not a line number of the original: {msg}"
    assert '/' not in msg.replace(' / ', ''), f"no file path in a message: {msg}"
    return msg


def expect_type_error(out, *names):
    "As `expect_error`, for a wrong kind of value: also a TypeError."
    msg = expect_error(out, *names)
    assert out[5], f"{out[1]} is not a TypeError: {msg}"
    return msg


def expect_ok_or_error(out, *names):
    "Bounded and clean: a result, or a SimulatorError naming one of `names`."
    assert out[0] in ('ok', 'raised'), f"contract broken: {out[0]} {str(out[1:])[:300]}"
    if out[0] == 'raised': return expect_error(out, *names)


# --- an independent NumPy reference -------------------------------------------------------------------------------

def reference(img, filt, padding, lhs):
    "img (C, H, W, N), filt (C, kH, kW, 1) -> (N, C, oH, oW), float64: zeros, every d-th row/column, pad, correlate."
    C, H, W, N = img.shape
    (pt, pb), (pl, pr) = padding
    g = np.zeros((C, (H - 1) * lhs[0] + 1 + pt + pb, (W - 1) * lhs[1] + 1 + pl + pr, N))
    g[:, pt:pt + (H - 1) * lhs[0] + 1:lhs[0], pl:pl + (W - 1) * lhs[1] + 1:lhs[1], :] = img
    kH, kW = filt.shape[1:3]
    oH, oW = g.shape[1] - kH + 1, g.shape[2] - kW + 1
    out = np.zeros((N, C, oH, oW))
    for a in range(kH):
        for b in range(kW):
            out += np.moveaxis(g[:, a:a + oH, b:b + oW, :] * filt[:, a, b, 0][:, None, None, None], 3, 0)
    return out


RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5, 2)).astype(np.float32)             # f01b: C=3, H=4, W=5, N=2
F = RNG.standard_normal((3, 2, 3, 1)).astype(np.float32)             # o01i: k_H=2, k_W=3
PADDING, LHS = ((1, 0), (0, 2)), (2, 1)
WANT = reference(X.astype(np.float64), F.astype(np.float64), PADDING, LHS)
X_FB10 = np.ascontiguousarray(X.transpose(0, 3, 2, 1))               # (C, N, W, H)


def run(img=X, filt=F, padding=PADDING, **kw):
    "The kernel body on a fresh core, with NumPy inputs put in HBM by hand: every other argument reaches it unchanged."
    def call():
        with use_core(NeuronCore()):
            a = hbm_tensor(img, 'img') if isinstance(img, np.ndarray) else img
            b = hbm_tensor(filt, 'filter') if isinstance(filt, np.ndarray) else filt
            return K.func(a, b, padding, **kw).numpy()
    return bounded(call)


# --- forms of an integer sequence --------------------------------------------------------------------------------

def good_forms(values):
    "Ordered integer sequences holding `values`: each must give the same answer as the tuple."
    v = tuple(values)
    return st.sampled_from([v, list(v), np.array(v), np.array(v, np.int32), tuple(np.int64(x) for x in v),
                            tuple(np.uint8(x) for x in v) if min(v) >= 0 else v])


def bad_forms(values):
    "Things that are not an ordered sequence of integers, but hold the same numbers."
    v = tuple(values)
    return st.sampled_from([set(v), frozenset(v), {x: x for x in v}, ','.join(map(str, v)), (x for x in v), iter(v),
                            tuple(float(x) for x in v), tuple(x + 0.5 for x in v), np.array(v, float),
                            np.array([v]), v[:1] + (None,) + v[2:], v[0], float(v[0]), (True,) + v[1:],
                            np.array(v).astype(np.float32)])


ARGS = {'lhs_dilation': LHS, 'stride': (1, 1), 'rhs_dilation': (1, 1), 'in_perm': (1, 0, 3, 2),
        'out_shape': WANT.shape}


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(arg=st.sampled_from(sorted(ARGS)), good=st.booleans(), data=st.data())
def test_integer_arguments_right_answer_or_named_type_error(arg, good, data):
    "Tuples, lists, integer arrays and NumPy integers give the right answer; sets, dicts, strings, floats, bools, "
    "iterators and scalars are refused with a TypeError that names the argument (never read in some order)."
    value = data.draw((good_forms if good else bad_forms)(ARGS[arg]))
    img = X_FB10 if arg == 'in_perm' else X
    kw = dict(lhs_dilation=LHS)
    kw[arg] = value
    out = run(img, F, PADDING, **kw)
    if good:
        assert out[0] == 'ok', f"{arg}={value!r}: {out}"
        np.testing.assert_allclose(out[1], WANT, rtol=1e-5, atol=1e-5)
    else:
        expect_type_error(out, arg)


PAD_GOOD = [((1, 0), (0, 2)), [[1, 0], [0, 2]], np.array([[1, 0], [0, 2]]), (np.array([1, 0]), [0, 2]),
            ((np.int64(1), np.int32(0)), (0, np.uint16(2)))]
PAD_BAD = [((1, 0), {0, 2}), ({1, 0}, (0, 2)), {(1, 0), (0, 2)}, ((1, 0), (0, 2.0)), ((1, 0), (0, True)),
           (1, 0, 0, 2), ((1, 0), (0, 2), (0, 0)), ((1, 0, 0), (0, 2)), 1, None, 'padding', ((1, 0), '02'),
           np.array([[1, 0], [0, 2]], float), np.array([1, 0, 0, 2]), ((p for p in (1, 0)), (0, 2)),
           iter([(1, 0), (0, 2)]), {'H': (1, 0), 'W': (0, 2)}, ((1, None), (0, 2)), ((1, 0), (0, -1))]


@pytest.mark.parametrize("padding", PAD_GOOD, ids=lambda p: type(p).__name__)
def test_padding_forms_that_are_right(padding):
    out = run(padding=padding, lhs_dilation=LHS)
    assert out[0] == 'ok', out
    np.testing.assert_allclose(out[1], WANT, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("padding", PAD_BAD, ids=lambda p: repr(p)[:30])
def test_padding_forms_that_are_refused(padding):
    expect_error(run(padding=padding, lhs_dilation=LHS), 'padding')


def test_a_set_is_never_read_in_some_order():
    "The issue's example: ((0, 0), {3, 1}) once computed with (1, 3)."
    expect_type_error(run(padding=((0, 0), {3, 1}), lhs_dilation=LHS), 'padding')
    expect_type_error(run(lhs_dilation={2, 1}), 'lhs_dilation')


# --- options the kernel does not support come first ----------------------------------------------------------------

OTHER_MISTAKES = {
    'none': {},
    'stride-2 out_shape': dict(out_shape=(2, 3, 5, 5)),
    'wrong out_shape': dict(out_shape=(9, 9, 9, 9)),
    'out_shape kind': dict(out_shape=10),
    'negative padding': dict(padding=((-1, 0), (0, 0))),
    'set padding': dict(padding=({1, 0}, (0, 0))),
    'dilation 0': dict(lhs_dilation=(0, 1)),
    'kernel too large': dict(filt=np.zeros((3, 30, 3, 1), np.float32)),
    'channels differ': dict(filt=F[:2]),
    'empty image': dict(img=np.zeros((3, 0, 5, 2), np.float32)),
    'bookkeeping': dict(bookkeeping='seed'),
}


unsupported = st.one_of(
    st.tuples(st.just('stride'), st.tuples(st.integers(0, 9), st.integers(0, 9)).filter(lambda p: p != (1, 1))),
    st.tuples(st.just('rhs_dilation'), st.tuples(st.integers(0, 9), st.integers(0, 9)).filter(lambda p: p != (1, 1))),
    st.tuples(st.just('in_perm'), st.permutations([0, 1, 2, 3]).map(tuple).filter(lambda p: p != (1, 0, 3, 2))))


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(option=unsupported, mistake=st.sampled_from(sorted(OTHER_MISTAKES)))
@example(option=('stride', (2, 2)), mistake='stride-2 out_shape')
@example(option=('stride', (2, 1)), mistake='negative padding')
@example(option=('in_perm', (0, 1, 2, 3)), mistake='dilation 0')
def test_unsupported_options_are_reported_first(option, mistake):
    "stride and rhs_dilation other than (1, 1), and an in_perm other than None / (1, 0, 3, 2), are reported before "
    "any other mistake: a stride-2 call with its stride-2 out_shape is told about the stride."
    name, v = option
    kw = dict(OTHER_MISTAKES[mistake])
    img, filt, padding = kw.pop('img', X), kw.pop('filt', F), kw.pop('padding', PADDING)
    kw[name] = v
    msg = expect_error(run(img, filt, padding, **kw), name)
    assert msg.startswith(f"{name} must be"), msg
    plan_out = bounded(lambda: conv2d_plan(img.shape, filt.shape, padding, **kw))
    assert expect_error(plan_out, name).startswith(f"{name} must be")


# --- zero and huge sizes -----------------------------------------------------------------------------------------

@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(axis=st.integers(0, 7), dil=st.tuples(st.integers(1, 5), st.integers(1, 5)), pads=st.tuples(*[st.integers(0, 3)] * 4))
@example(axis=1, dil=(3, 1), pads=(0, 0, 0, 0))       # H = 0 with lhs_dilation: once a shape that depended on it
@example(axis=0, dil=(1, 1), pads=(1, 1, 1, 1))       # C = 0: once ZeroDivisionError
def test_zero_sizes_are_refused_by_name(axis, dil, pads):
    img_shape, f_shape = [3, 4, 5, 2], [3, 2, 3, 1]
    names = ['C', 'H', 'W', 'N', 'k_FO', 'k_H', 'k_W', 'k_FI']
    (img_shape if axis < 4 else f_shape)[axis % 4] = 0
    padding = ((pads[0], pads[1]), (pads[2], pads[3]))
    name = names[axis]
    out = bounded(lambda: conv2d_plan(tuple(img_shape), tuple(f_shape), padding, lhs_dilation=dil))
    msg = expect_error(out, f"{name}=0")
    out = run(np.zeros(img_shape, np.float32), np.zeros(f_shape, np.float32), padding, lhs_dilation=dil)
    assert expect_error(out, f"{name}=0") == msg                          # the same words, kernel or plan


huge = st.one_of(st.integers(0, 5), st.integers(10**3, 10**6), st.integers(10**6, 10**12), st.just(10**9))


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(C=st.integers(1, 300), H=huge.map(lambda v: max(v, 1)), W=huge.map(lambda v: max(v, 1)), N=st.integers(1, 4),
       kH=st.integers(1, 4), kW=st.integers(1, 4), dh=huge.map(lambda v: max(v, 1)), dw=huge.map(lambda v: max(v, 1)),
       pads=st.tuples(huge, huge, huge, huge), in_perm=st.sampled_from([None, (1, 0, 3, 2)]),
       dtype_size=st.sampled_from([4, None, 1, 10**9]))
@example(C=1, H=2, W=4, N=1, kH=1, kW=1, dh=10**9, dw=1, pads=(0, 0, 0, 0), in_perm=None, dtype_size=4)  # once a hang
@example(C=1, H=2, W=4, N=1, kH=1, kW=1, dh=10**5, dw=1, pads=(0, 0, 0, 0), in_perm=None, dtype_size=4)
@example(C=4, H=5, W=6, N=2, kH=3, kW=3, dh=1, dw=1, pads=(0, 0, 10**9, 0), in_perm=None, dtype_size=4)
def test_huge_sizes_end_quickly_in_a_plan_or_a_named_error(C, H, W, N, kH, kW, dh, dw, pads, in_perm, dtype_size):
    "Planning any shape, however large, ends in seconds and bounded memory, with a plan or a SimulatorError."
    img = (C, H, W, N) if in_perm is None else (C, N, W, H)
    padding = ((pads[0], pads[1]), (pads[2], pads[3]))
    out = bounded(lambda: conv2d_plan(img, (C, kH, kW, 1), padding, lhs_dilation=(dh, dw), in_perm=in_perm,
                                      dtype_size=dtype_size))
    expect_ok_or_error(out, 'SBUF', 'output', 'H tile', 'kernel', 'in_W', 'instructions', 'padding', 'lhs_dilation')
    if out[0] == 'ok':
        p = out[1]
        assert (p.out_H, p.out_W) == ((H - 1) * dh + 1 + pads[0] + pads[1] - kH + 1, (W - 1) * dw + 1 + pads[2] + pads[3] - kW + 1)
        assert sum(t.window_size for t in p.tiles) == p.out_H


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(H=st.integers(1, 3), W=st.integers(1, 3), kH=st.integers(1, 3), kW=st.integers(1, 2),
       dh=st.one_of(st.integers(1, 4), st.integers(10**3, 10**10)), dw=st.one_of(st.integers(1, 4), st.integers(10**3, 10**10)),
       pads=st.tuples(*[st.one_of(st.integers(0, 3), st.integers(10**4, 10**10))] * 4))
@example(H=2, W=4, kH=1, kW=1, dh=10**9, dw=1, pads=(0, 0, 0, 0))
@example(H=2, W=1, kH=1, kW=1, dh=1, dw=10**9, pads=(0, 0, 0, 0))
def test_the_kernel_on_huge_dilation_and_padding(H, W, kH, kW, dh, dw, pads):
    "A small image with a huge dilation or padding: the right answer, or a named error, in bounded time and memory."
    rng = np.random.default_rng(H * 7 + W)
    img = rng.standard_normal((2, H, W, 1)).astype(np.float32)
    filt = rng.standard_normal((2, kH, kW, 1)).astype(np.float32)
    padding = ((pads[0], pads[1]), (pads[2], pads[3]))
    assume((H - 1) * dh + 1 + sum(pads[:2]) >= kH and (W - 1) * dw + 1 + sum(pads[2:]) >= kW)
    out = run(img, filt, padding, lhs_dilation=(dh, dw))
    expect_ok_or_error(out, 'SBUF', 'output', 'instructions', 'H tile')
    if out[0] == 'ok':
        np.testing.assert_allclose(out[1], reference(img.astype(np.float64), filt.astype(np.float64), padding, (dh, dw)),
                                   rtol=1e-5, atol=1e-5)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(W=st.integers(1, 8), kH=st.integers(1, 5), H=st.integers(2, 6),
       what=st.sampled_from(['dil', 'top', 'bottom']), big=st.integers(2_000, 200_000))
@example(W=6, kH=3, H=5, what='dil', big=100_000)
@example(W=6, kH=3, H=5, what='top', big=100_000)
def test_the_sbuf_message_names_what_overflows(W, kH, H, what, big):
    "A narrow image with a huge H dilation or H padding: when SBUF overflows, the message blames H, not in_W."
    dh = big if what == 'dil' else 1
    padding = ((big if what == 'top' else 0, big if what == 'bottom' else 0), (1, 1))
    out = bounded(lambda: conv2d_plan((4, H, W, 2), (4, kH, 3, 1), padding, lhs_dilation=(dh, 1)))
    assume(out[0] == 'raised' and 'SBUF' in out[2])
    msg = expect_error(out, 'SBUF')
    assert 'too wide' not in msg, msg
    cause = {'dil': 'lhs_dilation', 'top': 'H_padding_l', 'bottom': 'H_padding_r'}[what]
    assert cause in msg, f"the message does not name {cause}: {msg}"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(in_H=st.integers(1, 10**9), k_H=st.integers(1, 10**6), pads=st.tuples(st.integers(0, 10**9), st.integers(0, 10**9)),
       dil=st.integers(1, 10**9), m=st.integers(1, 10**9), literal=st.booleans())
@example(in_H=2, k_H=1, pads=(0, 0), dil=10**9, m=1, literal=False)
def test_h_window_planners_are_bounded(in_H, k_H, pads, dil, m, literal):
    "h_window_plan, plan_errors and dilated_row_sources end quickly on any sizes, with an answer or a named limit."
    mh = max(min(in_H, m), k_H)
    assume(calc_dilated_dimension(in_H, dil) + sum(pads) >= k_H)
    bk = 'literal' if literal else 'fixed'
    out = bounded(lambda: len(h_window_plan(in_H, k_H, pads, dil, mh, bk)))
    expect_ok_or_error(out, 'tiles', 'H window')
    out = bounded(lambda: plan_errors(in_H, k_H, pads, dil, mh, bk))
    expect_ok_or_error(out, 'rows', 'tiles')
    out = bounded(lambda: len(dilated_row_sources(in_H, pads, dil)))
    expect_ok_or_error(out, 'rows')


# --- the dilation helpers ----------------------------------------------------------------------------------------

not_an_int = st.sampled_from([2.0, 2.5, True, False, '2', None, {2}, [2], np.float64(2), np.array([2, 3]), (2,)])


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(d=st.one_of(st.integers(-5, 60), not_an_int), dil=st.one_of(st.integers(-3, 9), not_an_int))
@example(d=0, dil=3)          # once 1 - dil: an extent that depended on the dilation
@example(d=5, dil=0)          # the inverse once divided by zero
def test_dilated_sizes(d, dil):
    out = bounded(lambda: calc_dilated_dimension(d, dil))
    ok_d = isinstance(d, int) and not isinstance(d, bool) and d >= 1
    ok_dil = isinstance(dil, int) and not isinstance(dil, bool) and dil >= 1
    if ok_d and ok_dil:
        assert out == ('ok', len('X' + ('.' * (dil - 1) + 'X') * (d - 1)))
    else:
        expect_error(out, 'd=' if not ok_d else 'dil=')
    out = bounded(lambda: calc_inverse_dilated_dimension(d, dil))
    ok_D = isinstance(d, int) and not isinstance(d, bool)
    if ok_D and ok_dil:
        assert out == ('ok', len(range(0, max(d, 0), dil)) if d >= 0 else -((-d) // dil))
    else:
        expect_error(out, 'D=' if not ok_D else 'dil=')


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(arg=st.sampled_from(['lhs_dilation', 'padding']), good=st.booleans(), data=st.data())
def test_dilate_tile(arg, good, data):
    x = np.arange(1, 13, dtype=np.float32).reshape(1, 3, 4)
    lhs, pad = (2, 3), ((1, 2), (1, 0))
    want = np.zeros((1, 8, 11), np.float32); want[0, 1:6:2, 1:11:3] = x[0]
    if arg == 'lhs_dilation': lhs = data.draw((good_forms if good else bad_forms)(lhs))
    else: pad = data.draw(st.sampled_from([((1, 2), (1, 0)), [[1, 2], [1, 0]], np.array([[1, 2], [1, 0]])] if good else
                                          [((1, 2), {1, 0}), {(1, 2), (1, 0)}, ((1, 2), (1.0, 0)), 3, ((1, 2),)]))
    def call():
        with use_core(NeuronCore()):
            return dilate_tile.func(hbm_tensor(x, 'img'), lhs, pad).numpy()
    out = bounded(call)
    if good:
        assert out[0] == 'ok', out
        np.testing.assert_array_equal(out[1], want)
    else:
        expect_error(out, arg)


@pytest.mark.parametrize("call,name", [
    (lambda: dilate_tile(np.zeros((129, 2, 2), np.float32)), 'img'),
    (lambda: dilate_tile(np.zeros((2, 2, 2), np.float32), (10**6, 10**6)), 'SBUF'),
    (lambda: dilate_tile(np.zeros((2, 0, 2), np.float32)), 'H=0'),
    (lambda: dilate_tile([[[1.0]]]), 'img'),
    (lambda: h_window_plan(3, 2, {0, 1}, 1, 3), 'H_padding'),
    (lambda: h_window_plan(3, 2, (0, 1), 1, 1), 'max_h_tile_size'),
    (lambda: h_window_plan(3, 9, (0, 1), 1, 9), 'k_H'),
    (lambda: h_window_plan(3, 2, (0, 1), 0, 3), 'dil_H_lhs'),
    (lambda: h_window_plan(3, 2, (0, 1), 1, 3, 'seed'), 'bookkeeping'),
    (lambda: h_window_plan(3.0, 2, (0, 1), 1, 3), 'in_H'),
    (lambda: dilated_row_sources(0, (0, 0), 2), 'in_H'),
    (lambda: dilated_row_sources(3, (0, -1), 2), 'H_padding'),
    (lambda: plan_errors(3, 2, (0, 1), 1, True), 'max_h_tile_size'),
    (lambda: tile_rows('tile', 2), 't'),
    (lambda: h_tile_budget(5, 3, 0, 1), 'dil_W'),
    (lambda: h_tile_budget(5, 3, 10, 1, dtype_size=0), 'dtype_size'),
    (lambda: _check_conv2d_args(((0, 0), (0, 0)), in_perm=5), 'in_perm'),
    (lambda: conv2d_plan((3, 4, 5, 2), (3, 2, 3, 1), PADDING, out_shape=10), 'out_shape'),
    (lambda: conv2d_plan((3, 4, 5, 2), (3, 2, 3, 1), PADDING, out_shape=(i for i in WANT.shape)), 'out_shape'),
    (lambda: conv2d_plan((3, 4, 5, 2), (3, 2, 3, 1), PADDING, in_perm=5), 'in_perm'),
    (lambda: conv2d_plan((3, 4, 5), (3, 2, 3, 1), PADDING), 'img'),
    (lambda: conv2d_plan({3, 4, 5, 2}, (3, 2, 3, 1), PADDING), 'img'),
    (lambda: conv2d_plan((3, 4, 5, 2), (3, 2, 3, 1), PADDING, dtype_size=True), 'dtype_size'),
    (lambda: conv2d_plan((3, 4, 5, 2), (3, 2, 3, 1), PADDING, bookkeeping=np.array(['fixed', 'literal'])), 'bookkeeping'),
    (lambda: conv2d_plan((3, 4, 5, 2), (3, 2, 3, 1), PADDING, target=['trn1']), 'target'),
    (lambda: conv2d_plan((3, 4, 5, 2), (3, 2, 3, 1), PADDING, dtype='int8'), 'dtype'),
    (lambda: K([[1.0]], F, PADDING), 'img'),
    (lambda: K(X, None, PADDING), 'filter'),
])
def test_named_errors(call, name):
    expect_error(bounded(call), name)


# --- the layout functions ----------------------------------------------------------------------------------------

@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(C=st.integers(1, 4), H=st.integers(1, 4), W=st.integers(1, 4), N=st.integers(1, 3),
       c_start=st.integers(-2, 5), c_current=st.one_of(st.none(), st.integers(-1, 5)), n=st.integers(-2, 4),
       r0=st.integers(-2, 5), rows=st.one_of(st.none(), st.integers(-1, 5)))
@example(C=2, H=2, W=2, N=2, c_start=0, c_current=None, n=2, r0=0, rows=None)     # n = N: once a pattern into c + 1
def test_f01b_gather_reads_what_it_says_or_refuses(C, H, W, N, c_start, c_current, n, r0, rows):
    out = bounded(lambda: f01b_gather(C, H, W, N, c_start, c_current, n, r0, rows))
    cc = C - c_start if c_current is None else c_current
    rr = H - r0 if rows is None else rows
    valid = 0 <= c_start < C and 1 <= cc <= C - c_start and 0 <= n < N and 0 <= r0 < H and 1 <= rr <= H - r0
    if not valid:
        expect_error(out, 'c_start', 'c_current', 'n=', 'org_image_index', 'load_h_size')
        return
    assert out[0] == 'ok', out
    pattern, offset = out[1]
    x = np.arange(C * H * W * N).reshape(C, H, W, N)
    idx = offset + sum(np.arange(num)[(slice(None),) + (None,) * (2 - k)] * step
                       for k, (step, num) in enumerate(pattern))
    np.testing.assert_array_equal(x.ravel()[idx], x[c_start:c_start + cc, r0:r0 + rr, :, n])


@pytest.mark.parametrize("call,name", [
    (lambda: in_perm_label(5), 'in_perm'),
    (lambda: in_perm_label({1, 0, 3, 2}), 'in_perm'),
    (lambda: in_perm_label('1032'), 'in_perm'),
    (lambda: in_perm_label((1.0, 0, 3, 2)), 'in_perm'),
    (lambda: in_perm_label((0, 0, 1, 2)), 'in_perm'),
    (lambda: contiguous_runs({1, 2, 3}), 'addresses'),
    (lambda: contiguous_runs(np.array([0.5, 1.5])), 'addresses'),
    (lambda: contiguous_runs('0123'), 'addresses'),
    (lambda: parse_layout('b' + '0123456789' * 100_000 + 'f'), 'label'),
    (lambda: parse_layout(['b', 'f', '0']), 'label'),
    (lambda: parse_layout('bf0', kind=np.array(['image', 'filter'])), 'kind'),
    (lambda: parse_conv_labels(None), 'labels'),
    (lambda: convert_layout(np.zeros((2, 3)), 'bf01', 'f01b'), 'shape'),
    (lambda: convert_layout(np.zeros((2, 3, 4, 5)), 'bf01', {'f01b'}), 'dst'),
    (lambda: tiled_dve_transpose_210([[1.0]]), 'img'),
    (lambda: tiled_dve_transpose_210(np.zeros((2, 3, 4), np.float32)), 'img'),
    (lambda: tiled_dve_transpose_210(np.zeros((2, 0, 4, 3), np.float32)), 'N=0'),
    (lambda: tiled_dve_transpose_210(np.zeros((2, 2, 30_000, 1), np.float32)), 'SBUF'),
])
def test_layout_functions_refuse_by_name(call, name):
    expect_error(bounded(call), name)


def test_layout_functions_right_on_good_forms():
    assert bounded(lambda: in_perm_label(np.array([1, 0, 3, 2]))) == ('ok', 'fb10')
    assert bounded(lambda: in_perm_label([1, 0, 3, 2])) == ('ok', 'fb10')
    assert bounded(lambda: contiguous_runs([3, 4, 5, 9])) == ('ok', 2)
    assert bounded(lambda: contiguous_runs(np.array([], int))) == ('ok', 0)
    out = bounded(lambda: tiled_dve_transpose_210(X_FB10))
    assert out[0] == 'ok'; np.testing.assert_array_equal(out[1], X)


# --- views ---------------------------------------------------------------------------------------------------------

VIEWS = {
    'broadcast': lambda: np.broadcast_to(X[:, :, :1, :], X.shape),
    'reversed rows': lambda: X[:, ::-1],
    'strided': lambda: RNG.standard_normal((3, 8, 10, 2)).astype(np.float32)[:, ::2, ::2],
    'Fortran order': lambda: np.asfortranarray(X),
    'transposed back': lambda: np.ascontiguousarray(X.transpose(3, 2, 1, 0)).transpose(3, 2, 1, 0),
}


@pytest.mark.parametrize("view", sorted(VIEWS))
def test_views_give_the_right_answer(view):
    "An image that is a view (broadcast, reversed, strided, Fortran-ordered) gives the same answer as its copy."
    img = VIEWS[view]()
    want = reference(np.array(img, np.float64), F.astype(np.float64), PADDING, LHS)
    out = bounded(lambda: K(img, F, PADDING, lhs_dilation=LHS))
    assert out[0] == 'ok', out
    np.testing.assert_allclose(out[1], want, rtol=1e-5, atol=1e-5)


def test_a_huge_broadcast_view_is_planned_without_being_read():
    "conv2d_plan takes shapes only: a 10**12-element view is refused by size, in bounded time and memory."
    v = np.broadcast_to(np.float32(1), (128, 10**5, 10**5, 100))
    expect_error(bounded(lambda: conv2d_plan(v.shape, (128, 3, 3, 1), PADDING)), 'too wide', 'output')


# --- the catalogue chapter 14 used to print: each mistake and the words of its error --------------------------------

_x = np.zeros((4, 5, 6, 2), np.float32); _f = np.zeros((4, 3, 3, 1), np.float32); _pad = ((1, 1), (1, 1))


def _catalogue(x=_x, f=_f, pad=_pad):
    return {
        'stride, with its stride-2 out_shape': lambda: K(x, f, pad, stride=(2, 2), out_shape=(2, 4, 3, 3)),
        'rhs_dilation':         lambda: K(x, f, pad, rhs_dilation=(2, 2), lhs_dilation=(2, 2)),
        'in_perm, not a tuple': lambda: K(x, f, pad, in_perm=5),
        'in_perm, another order': lambda: K(x, f, pad, in_perm=(0, 1, 2, 3)),
        'image as a list':      lambda: K(x.tolist(), f, pad),
        'padding with a set':   lambda: K(x, f, ((0, 0), {3, 1})),
        'negative padding':     lambda: K(x, f, ((1, 1), (-1, 0))),
        'dilation < 1':         lambda: K(x, f, pad, lhs_dilation=(0, 1)),
        'dilation not integer': lambda: K(x, f, pad, lhs_dilation=(1.5, 1)),
        'out_shape an integer': lambda: K(x, f, pad, out_shape=10),
        'bookkeeping':          lambda: K(x, f, pad, bookkeeping='as written'),
        'empty image (H = 0)':  lambda: K(np.zeros((4, 0, 6, 2), np.float32), f, pad, lhs_dilation=(3, 1)),
        'no channels (C = 0)':  lambda: K(np.zeros((0, 5, 6, 2), np.float32), np.zeros((0, 3, 3, 1), np.float32), pad),
        'C: image vs filter':   lambda: K(x, f[:3], pad),
        'k_FI != 1':            lambda: K(x, np.zeros((4, 3, 3, 2), np.float32), pad),
        'C: out_shape':         lambda: K(x, f, pad, out_shape=(2, 5, 5, 6)),
        'N: out_shape':         lambda: K(x, f, pad, out_shape=(3, 4, 5, 6)),
        'kernel too large':     lambda: K(x, np.zeros((4, 9, 3, 1), np.float32), pad),
        'dtypes differ':        lambda: K(x, f.astype(np.float16), pad),
        'output too large':     lambda: K(x, f, ((0, 0), (10**9, 0))),
        'image too wide':       lambda: K(np.zeros((1, 1, 20000, 1), np.float32), np.zeros((1, 1, 3, 1), np.float32), ((0, 0), (1, 1))),
        'H dilation too tall':  lambda: K(x, f, pad, lhs_dilation=(3000, 1)),
        'H padding too tall':   lambda: K(x, f, ((100_000, 0), (1, 1))),
        'too many H tiles':     lambda: K(np.zeros((1, 2, 4, 1), np.float32), np.zeros((1, 1, 1, 1), np.float32), ((0, 0), (0, 0)),
                                          lhs_dilation=(10**5, 1)),
        'too many instructions': lambda: K(np.zeros((1, 100_000, 1, 20), np.float32), np.zeros((1, 1, 1, 1), np.float32), ((0, 0), (0, 0))),
        'too wide to transpose': lambda: K(np.zeros((1, 3, 9000, 1), np.float32), np.zeros((1, 1, 1, 1), np.float32),
                                           ((0, 0), (0, 0)), in_perm=(1, 0, 3, 2)),
    }


def test_each_mistake_of_the_catalogue_is_refused_in_words():
    "Every case raises a SimulatorError (a ValueError or TypeError) whose message states the rule without a line number."
    for what, fn in _catalogue().items():
        with pytest.raises(SimulatorError) as e: fn()
        assert not re.search(r"\bL\d{2,4}\b", str(e.value)), (what, e.value)


def test_the_catalogue_messages_name_argument_value_and_rule():
    x, f, pad = _x, _f, _pad
    _fails(lambda: K(x, f, pad, stride=(2, 2), out_shape=(2, 4, 3, 3)), contains="stride must be (1, 1) or None")
    _fails(lambda: K(x, f, ((1, 1), (-1, 0)), stride=(2, 1)), contains="stride must be (1, 1)")   # before the padding
    _fails(lambda: K(x, f, pad, in_perm=5), contains="in_perm must be None")
    _fails(lambda: K(x.tolist(), f, pad), contains="img must be a simulated tensor, got list")
    _fails(lambda: K(x, f, ((0, 0), {3, 1})), contains="padding[1] must be an ordered sequence (a tuple or a list)")
    _fails(lambda: K(x, f, ((1, 1), (-1, 0))), contains="padding must be >= 0, got W_padding_l=-1")
    _fails(lambda: K(x, f, pad, lhs_dilation=(1.5, 1)), contains="lhs_dilation: dil_H_lhs must be an integer, got dil_H_lhs=1.5")
    _fails(lambda: K(x, f, pad, out_shape=10), contains="out_shape must be an ordered sequence (a tuple or a list), got out_shape=10")
    _fails(lambda: K(np.zeros((4, 0, 6, 2), np.float32), f, pad, lhs_dilation=(3, 1)), contains="got H=0")
    _fails(lambda: K(np.zeros((0, 5, 6, 2), np.float32), np.zeros((0, 3, 3, 1), np.float32), pad), contains="got C=0")
    _fails(lambda: K(x, f[:3], pad), contains="img has C=4, filter has k_FO=3")
    _fails(lambda: K(x, f, pad, out_shape=(3, 4, 5, 6)), contains="out_shape has N=3 but the image has N=2")
    _fails(lambda: K(x, f, ((0, 0), (10**9, 0))), contains="output too large")
    _fails(lambda: K(x, f, pad, lhs_dilation=(3000, 1)), contains="spread 3,000 rows apart by lhs_dilation[0]=3,000")
    _fails(lambda: K(x, f, ((100_000, 0), (1, 1))), contains="rows of top padding (H_padding_l=100,000)")
    _fails(lambda: K(np.zeros((1, 1, 20000, 1), np.float32), np.zeros((1, 1, 3, 1), np.float32), ((0, 0), (1, 1))),
              contains="image too wide for one SBUF partition")
    assert issubclass(SimulatorError, ValueError) and issubclass(SimulatorTypeError, TypeError)


def _fails(fn, contains):
    with pytest.raises((SimulatorError, SimulatorTypeError)) as e: fn()
    assert contains in str(e.value), (contains, str(e.value))
