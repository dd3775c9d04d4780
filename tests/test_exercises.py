"""The kernel chapters' exercise checks (chapters 1 and 7-14, appendix 35c): each passes its solution on fresh random
cases, says 'not done yet' for a stub, and fails every typical wrong answer below with the message that teaches what
is wrong (matched by phrase). The wrong answers that the old checks let through are in test_hostile_answers.py."""
import io

import numpy as np
import pytest
from PIL import Image

from dwlit import nisa, nl
from dwlit.exercises import (
    EXERCISES,
    NotDone,
    Result,
    check_chunk_loop,
    check_conv1d_tile,
    check_dilated_row,
    check_filter_view,
    check_h_tile,
    check_program_channels,
    check_window_view,
    progress,
    reveal_solution,
)
from dwlit.exercises.harness import Grader, _call, dataflow
from dwlit.exercises.kernels import (
    _h_cases,
    _h_tile_verdict,
    _kernel_channels,
    conv1d_tile_solution,
    h_tile_solution,
    program_channels_solution,
    window_view_solution,
)
from dwlit.kernels.dilation import calc_dilated_dimension, h_window_plan, plan_errors
from dwlit.kernels.tiling import div_ceil, spmd_tile_table
from dwlit.sim.checks import AccessPatternError, SimulatorError
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.tracing import trace

ALL = {n: (e.check, e.solution) for n, e in EXERCISES.items() if e.check.__module__ == 'dwlit.exercises.kernels'}


def wrong(result, *phrases):
    "Assert `result` is a wrong-answer verdict whose message holds every phrase; return it."
    assert result.status == 'wrong', result.message
    for p in phrases: assert result.says(p), f"{p!r} not in:\n{result.message}"
    return result


# --- every check: the solution passes on many shapes, a stub is 'not done' ------------------------------------------

@pytest.mark.parametrize('n', sorted(ALL))
def test_solution_passes_on_many_shapes(n):
    check, solution = ALL[n]
    for seed in (None, None, 0, 1, 2):
        r = check(solution, show=False, seed=seed)
        assert r.passed, r.message


@pytest.mark.parametrize('n', sorted(ALL))
def test_stub_is_not_done_yet(n):
    check, _ = ALL[n]
    def stub(*args): raise NotDone("write your answer here")
    r = check(stub)
    assert (r.status, r.passed, r.png) == ('not done', False, None)
    assert r.says('is not done yet: stub still raises NotDone (write your answer here)')
    assert 'Traceback' not in r.message


def test_result_shows_its_message_then_its_picture():
    r = check_window_view(lambda f, T, s, c, W_out, W_f: f.ap([[T * s, f.shape[0]], [W_f, W_out], [1, W_f]], offset=c * s))
    b = r._repr_mimebundle_()
    assert b['text/plain'] == r.message == repr(r)
    assert b['text/html'].index('output position 1 of partition 0') < b['text/html'].index('<img')
    assert max(len(l) for l in r.message.split('\n') if not l.startswith('    ')) <= 88
    ok = check_window_view(window_view_solution, seed=0)
    assert ok._repr_mimebundle_() == {'text/plain': repr(check_window_view(window_view_solution, seed=0))}



def test_a_verdict_reads_as_text_or_as_html_with_its_picture():
    g = Grader('1.1', lambda: None, False, 7, 'check_window_view')
    r = g.not_done(NotDone("return a view"))
    assert (r.status, r.passed, r.seed) == ('not done', False, 7)
    assert r.says('Exercise 1.1 (the sliding window) is not done yet: <lambda> still raises NotDone (return a view)')
    assert g.passed('all shapes').passed
    assert 'not right yet' in g.wrong('P=1', 'output position 0 is never written').message
    assert r._repr_mimebundle_() == {'text/plain': r.message}                           # no picture: text only
    html = Result('8.2', 'wrong', 'x < y', b'\x89PNG')._repr_mimebundle_()['text/html']
    assert '<pre style="white-space: pre-wrap">x &lt; y</pre>' in html and 'base64,iVBORw' in html
    lines = g.wrong('P=1', 'word ' * 40 + '\n    ' + 'code ' * 30).message.split('\n')
    assert max(map(len, lines)) == len('    ' + 'code ' * 30)                          # prose wrapped, code kept whole


