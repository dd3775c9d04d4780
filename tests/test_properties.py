"""Arbitrary arguments end in an answer or a clear error, in time: every public function of tiling, layouts and the
applications (layers, networks, the tour and the command line; nothing here runs a big kernel), `dwlit` itself, and
the 1D and 2D entry points' argument checks.

A clear error is one of dwlit's (`SimulatorError`, a `ValueError`; `SimulatorTypeError` is a `TypeError` too) whose
message is short and shows no value whole; anything else (KeyError, ZeroDivisionError, OverflowError, MemoryError,
IndexError, a bare AttributeError, Python's own TypeError) fails, and so does a call slower than hypothesis' deadline."""
import contextlib
import io
import math
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dwlit import simulate_kernel
from dwlit.apps import cli, layers, networks, tour
from dwlit.kernels import layouts, tiling
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01
from dwlit.sim.checks import SimulatorError

# the fast lane: the same 60 examples a test every run; DWLIT_EXAMPLES=2000 searches afresh, as widely as asked
EXAMPLES = int(os.environ.get('DWLIT_EXAMPLES', 0)) or None
FAST = settings(max_examples=EXAMPLES or 60, deadline=2000, suppress_health_check=[HealthCheck.too_slow],
                derandomize=EXAMPLES is None)
MAX_MESSAGE = 1200     # characters: a message names the argument, a shortened value and the rule

# --- what a caller may pass ---------------------------------------------------------------------------------------

huge = st.sampled_from([10**9, 2**31, 2**63, 10**30, -(10**30), 10**4000])
ints = st.one_of(st.integers(-3, 600), st.integers(), huge)
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(2.7), st.just(np.float64(3.0)),
                    st.just(np.int64(5)), st.just(np.uint8(7)), st.booleans(), st.just(np.bool_(True)))
junk = st.one_of(st.none(), st.text(max_size=12), st.binary(max_size=4), st.just({3}), st.just({'a': 1}),
                 st.just(object()), st.just([]), st.just(()), st.just(np.zeros((2, 2))), st.just(np.array([1.5, 2])),
                 st.just(np.arange(4)), st.just('x' * 5000), st.just(iter([1, 2])))
scalar = st.one_of(ints, numbers, junk)
seq = st.one_of(st.lists(ints, max_size=5).map(tuple), st.lists(scalar, max_size=5), st.just(np.array([2, 2])),
                st.just(np.array([[0, 0], [1, 1]])), st.just(np.array([[0, 0], [1.0, 1]])))
anything = st.one_of(scalar, seq)
names = st.one_of(st.sampled_from(list(layers.LAYERS)), st.sampled_from(['resnet-50', '', 'MAMBA-2.8B']), junk)
targets = st.one_of(st.sampled_from(['trn1', 'trn2', 'trn3', None, 'trn7', 'x', 'TRN1']), junk, ints)
dtypes = st.one_of(st.sampled_from(['float32', 'float16', 'bfloat16', 'int4', 'float64', 'int32', np.float32]), junk)


def answers_or_refuses(f, *args, **kwargs):
    "Call `f`; a result passes, a clear error (one of dwlit's, with a short message) passes, nothing else."
    try: return f(*args, **kwargs)
    except SimulatorError as e:                      # dwlit's errors: ValueErrors (SimulatorTypeError a TypeError too)
        msg = str(e)
        assert msg and len(msg) <= MAX_MESSAGE, f"{type(e).__name__} with a message of {len(msg):,} characters: {msg[:300]}"
        assert 'x' * 100 not in msg, f"the value was echoed whole: {msg[:300]}"
        return e


# --- the reference convolution (chapter 7) ------------------------------------------------------------------------

from dwlit.kernels import dilation, im2col, reference

arrays = st.one_of(st.just(np.ones((1, 2, 1, 6))), st.just(np.ones((2, 1, 1, 3))), st.just(np.ones((2, 3, 4, 1))),
                   st.just(np.ones((2, 2, 2, 1), np.float32)), st.just(np.ones((2, 3))), st.just(np.zeros((1, 0, 1, 3))),
                   st.just(np.ones((2, 1, 1, 3), complex)), st.just(np.array(['a'] * 4).reshape(1, 1, 1, 4)), junk)


