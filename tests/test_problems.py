"""The design problems among the kernel chapters' exercises (8.3, 9.2, 11.1, 11.2, 12.1, 12.2, 7.1, 7.2, 14.1):
each check passes its solution on fresh random cases, says 'not done yet' for a stub, and rejects typical mistakes and
cheats with a message that names what is wrong (matched by phrase)."""
import pytest
from test_exercises import wrong  # the same verdict helper as test_exercises (tests/ is on the path)

from dwlit import nisa, nl
from dwlit.exercises import (
    EXERCISES,
    NotDone,
    check_b01f_gather,
    check_definition_loop,
    check_dilated_width,
    check_fewest_programs,
    check_h_tile_rows,
    check_layout_permutation,
    check_program_rows,
    check_rhs_dilated_tile,
    check_tap_chunks,
)
from dwlit.exercises.kernels import (
    conv1d_tap_chunks_solution,
    definition_loop_solution,
    h_tile_rows_solution,
    program_rows_solution,
)
from dwlit.kernels.tiling import div_ceil

PROBLEMS = ['7.1', '7.2', '8.3', '9.2', '11.1', '11.2', '12.1', '12.2', '14.1']


@pytest.mark.parametrize('n', PROBLEMS)
def test_solution_passes_on_many_shapes_and_a_stub_is_not_done(n):
    check, solution = EXERCISES[n].check, EXERCISES[n].solution
    for seed in (None, None, 0, 1, 2):
        r = check(solution, show=False, seed=seed)
        assert r.passed, r.message
    def stub(*args): raise NotDone("write your answer here")
    assert check(stub).status == 'not done'


# --- 8.3: kernel dilation -----------------------------------------------------------------------------------------