def test_an_error_shows_your_line_and_the_simulators_own_words():
    def _bad(t): return t.ap([[4, 2], [1, 5]])          # 5 elements from a partition of 4
    with use_core(NeuronCore()):
        t = nl.ndarray((2, 4), nl.float32, buffer=nl.sbuf, name='t')
        status, e = _call(_bad, t)
    assert status == 'error' and isinstance(e, AccessPatternError)
    r = Grader('1.1', _bad, False, 0, 'check_window_view').error('a (2, 4) tile', e)
    assert r.says('your code raised AccessPatternError in') and r.says('t.ap([[4, 2], [1, 5]])')   # your line
    assert r.says('out of bounds')                                                                   # the simulator's words


def test_dataflow_of_a_two_tap_window():
    with use_core(NeuronCore()), trace() as tr:
        x = nl.ndarray((1, 4), nl.float32, buffer=nl.sbuf, name='x')
        w = nl.ndarray((1, 2), nl.float32, buffer=nl.sbuf, name='w')
        prod = nl.ndarray((1, 3, 2), nl.float32, buffer=nl.sbuf, name='prod')
        y = nl.ndarray((1, 3), nl.float32, buffer=nl.sbuf, name='y')
        x.write(np.arange(4.).reshape(1, 4)); w.write([[1., 10.]])
        nisa.tensor_tensor(dst=prod, data1=x.ap([[4, 1], [1, 3], [1, 2]]), data2=w.ap([[2, 1], [0, 3], [1, 2]]), op=nl.multiply)
        nisa.tensor_reduce(dst=y, op=nl.add, data=prod, axis=2)
    flow = dataflow(tr)
    assert flow[(y.id, 1)] == ('reduce', 'add', (('op', 'multiply', ('in', x.id, 1), ('in', w.id, 0), 0),
                                                 ('op', 'multiply', ('in', x.id, 2), ('in', w.id, 1), 0)), 1)
    assert (y.numpy() == [[10., 21., 32.]]).all()          # 0 + 1*10, 1 + 2*10, 2 + 3*10
    assert (x.id, 0) not in flow                           # an input: no instruction wrote it

# --- exercise 1: the sliding window ------------------------------------------------------------------------------

def test_window_view_wrong_answers():
    wrong(check_window_view(lambda f, T, s, c, W_out, W_f: f.ap([[T * s, f.shape[0]], [W_f, W_out], [1, W_f]], offset=c * s)),
          'output position 1 of partition 0 reads elements 3..5 of channel tile 0; it should read elements 1..3')
    # forgetting the tile's offset: right on tile 0, wrong on the first shape with c_tile = 1
    wrong(check_window_view(lambda f, T, s, c, W_out, W_f: f.ap([[T * s, f.shape[0]], [1, W_out], [1, W_f]])),
          'c_tile=1', 'output position 0 of partition 0 reads element 0 of channel tile 0; it should read element 0 of channel tile 1')
    wrong(check_window_view(lambda f, T, s, c, W_out, W_f: f.ap([[T * s, f.shape[0]], [1, W_f], [1, W_out]], offset=c * s)),
          'has shape (2, 3, 6); it should be (P, W_out, W_f) = (2, 6, 3)')
    wrong(check_window_view(lambda f, T, s, c, W_out, W_f: [[T * s, f.shape[0]], [1, W_out], [1, W_f]]),
          'returned a list', 'return the view, img_full.ap(pattern, offset=...)')
    wrong(check_window_view(lambda f, T, s, c, W_out, W_f: None), 'did you forget the `return`?')
    wrong(check_window_view(lambda f, T, s, c, W_out, W_f: f), 'returned the whole tile img_full')


def partition_step_wrong(img_full, T, image_size, c_tile, W_out, W_f):
    return img_full.ap([[image_size, img_full.shape[0]], [1, W_out], [1, W_f]], offset=c_tile * image_size)


def test_window_view_simulator_error_names_your_line_and_the_pattern():
    r = wrong(check_window_view(partition_step_wrong), 'your code raised AccessPatternError in',
              'return img_full.ap([[image_size, img_full.shape[0]], [1, W_out], [1, W_f]], offset=c_tile * image_size)',
              "tensor 'img_full'", 'the first pair walks partitions')
    assert r.png is None


def test_wrong_view_picture_is_at_most_9_inches():
    r = check_window_view(lambda f, T, s, c, W_out, W_f: f.ap([[T * s, f.shape[0]], [W_f, W_out], [1, W_f]], offset=c * s))
    assert Image.open(io.BytesIO(r.png)).size[0] <= 900


# --- exercise 2: the filter broadcast -----------------------------------------------------------------------------