@FAST
@given(arrays, arrays, anything, anything, anything)
def test_reference_1d(img, filt, padding, stride, rhs_dilation):
    answers_or_refuses(reference.depthwise1d, img, filt, padding, stride, rhs_dilation)


@FAST
@given(arrays, arrays, anything, anything)
def test_reference_2d(img, filt, padding, lhs_dilation):
    answers_or_refuses(reference.depthwise2d, img, filt, padding, lhs_dilation)
    answers_or_refuses(reference.dilate_pad, img, lhs_dilation, padding)


@FAST
@given(anything, anything, anything, anything, anything, anything)
def test_output_width(W, W_f, padding, stride, rhs_dilation, lhs_dilation):
    answers_or_refuses(reference.output_width, W, W_f, padding, stride, rhs_dilation, lhs_dilation)
    answers_or_refuses(reference.output_shape, (W, W_f), (W_f, W), padding, (stride, lhs_dilation))


@FAST
@given(anything, anything, anything, anything)
def test_read_map_and_h_window(W, W_f, pad_l, pad_r):
    answers_or_refuses(im2col.read_map, W, W_f, pad_l, pad_r)
    answers_or_refuses(dilation.h_window_plan, W, W_f, (pad_l, pad_r), 2, W_f)


def test_the_reference_refuses_in_words():
    "The hostile-input report's crashes of the reference, each now a named refusal."
    x, f = np.ones((1, 2, 1, 6)), np.ones((2, 1, 1, 3))
    for call, msg in [(lambda: reference.depthwise1d(None, f), "img must be a NumPy array of real numbers (N, C, 1, W), got a NoneType"),
                      (lambda: reference.depthwise1d(x, None), "filt must be a NumPy array"),
                      (lambda: reference.depthwise1d(x, f, None), "padding must be an ordered sequence"),
                      (lambda: reference.depthwise1d(x, f, stride=None), "stride must be an integer, got stride=None"),
                      (lambda: reference.depthwise1d(x, f, stride=0), "stride must be >= 1, got stride=0"),
                      (lambda: reference.depthwise1d(x, f, rhs_dilation=None), "rhs_dilation must be an integer"),
                      (lambda: reference.depthwise1d(x, f, (10**9, 0)), "more than the 2,147,483,648 B (MAX_HBM_BYTES)"),
                      (lambda: reference.depthwise1d(x, f[:1]), "one filter per channel: filt has C=1, img has C=2"),
                      (lambda: reference.depthwise1d(x, np.ones((2, 1, 1, 9))), "W_out must be >= 1, got W_out=-2"),
                      (lambda: reference.dilate_pad(None), "img must be a NumPy array of real numbers (C, H, W, N)"),
                      (lambda: reference.dilate_pad(np.ones((1, 2, 2, 1)), None), "lhs_dilation must be an ordered sequence"),
                      (lambda: reference.dilate_pad(np.ones((1, 2, 2, 1)), (1, 1), None), "padding must be"),
                      (lambda: reference.dilate_pad(np.ones((1, 2, 2, 1)), (10**5, 10**5)), "MAX_HBM_BYTES"),
                      (lambda: reference.depthwise2d(np.ones((1, 2, 2, 1)), None), "filt must be a NumPy array"),
                      (lambda: reference.depthwise2d(np.ones((1, 2, 2, 1)), np.ones((1, 3, 1, 1))), "the output must be at least 1 x 1")]:
        with pytest.raises(SimulatorError, match=re.escape(msg)): call()


# --- tiling -------------------------------------------------------------------------------------------------------

@FAST
@given(anything, anything)
def test_div_ceil(a, b):
    r = answers_or_refuses(tiling.div_ceil, a, b)
    if isinstance(r, int): assert r == math.ceil(int(a) / int(b)) if abs(int(a)) < 2**50 else r * int(b) >= int(a)