def test_rhs_dilation_mistakes():
    def adjacent_taps(img_tile, filt_tile, prod, out_tile, rhs_dil):
        P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
        nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [1, W_out], [1, W_f]]),
                           data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=2)
    wrong(check_rhs_dilated_tile(adjacent_taps), 'its window is x[0]*w[0] + x[2]*w[1] + x[4]*w[2]',
          'img_tile (the row elements) reads the wrong elements')
    def dilated_filter_view(img_tile, filt_tile, prod, out_tile, rhs_dil):      # the step put on the wrong tensor
        P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
        nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [1, W_out], [1, W_f]]),
                           data2=filt_tile.ap([[W_f, P], [0, W_out], [rhs_dil, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=2)
    wrong(check_rhs_dilated_tile(dilated_filter_view), "your code raised AccessPatternError", "tensor 'filt_tile'")
    def per_tap(img_tile, filt_tile, prod, out_tile, rhs_dil):                 # right numbers, W_f multiplies
        P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
        for k in range(W_f):
            nisa.tensor_tensor(dst=prod[:, :, k:k + 1], data1=img_tile.ap([[L, P], [1, W_out], [1, 1]], offset=k * rhs_dil),
                               data2=filt_tile.ap([[W_f, P], [0, W_out], [1, 1]], offset=k), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=2)
    wrong(check_rhs_dilated_tile(per_tap), 'the numbers are right, but your code issued 3 tensor_tensor and 1 tensor_reduce')


# --- 11.1: tap chunks ---------------------------------------------------------------------------------------------

def _chunked(fn):
    "A tap-chunk answer written as fn(..., k0, n) per chunk, the loop around it."
    def answer(img_tile, filt_tile, prod, out_tile, partial):
        for k0 in range(0, filt_tile.shape[1], prod.shape[2]):
            fn(img_tile, filt_tile, prod, out_tile, partial, k0, min(prod.shape[2], filt_tile.shape[1] - k0))
    return answer


def _multiply(img_tile, filt_tile, prod, k0, n, w_offset=None):
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], prod.shape[1]
    nisa.tensor_tensor(dst=prod[:, :, :n], data1=img_tile.ap([[L, P], [1, W_out], [1, n]], offset=k0),
                       data2=filt_tile.ap([[W_f, P], [0, W_out], [1, n]], offset=k0 if w_offset is None else w_offset),
                       op=nl.multiply)


def test_tap_chunk_mistakes():
    @_chunked
    def overwrites(img_tile, filt_tile, prod, out_tile, partial, k0, n):      # every chunk's sum replaces the last
        _multiply(img_tile, filt_tile, prod, k0, n)
        nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod[:, :, :n], axis=2)
    wrong(check_tap_chunks(overwrites), 'output position 0 of partition 0 sums x[6]*w[6]',
          'The products of taps 0, 1, 2, 3, 4, 5 never reach it: a partial sum was overwritten, or not added.')
    @_chunked
    def taps_not_moved(img_tile, filt_tile, prod, out_tile, partial, k0, n):
        _multiply(img_tile, filt_tile, prod, k0, n, w_offset=0)
        nisa.tensor_reduce(dst=out_tile if k0 == 0 else partial, op=nl.add, data=prod[:, :, :n], axis=2)
        if k0: nisa.tensor_tensor(dst=out_tile, data1=out_tile, data2=partial, op=nl.add)
    wrong(check_tap_chunks(taps_not_moved), 'filt_tile (the taps) reads the wrong elements')
    @_chunked
    def full_last_chunk(img_tile, filt_tile, prod, out_tile, partial, k0, n):  # forgets that the last chunk is shorter
        _multiply(img_tile, filt_tile, prod, k0, prod.shape[2])
    wrong(check_tap_chunks(full_last_chunk), 'your code raised AccessPatternError')
    def own_buffer(img_tile, filt_tile, prod, out_tile, partial):             # right numbers from a buffer of its own
        P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
        big = nl.ndarray((P, W_out, W_f), nl.float32, buffer=nl.sbuf, name='big')
        nisa.tensor_tensor(dst=big, data1=img_tile.ap([[L, P], [1, W_out], [1, W_f]]),
                           data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile, op=nl.add, data=big, axis=2)
    wrong(check_tap_chunks(own_buffer), 'the numbers are right, but your code took', 'of SBUF for tensors of its own (big)')
    def host_answer(img_tile, filt_tile, prod, out_tile, partial):
        conv1d_tap_chunks_solution(img_tile, filt_tile, prod, out_tile, partial)
        out_tile.write(out_tile.numpy())
    wrong(check_tap_chunks(host_answer), "numpy() of tensor 'out_tile' inside a running kernel")
    def copied_in(img_tile, filt_tile, prod, out_tile, partial):             # the right sums, then copies the budget has no room for
        conv1d_tap_chunks_solution(img_tile, filt_tile, prod, out_tile, partial)
        nisa.tensor_copy(dst=partial, src=out_tile); nisa.tensor_copy(dst=out_tile, src=partial)
    wrong(check_tap_chunks(copied_in), 'the numbers are right, but instruction', 'is a tensor_copy; this exercise')


# --- 12.1: the b01f gather ----------------------------------------------------------------------------------------

def test_b01f_gather_mistakes():
    wrong(check_b01f_gather(lambda C, H, W, N, c0, cc, n, h0, lh: ([[1, cc], [W * C, lh], [C, W]], c0)),
          'With N=2, H=3, W=4, C=5, c_start=1, c_current=3, n=1', 'reads image element (n, h, w, c) = (0, 0, 0, 1)',
          'it should read (n, h, w, c) = (1, 1, 0, 1)')
    wrong(check_b01f_gather(lambda C, H, W, N, c0, cc, n, h0, lh: ([[C, W], [W * C, lh], [1, cc]], 0)),
          'has shape (4, 2, 3); it should be (c_current, load_h_size, W) = (3, 2, 4)')
    wrong(check_b01f_gather(lambda *a: [[1, 1]]), 'returned [[1, 1]]; return (pattern, offset)')
    wrong(check_b01f_gather(lambda C, H, W, N, c0, cc, n, h0, lh: ([[1, cc], [W * C, lh], [C, W]], 10**6)),
          'your code raised AccessPatternError')


# --- 9.2: output rows over programs ------------------------------------------------------------------------------