def test_filter_view_wrong_answers():
    wrong(check_filter_view(lambda f, T, c, W_out, W_f: f.ap([[T * W_f, f.shape[0]], [1, W_out], [1, W_f]], offset=c * W_f)),
          'output position 1 of partition 0 reads tap 1 of tile 0, tap 2 of tile 0, tap 0 of tile 1; it should read taps 0..2')
    wrong(check_filter_view(lambda f, T, c, W_out, W_f: f.ap([[T * W_f, f.shape[0]], [0, W_out], [1, W_f]])),
          'c_tile=1', 'reads taps 0..1 of channel tile 0; it should read taps 0..1 of channel tile 1')
    wrong(check_filter_view(lambda f, T, c, W_out, W_f: f.ap([[0, f.shape[0]], [0, W_out], [1, W_f]], offset=c * W_f)),
          'AccessPatternError')


# --- exercise 3: one tile ------------------------------------------------------------------------------------------

def views(img_tile, filt_tile, out_tile):
    P, L = img_tile.shape
    W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    return P, L, W_f, W_out, img_tile.ap([[L, P], [1, W_out], [1, W_f]]), filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]])


def transposed_broadcast(img_tile, filt_tile, prod, out_tile):
    P, L, W_f, W_out, win, _ = views(img_tile, filt_tile, out_tile)
    nisa.tensor_tensor(dst=prod, data1=win, data2=filt_tile.ap([[W_f, P], [1, W_f], [0, W_out]]), op=nl.multiply)
    nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=2)


def reduce_axis_1(img_tile, filt_tile, prod, out_tile):
    P, L, W_f, W_out, win, bc = views(img_tile, filt_tile, out_tile)
    nisa.tensor_tensor(dst=prod, data1=win, data2=bc, op=nl.multiply)
    nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=1)


def one_position_at_a_time(img_tile, filt_tile, prod, out_tile):
    P, L, W_f, W_out, _, _ = views(img_tile, filt_tile, out_tile)
    for i in range(W_out):
        nisa.tensor_tensor(dst=prod[:, i:i + 1, :], data1=img_tile.ap([[L, P], [1, 1], [1, W_f]], offset=i),
                           data2=filt_tile.ap([[W_f, P], [0, 1], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, 1]], offset=i), op=nl.add, data=prod[:, i:i + 1, :], axis=2)


def max_instead_of_add(img_tile, filt_tile, prod, out_tile):
    P, L, W_f, W_out, win, bc = views(img_tile, filt_tile, out_tile)
    nisa.tensor_tensor(dst=prod, data1=win, data2=bc, op=nl.multiply)
    nisa.tensor_reduce(dst=out_tile, op=nl.maximum, data=prod, axis=2)


def no_reduce(img_tile, filt_tile, prod, out_tile):
    P, L, W_f, W_out, win, bc = views(img_tile, filt_tile, out_tile)
    nisa.tensor_tensor(dst=prod, data1=win, data2=bc, op=nl.multiply)


def on_the_pe_array(img_tile, filt_tile, prod, out_tile):
    conv1d_tile_solution(img_tile, filt_tile, prod, out_tile)
    P = img_tile.shape[0]
    ps = nl.ndarray((1, 1), nl.float32, buffer=nl.psum, name='ps')
    nisa.nc_matmul(dst=ps, stationary=img_tile.ap([[img_tile.shape[1], P], [1, 1]]),
                   moving=img_tile.ap([[img_tile.shape[1], P], [1, 1]]))


def test_conv1d_tile_wrong_answers():
    r = wrong(check_conv1d_tile(transposed_broadcast),
              'output position 0 of partition 0 sums x[0]*w[0] + x[1]*w[0] + x[2]*w[0]; its window is x[0]*w[0] + x[1]*w[1] + x[2]*w[2]',
              'comes from instruction 0:', 'filt_tile[sbuf][[3, 2], [1, 3], [0, 8]]', 'filt_tile (the taps) reads the wrong elements')
    assert Image.open(io.BytesIO(r.png)).size[0] <= 900
    wrong(check_conv1d_tile(reduce_axis_1), 'your code raised SimulatorError in',
          'nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=1)', 'only trailing free axes can be reduced',
          'The last instruction that ran before it: p0 Vector tensor_tensor')
    wrong(check_conv1d_tile(one_position_at_a_time), 'the numbers are right, but your code issued 8 tensor_tensor and 8 '
          'tensor_reduce instructions; the exercise is the whole tile in one multiply and one reduce')
    wrong(check_conv1d_tile(max_instead_of_add), 'is reduced with nl.maximum (instruction 1); a convolution adds its products: op=nl.add')
    wrong(check_conv1d_tile(no_reduce), 'output position 0 of partition 0 is never written (it is still NaN')
    wrong(check_conv1d_tile(on_the_pe_array), 'the numbers are right, but instruction 2 (nc_matmul) runs on the PE array')