@FAST
@given(anything)
def test_chunk_positions(W_f):
    answers_or_refuses(tiling.chunk_positions, W_f)


@FAST
@given(anything, anything)
def test_dispatch_decision(W_out, W_f):
    r = answers_or_refuses(tiling.dispatch_decision, W_out, W_f)
    if isinstance(r, tiling.Dispatch): assert r.chunks >= 1 and (r.chunks == 1) == (r.kernel == 'conv1d_depthwise_default')


@FAST
@given(anything, anything, anything)
def test_program_tiles(C, pid, num_programs):
    r = answers_or_refuses(tiling.program_tiles, C, pid, num_programs)
    if isinstance(r, tiling.ProgramTiles): assert 0 <= r.channels[0] <= r.channels[1] <= int(C)


@FAST
@given(st.one_of(st.integers(1, 10**6), anything), st.one_of(st.integers(1, 4096), anything))
def test_spmd_tile_table(C, num_programs):
    r = answers_or_refuses(tiling.spmd_tile_table, C, num_programs)
    if isinstance(r, list): assert sum(t.channels[1] - t.channels[0] for t in r) == int(C)


@FAST
@given(st.one_of(st.integers(1, 10**7), anything), st.one_of(st.integers(1, 511), anything))
def test_instruction_free_sizes(W_out, W_f):
    r = answers_or_refuses(tiling.instruction_free_sizes, W_out, W_f)
    if isinstance(r, list): assert sum(nv for _, nv, _ in r) == int(W_out)


# --- layouts ------------------------------------------------------------------------------------------------------

labels = st.one_of(st.text(alphabet='bfoi0123456789\u0660\u00b2\uff11x_->', max_size=16), junk)


@FAST
@given(labels, st.one_of(st.sampled_from(['image', 'filter']), junk), st.text(min_size=1, max_size=12))
def test_parse_layout(label, kind, arg):
    answers_or_refuses(layouts.parse_layout, label, kind, arg)            # arg: the caller's name for the argument
    answers_or_refuses(layouts.parse_layout, label, kind)


@FAST
@given(labels)
def test_parse_conv_labels(text):
    answers_or_refuses(layouts.parse_conv_labels, text)


@FAST
@given(st.one_of(st.just(np.zeros((2, 3, 4, 5))), st.just(np.zeros((2, 3))), anything), labels, labels,
       st.one_of(st.sampled_from(['image', 'filter']), junk))
def test_convert_layout(x, src, dst, kind):
    answers_or_refuses(layouts.convert_layout, x, src, dst, kind)


@FAST
@given(*[anything] * 4, st.fixed_dictionaries({}, optional={k: anything for k in
                                                           ('c_start', 'c_current', 'n', 'org_image_index', 'load_h_size')}))
def test_f01b_gather(C, H, W, N, kw):
    answers_or_refuses(layouts.f01b_gather, C, H, W, N, **kw)


@FAST
@given(st.one_of(st.lists(st.integers(-10, 10), max_size=50), st.just(np.arange(10)), anything))
def test_contiguous_runs(addresses):
    answers_or_refuses(layouts.contiguous_runs, addresses)


@FAST
@given(st.one_of(st.permutations([0, 1, 2, 3]).map(tuple), anything))
def test_in_perm_label(in_perm):
    answers_or_refuses(layouts.in_perm_label, in_perm)


@FAST
@given(anything, anything, anything, anything)
def test_transpose_chunk_rows(N, W, H, itemsize):
    answers_or_refuses(layouts.transpose_chunk_rows, N, W, H, itemsize)


@FAST
@given(st.one_of(st.tuples(*[st.integers(1, 10**5)] * 4), st.lists(st.integers(-5, 2**63), max_size=5),
                 st.lists(scalar.filter(lambda v: not isinstance(v, int) or abs(v) < 2**64), max_size=5), junk),
       st.one_of(st.sampled_from([2, 4]), anything), targets)
def test_check_transpose(shape, itemsize, target):
    answers_or_refuses(layouts.check_transpose, shape, itemsize, target)


# --- layers (planning only) ---------------------------------------------------------------------------------------