def test_program_rows_mistakes():
    def ceiling(out_H, n, pid):
        per = div_ceil(out_H, n); a = min(pid * per, out_H)
        return a, min(a + per, out_H)
    wrong(check_program_rows(ceiling), 'program 3 gets 1 row(s) while program 0 gets 3')
    wrong(check_program_rows(lambda out_H, n, pid: (0, out_H)), 'program 1 gets rows 0..9, but rows 10 onwards are the next')
    wrong(check_program_rows(lambda out_H, n, pid: (pid * (out_H // n), (pid + 1) * (out_H // n))),
          'rows 8..9 are computed by no program')
    wrong(check_program_rows(lambda out_H, n, pid: [0, out_H]), 'return two integers (first, end)')
    wrong(check_program_rows(lambda out_H, n, pid: (False, True)), 'return two integers (first, end)')
    last_takes_rest = lambda out_H, n, pid: ((out_H // n) * pid, out_H if pid == n - 1 else (out_H // n) * (pid + 1))
    wrong(check_program_rows(last_takes_rest), 'program 0 gets 2 row(s) while program 3 gets 4')
    assert check_program_rows(program_rows_solution).passed


# --- 7.1, 7.2, 11.2, 12.2, 14.1: answers without instructions ---------------------------------------------------

def test_definition_and_width_mistakes():
    def no_stride(x, f, padding, stride, rhs_dilation):
        return definition_loop_solution(x, f, padding, 1, rhs_dilation)
    wrong(check_definition_loop(no_stride), 'stride=2', 'your output has shape')
    def transposed(x, f, padding, stride, rhs_dilation): return definition_loop_solution(x, f, padding, stride, rhs_dilation).T
    wrong(check_definition_loop(transposed), 'it should be (C, W_out)')
    wrong(check_definition_loop(lambda *a: 'x'), 'not an array of numbers')
    wrong(check_dilated_width(lambda W, W_f, padding, d: W * d + sum(padding) - W_f + 1), 'your answer is',
          'zero(s) between neighbours')
    wrong(check_dilated_width(lambda W, W_f, padding, d: 2.0), 'return the number of output positions, an integer')


def test_fewest_programs_mistakes():
    wrong(check_fewest_programs(lambda *a: 64), 'fit too', 'is not the fewest')
    wrong(check_fewest_programs(lambda *a: 0), 'an integer from 1 to')
    def asks_for_advice(N, C, W, W_f, target, dtype):
        from dwlit import conv1d_plan
        return conv1d_plan((N, C, 1, W), (C, 1, 1, W_f), ((0, 0), (0, 0)), 1, target, dtype).fixes
    wrong(check_fewest_programs(asks_for_advice), 'asks the plan for its fix (fixes)')


def test_layout_and_h_tile_rows_mistakes():
    wrong(check_layout_permutation(lambda src, dst: tuple(range(len(src)))), "src='bf01', dst='f01b'",
          'Axis k of the result is axis perm[k] of x')
    wrong(check_layout_permutation(lambda src, dst: (0,)), 'refuses it')
    def calls_it(src, dst):
        from dwlit.kernels.layouts import convert_layout
        return convert_layout
    wrong(check_layout_permutation(calls_it), 'your code calls convert_layout')
    wrong(check_h_tile_rows(lambda in_H, k_H, dil_W, d, isz: h_tile_rows_solution(in_H, k_H, dil_W, d, 4)),
          'itemsize=2', 'with 2-byte elements')
    def no_floor(in_H, k_H, dil_W, d, isz):
        from dwlit.kernels.dilation import calc_inverse_dilated_dimension
        return min(in_H, calc_inverse_dilated_dimension(div_ceil(16384, dil_W * isz), d) - 1)
    wrong(check_h_tile_rows(no_floor), 'in_H=3, k_H=5', 'at least k_H')
    def calls_the_budget(in_H, k_H, dil_W, d, isz):
        from dwlit.kernels.conv2d import h_tile_budget
        return h_tile_budget(in_H, k_H, dil_W, d, dtype_size=isz)[1]
    wrong(check_h_tile_rows(calls_the_budget), 'your code calls h_tile_budget')
    wrong(check_h_tile_rows(lambda *a: None), 'return max_h_tile_size, an integer')