# --- exercise 4: the channel tiles of program p -----------------------------------------------------------------

def test_program_channels_wrong_answers():
    wrong(check_program_channels(lambda C, k, pid: [(t * 128, (t + 1) * 128) for t in range(pid * div_ceil(div_ceil(C, 128), k),
                                                                                           (pid + 1) * div_ceil(div_ceil(C, 128), k))]),
          'program 1 computes channels 256..299 (1 tile: 44 channels); yours gives it channels 256..511 (2 tiles)',
          'There is no channel 300 or above')
    def floor_division(C, k, pid):                       # tiles_per_core rounded down: the last tile belongs to nobody
        tpc = div_ceil(C, 128) // k
        return [(t * 128, min(C, (t + 1) * 128)) for t in range(pid * tpc, (pid + 1) * tpc)]
    wrong(check_program_channels(floor_division), 'C=300, num_programs=2',
          'program 0 computes channels 0..255 (2 tiles); yours gives it channels 0..127 (1 tile)',
          'yours never computes channel 256')
    def idle_gets_the_last_tile(C, k, pid):
        rs = program_channels_solution(C, k, pid)
        return rs or [(128 * (div_ceil(C, 128) - 1), C)]
    wrong(check_program_channels(idle_gets_the_last_tile), 'program 3 is idle: its trace shows no instruction',
          'yours gives it channels 256..299', 'more than once')
    wrong(check_program_channels(lambda C, k, pid: 2), 'returned 2; return a list of (first channel, end channel) pairs')
    wrong(check_program_channels(lambda C, k, pid: [(0.0, 128)]), 'returned [(0.0, 128)]')


def test_program_channels_reference_is_the_kernel_and_agrees_with_the_plan():
    for C, k in [(1, 1), (128, 3), (129, 2), (300, 4), (700, 5), (1000, 3), (1025, 8)]:
        got = _kernel_channels(C, k)
        plan = {r.pid: [] if r.idle else [(t * 128, min(C, (t + 1) * 128)) for t in range(r.start_tile, r.end_tile)]
                for r in spmd_tile_table(C, k)}
        assert got == plan, (C, k)


# --- exercise 5: the f-packing chunk loop -----------------------------------------------------------------------

def chunks(fn):
    "A chunk loop that calls fn(base, num_valid, F, ...) per chunk, with the views of the solution."
    def run(img_tile, filt_tile, prod, out_tile):
        P, L = img_tile.shape
        W_f, W_out, F = filt_tile.shape[1], out_tile.shape[1], prod.shape[1]
        fn(img_tile, filt_tile, prod, out_tile, P, L, W_f, W_out, F)
    return run


@chunks
def no_tail_clamp(img_tile, filt_tile, prod, out_tile, P, L, W_f, W_out, F):
    for base in range(0, W_out, F):
        nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [1, F], [1, W_f]], offset=base),
                           data2=filt_tile.ap([[W_f, P], [0, F], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, F]], offset=base), op=nl.add, data=prod, axis=2)


@chunks
def stops_a_chunk_early(img_tile, filt_tile, prod, out_tile, P, L, W_f, W_out, F):
    for base in range(0, W_out - F, F):
        nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [1, F], [1, W_f]], offset=base),
                           data2=filt_tile.ap([[W_f, P], [0, F], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, F]], offset=base), op=nl.add, data=prod, axis=2)


@chunks
def window_not_moved(img_tile, filt_tile, prod, out_tile, P, L, W_f, W_out, F):
    for base in range(0, W_out, F):
        n = min(F, W_out - base)
        nisa.tensor_tensor(dst=prod[:, :n, :], data1=img_tile.ap([[L, P], [1, n], [1, W_f]]),
                           data2=filt_tile.ap([[W_f, P], [0, n], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, n]], offset=base), op=nl.add, data=prod[:, :n, :], axis=2)