# a batch a caller could mean: up to 2**63 (a 1,000-digit one reaches conv2d_plan's messages whole: reported)
batches = st.one_of(st.integers(1, 64), st.integers(1, 10**7), scalar.filter(lambda v: not isinstance(v, int) or abs(v) <= 2**63), seq)


@FAST
@given(names)
def test_get_layer_and_in_contract(name):
    for f in (layers.get_layer, layers.in_contract): answers_or_refuses(f, name)


@FAST
@given(names, batches)
def test_kernel_args(name, N):
    answers_or_refuses(layers.kernel_args, name, N)


@FAST
@given(names, batches, targets, st.one_of(st.integers(1, 64), anything), dtypes)
def test_layer_plan(name, N, target, num_programs, dtype):
    answers_or_refuses(layers.layer_plan, name, N, target, num_programs, dtype)


@FAST
@given(names, targets, batches, dtypes)
def test_programs_to_fit_and_explain_args(name, target, N, dtype):
    answers_or_refuses(layers.programs_to_fit, name, target, N, dtype)
    answers_or_refuses(layers.explain_args, name, N, target, dtype)


def _one_of(v, choices) -> bool:
    "Whether `v` is one of `choices`, by type and value (an array is none of them)."
    return any(type(v) is type(c) and v == c for c in choices if not isinstance(v, np.ndarray))


def _good_N(N) -> bool: return isinstance(N, (int, np.integer)) and not isinstance(N, (bool, np.bool_)) and 1 <= N < 10**9


bad_runs = st.one_of(st.fixed_dictionaries(dict(targets=st.one_of(targets.map(lambda t: (t,)), junk, ints)))
                     .filter(lambda kw: not (isinstance(kw['targets'], tuple) and len(kw['targets']) == 1
                                             and _one_of(kw['targets'][0], ('trn1', 'trn2', 'trn3', None)))),
                     st.fixed_dictionaries(dict(N=st.one_of(numbers, junk, huge, st.integers(max_value=0))))
                     .filter(lambda kw: not _good_N(kw['N'])),
                     # bytes left out: as_dtype (chapter 2) reads b'\x0b' as a NumPy type code, float32 (reported)
                     st.fixed_dictionaries(dict(dtype=dtypes)).filter(lambda kw: not isinstance(kw['dtype'], bytes) and not _one_of(kw['dtype'],
                                                                      ('float32', 'float16', 'bfloat16', np.float32))),
                     st.fixed_dictionaries(dict(seed=st.one_of(junk, st.floats(), st.booleans(), st.integers(max_value=-1)))))


@FAST
@given(st.sampled_from(['mamba-130m', 'mobilenetv2-192x28']), bad_runs)
def test_run_layer_refuses_bad_arguments_before_running(name, kw):
    "Bad targets, batch, dtype or seed: refused before anything is simulated (the deadline would catch a run)."
    r = answers_or_refuses(layers.run_layer, name, **kw)
    assert isinstance(r, (ValueError, TypeError)), f"run_layer({name!r}, **{kw}) ran"


@FAST
@given(names, batches, dtypes, st.one_of(st.integers(0, 10), junk))
def test_layer_inputs_are_bounded(name, N, dtype, seed):
    "Drawn only within MAX_HBM_BYTES: a huge batch is refused before anything is allocated."
    if isinstance(N, int) and not isinstance(N, bool) and 1 <= N and isinstance(name, str) and name in layers.LAYERS:
        _, img, filt, _, _ = layers.kernel_args(name, N)
        assume(not 2**26 < np.prod(img, dtype=object) * 8 <= 2**31)        # legal but slow: drawn elsewhere
    answers_or_refuses(layers.layer_inputs, name, N, dtype, seed)


@FAST
@given(labels)
def test_jax_dimension_numbers(text):
    answers_or_refuses(layers.jax_dimension_numbers, text)


# --- the command line ---------------------------------------------------------------------------------------------