@chunks
def half_chunks(img_tile, filt_tile, prod, out_tile, P, L, W_f, W_out, F):
    F = max(1, F // 2)
    for base in range(0, W_out, F):
        n = min(F, W_out - base)
        nisa.tensor_tensor(dst=prod[:, :n, :], data1=img_tile.ap([[L, P], [1, n], [1, W_f]], offset=base),
                           data2=filt_tile.ap([[W_f, P], [0, n], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, n]], offset=base), op=nl.add, data=prod[:, :n, :], axis=2)


def test_chunk_loop_wrong_answers():
    wrong(check_chunk_loop(no_tail_clamp), 'your code raised AccessPatternError in',
          "nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [1, F], [1, W_f]], offset=base),",
          "tensor 'img_tile'", 'offset=342')
    wrong(check_chunk_loop(stops_a_chunk_early), 'W_out=400, F=171', 'output position 342 of partition 0 is never written')
    r = wrong(check_chunk_loop(window_not_moved), 'output position 171 of partition 0 sums x[0]*w[0] + x[1]*w[1] + x[2]*w[2]; '
              'its window is x[171]*w[0] + x[172]*w[1] + x[173]*w[2]',
              'the reduce writes where it should, but the multiply, instruction 2:', 'Check the offset of its view of img_tile')
    assert Image.open(io.BytesIO(r.png)).size[0] <= 900
    wrong(check_chunk_loop(half_chunks), 'the numbers are right, but your code issued 5 multiplies and 5 reduces; '
          'f-packing takes div_ceil(W_out, F) = div_ceil(400, 171) = 3 chunks')


# --- exercise 6: an LHS-dilated row --------------------------------------------------------------------------------

def test_dilated_row_wrong_answers():
    def no_memset(row, dilated, dil, pl):
        nisa.dma_copy(dst=dilated.ap([[dilated.shape[1], row.shape[0]], [dil, row.shape[1]]], offset=pl), src=row)
    wrong(check_dilated_row(no_memset), 'position 0 of partition 0 is padding and should be 0; it holds nothing (it is still NaN',
          'Zero the whole buffer first (nisa.memset)')
    def no_padding(row, dilated, dil, pl):
        nisa.memset(dilated, 0)
        nisa.dma_copy(dst=dilated.ap([[dilated.shape[1], row.shape[0]], [dil, row.shape[1]]], offset=0), src=row)
    wrong(check_dilated_row(no_padding), 'position 0 of partition 0 is padding and should be 0; it holds x[0].',
          'x[0] landed at position 0; it belongs at position 1.', 'Your copy: p0 DMA')
    def step_dil_minus_1(row, dilated, dil, pl):
        nisa.memset(dilated, 0)
        nisa.dma_copy(dst=dilated.ap([[dilated.shape[1], row.shape[0]], [dil - 1, row.shape[1]]], offset=pl), src=row)
    wrong(check_dilated_row(step_dil_minus_1), 'position 2 of partition 0 is an inserted zero and should be 0; it holds x[1].',
          'x[1] landed at position 2; it belongs at position 3.')
    def one_copy_per_sample(row, dilated, dil, pl):
        P, W = row.shape
        nisa.memset(dilated, 0)
        for j in range(W):
            nisa.dma_copy(dst=dilated.ap([[dilated.shape[1], P], [1, 1]], offset=pl + j * dil), src=row.ap([[W, P], [1, 1]], offset=j))
    wrong(check_dilated_row(one_copy_per_sample), 'the result is right, but your code issued memset -> dilated, dma_copy -> dilated, '
          'dma_copy -> dilated', 'the task is one memset of dilated, then one DMA copy from row into it')
    def memset_after(row, dilated, dil, pl):
        nisa.dma_copy(dst=dilated.ap([[dilated.shape[1], row.shape[0]], [dil, row.shape[1]]], offset=pl), src=row)
        nisa.memset(dilated, 0)
    wrong(check_dilated_row(memset_after), 'position 1 of partition 0 should hold x[0]', 'it holds 0 (from the memset, instruction 1)')


# --- exercise 7: one tile of the H window ----------------------------------------------------------------------

def test_h_tile_wrong_answers():
    def literal_last_row(in_H, k_H, H_padding, dil, outer_row, window_size):
        org, load, ip = h_tile_solution(in_H, k_H, H_padding, dil, outer_row, window_size)
        out_H = calc_dilated_dimension(in_H, dil) + sum(H_padding) - k_H + 1
        if outer_row > out_H - H_padding[1]: load = min(load, out_H - outer_row)
        return org, load, ip
    r = wrong(check_h_tile(literal_last_row), 'in_H=3, k_H=5, H_padding=(3, 3), dil_H_lhs=1, outer_row=4, window_size=1',
              'Buffer row 1 (dilated row 5) should hold image row 2; yours holds zeros.', 'what the literal bookkeeping does on that path')
    assert Image.open(io.BytesIO(r.png)).size[0] <= 900
    def off_by_one(*a):
        org, load, ip = h_tile_solution(*a)
        return org, load, ip + 1 if load else ip
    wrong(check_h_tile(off_by_one), 'should hold')
    def ignores_padding(in_H, k_H, H_padding, dil, outer_row, window_size):
        return h_tile_solution(in_H, k_H, (0, H_padding[1]), dil, outer_row, window_size)
    wrong(check_h_tile(ignores_padding), 'Buffer row')
    wrong(check_h_tile(lambda *a: (0, 1)), 'return three integers, (org_image_index, load_h_size, i_padding)')
    wrong(check_h_tile(lambda *a: (5, 3, 0)), 'the image has rows 0..2')
    wrong(check_h_tile(lambda *a: (0, 1, 99)), 'the tile never reads it')


def test_h_tile_check_agrees_with_chapter_13_on_the_literal_plan():
    "The literal plan's tiles as answers: a tile is refused for a missing or misplaced row exactly where chapter 13's"
    " plan_errors finds wrong output rows; otherwise only for the extra row it loads below its span (harmless there)."
    shapes_with_wrong_rows = shapes_with_only_an_extra_row = 0
    for seed in range(6):
        for in_H, k_H, pads, dil, m in _h_cases(np.random.default_rng(seed)):
            literal = {t.outer_row: t for t in h_window_plan(in_H, k_H, pads, dil, m, 'literal')}
            fixed = h_window_plan(in_H, k_H, pads, dil, m, 'fixed')
            if [t.outer_row for t in fixed] != sorted(literal): continue       # the same tiling, so answers line up
            def answer(in_H_, k_H_, pads_, dil_, outer_row, window_size):
                t = literal[outer_row]
                return (t.org_image_index, t.load_h_size, t.i_padding) if t.loads else (0, 0, 0)
            msgs = [' '.join(v.message.split()) for t in fixed if t.window_size > 0
                    for v in [_h_tile_verdict(Grader('13.2', answer, False, 0, 'check_h_tile'), (in_H, k_H, pads, dil, m), t.outer_row,
                                      t.window_size)] if v]
            wrong_rows = bool(plan_errors(in_H, k_H, pads, dil, m, 'literal'))
            assert any('should hold' in x for x in msgs) == wrong_rows, (in_H, k_H, pads, dil, m, msgs)
            assert all('should hold' in x or 'the tile never reads it' in x for x in msgs)
            shapes_with_wrong_rows += wrong_rows
            shapes_with_only_an_extra_row += bool(msgs) and not wrong_rows
    assert shapes_with_wrong_rows > 0 and shapes_with_only_an_extra_row > 0


# --- the machinery -----------------------------------------------------------------------------------------------

def test_dataflow_follows_memset_copy_multiply_and_reduce():
    with use_core(NeuronCore()), trace() as tr:
        a = nl.ndarray((1, 3), nl.float32, buffer=nl.sbuf, name='a')
        b = nl.ndarray((1, 3), nl.float32, buffer=nl.sbuf, name='b')
        s = nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf, name='s')
        a.write(np.ones((1, 3)))
        nisa.memset(b, 0)
        nisa.dma_copy(dst=b.ap([[3, 1], [1, 2]], offset=1), src=a.ap([[3, 1], [1, 2]]))
        nisa.tensor_tensor(dst=b, data1=b, data2=a, op=nl.multiply)
        nisa.tensor_reduce(dst=s, op=nl.add, data=b, axis=1)
    f = dataflow(tr)
    assert f[(s.id, 0)] == ('reduce', 'add', (('op', 'multiply', ('const', 0.0, 0), ('in', a.id, 0), 2),
                                              ('op', 'multiply', ('in', a.id, 0), ('in', a.id, 1), 2),
                                              ('op', 'multiply', ('in', a.id, 1), ('in', a.id, 2), 2)), 3)