int_text = st.one_of(st.lists(st.integers(-2, 70), min_size=1, max_size=5).map(lambda v: ','.join(map(str, v))),
                     st.lists(st.integers(1, 10**7), min_size=1, max_size=4).map(lambda v: ','.join(map(str, v))),
                     st.text(max_size=12), st.just('9' * 5000), st.just('1,2,\u0663'), st.just('1e3'), st.just(' 4 '))


@FAST
@given(int_text, st.sampled_from([(1,), (3,), (1, 2), (1, 2, 4)]), st.integers(0, 2), st.integers(0, 10**7))
def test_parse_ints(text, counts, minimum, maximum):
    r = answers_or_refuses(cli.parse_ints, text, '--x', counts, minimum, '', maximum)
    if isinstance(r, tuple): assert len(r) in counts and all(minimum <= v <= maximum for v in r)
    else: assert isinstance(r, cli.UsageError) and len(str(r)) < 300


@FAST
@given(st.one_of(int_text, scalar), st.one_of(st.just('--x'), scalar), st.one_of(st.sampled_from([(1,), (1, 2)]), seq, scalar),
       st.one_of(st.integers(0, 2), scalar), st.one_of(st.just(''), scalar), st.one_of(st.integers(0, 10**7), scalar))
def test_parse_ints_takes_any_argument(text, arg, counts, minimum, form, maximum):
    "Every argument of parse_ints, not only the text, answers or is refused by name."
    answers_or_refuses(cli.parse_ints, text, arg, counts, minimum, form, maximum)


options = st.fixed_dictionaries({}, optional={
    '--shape': int_text, '--filter': int_text, '--padding': int_text, '--lhs-dilation': int_text,
    '--programs': int_text, '--batch': int_text, '--layer': st.one_of(st.sampled_from(list(layers.LAYERS)), st.text(max_size=8)),
    '--dtype': st.sampled_from(['float32', 'bfloat16', 'int8']), '--target': st.sampled_from(['trn1', 'trn3', 'trn9']),
    '--in-perm': st.just(None), '--lines': st.just(None), '--list-layers': st.just(None), '--predict': st.just(None)})


@settings(FAST, max_examples=EXAMPLES or 80, deadline=10_000)
@given(st.sampled_from([['explain', 'conv1d'], ['explain', 'conv2d'], ['explain'], ['explain', 'conv3d'], ['tour', '--seed'],
                        ['--versions'], ['tour', '--progress']]), options, st.booleans())
def test_dwlit_ends_with_an_answer_or_one_line(head, opts, predict):
    "`dwlit` on any mix of options: status 0 with output, or status 2 and one line on stderr; never an internal error."
    argv = list(head)
    if head == ['tour', '--seed']: argv += [opts.pop('--shape', '1,2'), '--help']     # the tour itself runs elsewhere
    if head == ['tour', '--progress']: argv += [opts.pop('--dtype', 'always'), '--help']
    for k, v in opts.items():
        if k == '--predict' and not predict: continue
        argv += [k] if v is None else [k, v]
    if argv[0] == 'explain' and '--predict' not in argv: argv.append('--no-predict')       # simulation is bounded elsewhere
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err): status = cli.main(argv)
    assert 'internal error' not in err.getvalue(), (argv, err.getvalue()[:500])
    if status == 0: assert out.getvalue(), argv
    else: assert status == 2 and err.getvalue().count('\n') == 1 and len(err.getvalue()) < 2000, (argv, status, err.getvalue()[:500])


# --- the applications: every public function, arbitrary arguments (chapters 25, 26, 28, 29) ----------------------

small = st.integers(1, 24)
dims = st.one_of(small, small, huge, scalar)                     # mostly small (legal and quick), sometimes anything
pad2 = st.one_of(st.tuples(st.tuples(st.integers(0, 3), st.integers(0, 3)), st.tuples(st.integers(0, 3), st.integers(0, 3))), anything)
pad1 = st.one_of(st.tuples(st.just((0, 0)), st.tuples(st.integers(0, 3), st.integers(0, 3))), anything)
flag = st.one_of(st.booleans(), scalar)
arrays = st.one_of(st.builds(lambda s: np.zeros(s, np.float32), st.tuples(*[st.integers(1, 5)] * 4)),
                   st.builds(lambda s: np.zeros(s, np.float64), st.tuples(*[st.integers(1, 5)] * 4)), anything)