def test_a_check_never_raises_on_odd_answers():
    odd = [lambda *a: 1 / 0, lambda *a: [], lambda *a: 'x', lambda *a: np.zeros(3), lambda *a: nl.ndarray((1, 1), nl.float32)]
    for n, (check, _) in ALL.items():
        for f in odd:
            r = check(f)
            assert r.status == 'wrong', (n, r.message)
    r = check_window_view(lambda *a: 1 / 0)
    assert r.says('your code raised ZeroDivisionError in') and r.says('lambda *a: 1 / 0')


# --- checks that cannot be fooled: the cheats, each rejected with what is wrong ----------------------------

def _conv_by_host(img_tile, filt_tile, prod, out_tile, stride=1):
    "Issue the right instructions, then overwrite the output with a NumPy result read off the tiles."
    x, w = img_tile.numpy(), filt_tile.numpy()
    conv1d_tile_solution(img_tile, filt_tile, prod, out_tile)
    out_tile.write(sum(x[:, k:k + out_tile.shape[1]] * w[:, k:k + 1] for k in range(w.shape[1])))


def _dummy_then_storage(img_tile, filt_tile, prod, out_tile, stride=1):
    "Dummy instructions (every window at element 0), then the right numbers written into the raw storage."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    x, w = img_tile.storage.reshape(P, L), filt_tile.storage.reshape(P, W_f)
    nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [0, W_out], [1, W_f]]),
                       data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply)
    nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=2)
    out_tile.storage[...] = sum(x[:, k:k + stride * (W_out - 1) + 1:stride] * w[:, k:k + 1] for k in range(W_f)).ravel()


def _memset_answers(img_tile, filt_tile, prod, out_tile, stride=1):
    "The right numbers, each put in place by a memset of a constant computed on the host."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    x, w = img_tile.storage.reshape(P, L), filt_tile.storage.reshape(P, W_f)
    ref = sum(x[:, k:k + stride * (W_out - 1) + 1:stride] * w[:, k:k + 1] for k in range(W_f))
    conv1d_tile_solution(img_tile, filt_tile, prod, out_tile) if stride == 1 else None
    for p in range(P):
        for i in range(W_out): nisa.memset(out_tile[p:p + 1, i:i + 1], float(ref[p, i]))


@pytest.mark.parametrize('check', [check_conv1d_tile, check_chunk_loop])
def test_a_host_answer_is_refused(check):
    r = check(_conv_by_host)
    wrong(r, "numpy() of tensor 'img_tile' inside a running kernel")


def test_numbers_not_made_by_the_instructions_are_refused():
    check, call = check_conv1d_tile, (lambda f: lambda a, b, c, d: f(a, b, c, d))
    wrong(check(call(_dummy_then_storage)), 'the numbers are right, but they do not come from your instructions',
          'reads the wrong elements')
    wrong(check(call(_memset_answers)), 'the numbers are right, but they do not come from your instructions',
          'by a memset')


def test_the_chunk_loop_may_not_allocate_the_product_buffer():
    def chunks_in_own_buffer(img_tile, filt_tile, prod, out_tile):
        P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
        F = prod.shape[1]
        big = nl.ndarray((P, W_out, W_f), nl.float32, buffer=nl.sbuf, name='big')
        for base in range(0, W_out, F):
            n = min(F, W_out - base)
            v = big.ap([[W_out * W_f, P], [W_f, n], [1, W_f]], offset=base * W_f)
            nisa.tensor_tensor(dst=v, data1=img_tile.ap([[L, P], [1, n], [1, W_f]], offset=base),
                               data2=filt_tile.ap([[W_f, P], [0, n], [1, W_f]]), op=nl.multiply)
            nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, n]], offset=base), op=nl.add, data=v, axis=2)
    wrong(check_chunk_loop(chunks_in_own_buffer), 'the numbers are right, but your code took 4,800 B per partition of SBUF for tensors of its own (big)',
          'prod (2, 171, 3) is the scratch for the products')


def test_a_missing_dst_offset_blames_the_reduce_and_a_wrong_reduce_view_says_so():
    def no_dst_offset(img_tile, filt_tile, prod, out_tile):
        P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
        for base in range(0, W_out, prod.shape[1]):
            n = min(prod.shape[1], W_out - base)
            nisa.tensor_tensor(dst=prod[:, :n, :], data1=img_tile.ap([[L, P], [1, n], [1, W_f]], offset=base),
                               data2=filt_tile.ap([[W_f, P], [0, n], [1, W_f]]), op=nl.multiply)
            nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, n]]), op=nl.add, data=prod[:, :n, :], axis=2)
    r = wrong(check_chunk_loop(no_dst_offset), 'That is the sum of output position 342: the products are right, but the reduce',
              "Check its dst's offset")
    assert not r.says('reads the wrong elements')
    def reduce_view_transposed(img_tile, filt_tile, prod, out_tile):
        P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
        nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [1, W_out], [1, W_f]]),
                           data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod.ap([[W_out * W_f, P], [1, W_out], [W_out, W_f]]), axis=2)
    r = wrong(check_conv1d_tile(reduce_view_transposed), 'Each product is right, but the reduce',
              "it does not read prod the way the multiply")
    assert not r.says('reads the wrong elements')


def test_exercise_6_needs_the_dma_and_exercise_7_the_empty_tile():
    def engine_copy(row, dilated, dil, pl):
        nisa.memset(dilated, 0)
        nisa.tensor_copy(dst=dilated.ap([[dilated.shape[1], row.shape[0]], [dil, row.shape[1]]], offset=pl), src=row)
    wrong(check_dilated_row(engine_copy), 'tensor_copy: src', 'engines read and write only SBUF and PSUM')
    def sloppy_empty(in_H, k_H, H_padding, dil, outer_row, window_size):
        org, load, ip = h_tile_solution(in_H, k_H, H_padding, dil, outer_row, window_size)
        return (org, load, ip) if load else (5, 0, 2)
    wrong(check_h_tile(sloppy_empty), 'the task asks for (0, 0, 0) for such a tile; you returned (5, 0, 2)')


def test_import_star_gives_a_stub_what_it_needs_and_no_solution():
    ns = {}
    exec('from dwlit.exercises import *', ns)
    assert {'NotDone', 'reveal_solution', 'progress', 'check_window_view', 'check_h_tile_rows'} <= set(ns)
    assert not [k for k in ns if k.endswith('_solution') and k != 'reveal_solution']
    exec("def window_view(img_full, T, image_size, c_tile, W_out, W_f):\n"
         "    P = img_full.shape[0]\n"
         "    return img_full.ap([[T * image_size, P], [1, W_out], [1, W_f]], offset=c_tile * image_size)\n"
         "r = check_window_view(window_view, show=False)", ns)
    assert ns['r'].passed
    assert progress(ns).splitlines() == [progress(ns).splitlines()[0]] and progress(ns).endswith('passed')


def test_a_check_without_matplotlib_answers_in_words(monkeypatch):
    "The main job installs no matplotlib: a wrong answer's verdict is then text only, never an ImportError."
    import sys
    monkeypatch.setitem(sys.modules, 'matplotlib', None)          # `import matplotlib` now raises ImportError
    r = check_window_view(lambda f, T, s, c, W_out, W_f: f.ap([[T * s, f.shape[0]], [W_f, W_out], [1, W_f]], offset=c * s))
    assert (r.status, r.png) == ('wrong', None) and r.says('it should read elements 1..3') and not r.says('picture')
    r = check_chunk_loop(lambda *a: nisa.memset(a[3], 0.0))
    assert (r.status, r.png) == ('wrong', None)


def test_progress_of_a_chapter():
    lines = progress({'h_tile': h_tile_solution, 'dilate_row': 3}, chapter=13).splitlines()
    assert [l.split()[0] for l in lines] == ['13.1', '13.2']                 # the chapter's exercises, one line each
    assert lines[0].endswith('dilate_row is not a function') and lines[1].endswith('passed')
    assert progress({'conv1d_chunks': conv1d_tile_solution}).split()[-1] == 'wrong'
    with pytest.raises(SimulatorError, match='chapter 30 has no exercises'): progress({}, chapter=30)   # an appendix
    with pytest.raises(TypeError, match='answers must be a dict'): progress([1])


def test_reveal_solution(capsys):
    reveal_solution('8.1')
    assert 'def filter_view_solution(' in capsys.readouterr().out
    for n, name in (('8.2', 'conv1d_tile_solution'), ('13.2', 'h_tile_solution')):
        reveal_solution(n)
        assert f'def {name}(' in capsys.readouterr().out
    with pytest.raises(SimulatorError, match=r"n must be the number of an exercise, one of '1.1', '2.1', '3.1'"): reveal_solution('5.9')
    with pytest.raises(TypeError, match="write it as a string, '8.1'"): reveal_solution(8.1)
    with pytest.raises(TypeError, match="numbered chapter.k as strings"): reveal_solution(8)
    with pytest.raises(TypeError): reveal_solution(True)