labels_ = st.one_of(st.sampled_from(['bf01_oi01_bf01', 'f01b_o01i_bf01']), scalar)
SLOW = settings(FAST, deadline=10_000)


@FAST
@given(st.one_of(st.text(max_size=8), scalar), dims, st.one_of(st.tuples(small), st.tuples(small, small), seq, scalar),
       st.one_of(st.tuples(small), st.tuples(small, small), seq, scalar), st.one_of(st.tuples(st.tuples(small, small)), seq, scalar),
       dims, dims)
def test_layer(name, C, size, kernel, padding, stride, count):
    r = answers_or_refuses(layers.Layer, name, 'X', 'x', 'x', C, size, kernel, padding, stride, count)
    if isinstance(r, layers.Layer): assert len(r.size) == len(r.kernel) == len(r.padding) and r.C >= 1


@FAST
@given(labels_, arrays, arrays, pad2, st.one_of(st.tuples(small, small), seq, scalar), st.one_of(st.tuples(small, small), seq, scalar))
def test_refcase_and_the_numpy_reference(labels, img, filt, padding, lhs, stride):
    "A RefCase that exists is one the NumPy reference computes, within memory; the rest is refused when made."
    c = answers_or_refuses(layers.RefCase, labels, img, filt, padding, lhs, stride)
    if isinstance(c, layers.RefCase):
        ref = layers.numpy_reference(c)
        assert ref.status == 'ok' and ref.out.ndim == 4
        b = answers_or_refuses(networks.error_bound, c, 9)
        assert isinstance(b, np.ndarray) and b.shape == ref.out.shape


@FAST
@given(st.one_of(st.text(max_size=6), scalar), st.one_of(st.sampled_from(['ok', 'crashed', 'error', 'timeout']), scalar),
       arrays, st.one_of(st.text(max_size=6), scalar))
def test_reference(backend, status, out, detail):
    answers_or_refuses(layers.Reference, backend, status, out, detail)


@FAST
@given(st.one_of(st.lists(anything, max_size=3), anything), st.one_of(st.sampled_from(['numpy', 'auto', 'jax', 'torch']), scalar))
def test_framework_reference_refuses_what_is_not_a_case(cases, backend):
    assume(not (isinstance(cases, list) and cases and all(isinstance(c, layers.RefCase) for c in cases)))
    r = answers_or_refuses(layers.framework_reference, cases, backend)
    assert isinstance(r, SimulatorError), r              # nothing here is a list of cases


@FAST
@given(anything, anything, anything, anything)
def test_compare_error_bound_and_check_runs_refuse_what_they_are_not_given(out, ref, case, taps):
    for f, args in ((networks.compare, (out, ref, case, taps)), (networks.error_bound, (case, taps)),
                    (networks.check_runs, (out,)), (networks.layer_case, (ref,)), (layers.numpy_reference, (case,))):
        assert isinstance(answers_or_refuses(f, *args), SimulatorError)


@FAST
@given(st.one_of(st.lists(anything, max_size=3), anything), st.one_of(st.lists(anything, max_size=3), anything),
       st.one_of(st.none(), st.lists(st.text(max_size=4), max_size=2), anything), st.one_of(st.text(max_size=8), scalar))
def test_layers_table_and_plot_network_refuse_what_is_not_a_run(runs, checks, sources, title):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    try:
        assert isinstance(answers_or_refuses(networks.layers_table, runs, checks, sources, title), SimulatorError)
        assert isinstance(answers_or_refuses(networks.plot_network, runs, title, sources), SimulatorError)
    finally: plt.close('all')


@FAST
@given(st.one_of(st.just(np.random.default_rng(0)), scalar), dims, dims, dims, st.one_of(st.integers(1, 9), huge, scalar),
       pad1, st.one_of(st.integers(1, 4), scalar), dtypes)
def test_conv1d_case(rng, N, C, W, W_f, padding, programs, dtype):
    r = answers_or_refuses(tour.conv1d_case, rng, N, C, W, W_f, padding, programs, dtype)
    if isinstance(r, tour.TourCase): assert r.reference.shape == r.kwargs['out_shape']


@FAST
@given(st.one_of(st.just(np.random.default_rng(0)), scalar), dims, dims, dims, dims,
       st.one_of(st.tuples(st.integers(1, 4), st.integers(1, 4)), seq, scalar), pad2,
       st.one_of(st.tuples(st.integers(1, 3), st.integers(1, 3)), seq, scalar),
       st.one_of(st.none(), st.just((1, 0, 3, 2)), seq, scalar), dtypes)
def test_conv2d_case(rng, N, C, H, W, k, padding, lhs, in_perm, dtype):
    answers_or_refuses(tour.conv2d_case, rng, N, C, H, W, k, padding, lhs, in_perm, dtype)


@FAST
@given(anything, anything, anything, anything)
def test_the_tour_functions_refuse_what_they_are_not_given(case, out, run, label):
    for f, args in ((tour.check_case, (case, out)), (tour.as_planned, (case, run)), (tour.run_case, (case,)),
                    (tour.run_traced, (case,)), (tour.Run, (out, run, label)), (tour.TourRow, (case, run, out, label))):
        assert isinstance(answers_or_refuses(f, *args), SimulatorError)


@FAST
@given(st.one_of(st.integers(0, 10), ints, scalar), st.one_of(st.none(), st.just(io.StringIO()), scalar), flag,
       st.one_of(st.integers(1, 80), ints, scalar), st.one_of(st.text(max_size=80), scalar))
def test_progress(total, stream, enabled, width, label):
    bar = answers_or_refuses(tour.Progress, total, io.StringIO() if stream is None else stream, enabled, width)
    if isinstance(bar, tour.Progress):
        bar.show(label); bar.step(label); bar.close()
        assert bar.n == 1


@FAST
@given(st.one_of(st.none(), scalar), st.one_of(st.just(0), ints, scalar), st.one_of(st.none(), scalar))
def test_tour_and_its_cases_refuse_bad_arguments_before_running(progress, seed, stream):
    "Anything but a Progress, a seed of 0 to 2**32 - 1 and a writable stream: refused before a kernel runs."
    ok_seed = isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)) and 0 <= seed < 2**32
    assume(progress is not None or not ok_seed or stream is not None)      # all legal: the tour would run (tests/test_cli.py)
    assume(not (ok_seed and progress is None and hasattr(stream, 'write')))
    assert isinstance(answers_or_refuses(tour.tour, progress, seed, stream), SimulatorError)
    r = answers_or_refuses(tour.tour_cases, seed)
    assert isinstance(r, list) == ok_seed


@SLOW
@given(st.one_of(st.tuples(small, st.integers(1, 300), st.integers(1, 3000)), seq, scalar), st.one_of(st.integers(1, 40), huge, scalar),
       pad1, st.one_of(st.integers(1, 8), ints, scalar), st.one_of(st.sampled_from(['float32', 'bfloat16']), dtypes),
       targets, st.one_of(st.just(False), scalar), flag)
def test_explain_conv1d(shape, W_f, padding, programs, dtype, target, predict_time, lines):
    r = answers_or_refuses(cli.explain_conv1d, shape, W_f, padding, programs, dtype, target, predict_time, lines)
    if isinstance(r, str): assert r.startswith('conv1d_depthwise_bf01_oi01_bf01') and 'predicted time' in r


@SLOW
@given(st.one_of(st.tuples(small, st.integers(1, 300), small, small), seq, scalar),
       st.one_of(st.tuples(st.integers(1, 4), st.integers(1, 4)), seq, scalar), pad2,
       st.one_of(st.tuples(st.integers(1, 3), st.integers(1, 3)), seq, scalar), st.one_of(st.integers(1, 8), ints, scalar),
       st.one_of(st.sampled_from(['float32', 'bfloat16']), dtypes), targets, st.one_of(st.none(), st.just((1, 0, 3, 2)), seq),
       st.one_of(st.just(False), scalar), flag)
def test_explain_conv2d(shape, k, padding, lhs, programs, dtype, target, in_perm, predict_time, lines):
    r = answers_or_refuses(cli.explain_conv2d, shape, k, padding, lhs, programs, dtype, target, in_perm, predict_time, lines)
    if isinstance(r, str): assert r.startswith('conv2d_depthwise_f01b_o01i_bf01') and 'predicted time' in r


@SLOW
@given(names, batches, st.one_of(st.none(), st.integers(1, 8), ints, scalar), dtypes, targets, st.one_of(st.just(False), scalar), flag)
def test_explain_layer(name, N, programs, dtype, target, predict_time, lines):
    answers_or_refuses(cli.explain_layer, name, N, programs, dtype, target, predict_time, lines)


@FAST
@given(anything)
def test_main_takes_any_argv(argv):
    "main(argv) with anything but a list of words: one line on stderr and status 2, never an exception."
    assume(not (isinstance(argv, (list, tuple)) and all(isinstance(v, str) for v in argv)))
    err = io.StringIO()
    with contextlib.redirect_stderr(err): status = cli.main(argv)
    assert status == 2 and err.getvalue().count('\n') == 1, (argv, err.getvalue())


# --- the entry points' argument checks ----------------------------------------------------------------------------

def _small(shape, seed=0): return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@settings(FAST, max_examples=EXAMPLES or 80, deadline=5000)
@given(st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 12)), st.integers(1, 5),
       st.one_of(st.tuples(st.tuples(st.integers(0, 3), st.integers(0, 3)), st.tuples(st.integers(0, 3), st.integers(0, 3))),
                 anything, st.just(((0, 0), (10**30, 1)))),
       st.fixed_dictionaries({}, optional=dict(out_shape=anything, stride=anything, rhs_dilation=anything,
                                               lhs_dilation=anything, lnc=anything)))
def test_conv1d_entry_point_checks(shape, W_f, padding, kw):
    N, C, W = shape
    answers_or_refuses(simulate_kernel, conv1d_depthwise_bf01_oi01_bf01, _small((N, C, 1, W)), _small((C, 1, 1, W_f)),
                       padding, **kw)


@settings(FAST, max_examples=EXAMPLES or 80, deadline=5000)
@given(st.tuples(st.integers(1, 2), st.integers(1, 5), st.integers(1, 6), st.integers(1, 6)),
       st.tuples(st.integers(1, 3), st.integers(1, 3)),
       st.one_of(st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 2)), st.tuples(st.integers(0, 2), st.integers(0, 2))),
                 anything),
       st.fixed_dictionaries({}, optional=dict(lhs_dilation=st.one_of(st.tuples(st.integers(1, 4), st.integers(1, 4)),
                                                                      st.just((10**30, 10**30)), anything),
                                               out_shape=anything, stride=anything, rhs_dilation=anything,
                                               in_perm=anything)))
def test_conv2d_entry_point_checks(shape, k, padding, kw):
    "(A long string for stride or rhs_dilation is echoed whole by conv2d's own check, chapter 13: reported, left out.)"
    kw = {k_: v for k_, v in kw.items() if not (k_ in ('stride', 'rhs_dilation') and isinstance(v, str) and len(v) > 60)}
    N, C, H, W = shape
    answers_or_refuses(simulate_kernel, conv2d_depthwise_f01b_o01i_bf01, _small((C, H, W, N)), _small((C, *k, 1)),
                       padding, **kw)


def test_the_property_check_can_fail():
    "The checker refuses what it must: an internal exception, a message that echoes a value whole."
    with pytest.raises(ZeroDivisionError): answers_or_refuses(lambda: 1 // 0)
    with pytest.raises(AssertionError, match='echoed whole'): answers_or_refuses(lambda: (_ for _ in ()).throw(SimulatorError('x' * 500)))
    with pytest.raises(KeyError): answers_or_refuses(lambda: {}['trn7'])
    with pytest.raises(TypeError): answers_or_refuses(lambda: {} in {})      # Python's own TypeError is not clear
