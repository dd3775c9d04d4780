"""Issue 30, the answers half: wrong answers a third learner wrote to the twelve original exercises that the old checks
accepted, each adapted to the exercise's new number and check, and a few for the exercises added since. Every one must
now be refused, on several seeds (the checks draw new cases at every call), with the rule it breaks named in the
message; every solution must pass. The lookup answers hold tables of the cases the checks draw with seed 0: the best
a table can do. (Exercise 26.1's answers run once chapter 26's checks, `dwlit.exercises.apps`, are in.)"""
import numpy as np
import pytest

from dwlit import nisa, nl
from dwlit.exercises import (
    EXERCISES,
    check_conv1d_tile,
    check_dilated_row,
    check_window_view,
)
from dwlit.exercises.kernels import (
    _channel_cases,
    _gather_cases,
    _h_cases,
    _row_cases,
    _tile_cases,
    b01f_gather_solution,
    conv1d_rhs_dilated_tile_solution,
    conv1d_tile_solution,
    h_tile_solution,
    program_channels_solution,
    program_rows_solution,
)
from dwlit.kernels.dilation import h_window_plan
from dwlit.kernels.tiling import div_ceil

rng0 = lambda: np.random.default_rng(0)
KERNEL_EXERCISES = [n for n, e in EXERCISES.items() if e.check.__module__ == 'dwlit.exercises.kernels']


def psum(shape): return nl.ndarray(shape, nl.float32, buffer=nl.psum, name='mine')
# ---- exercise 1.1: the sliding window view --------------------------------------------------------------------------
def ex1_1_small_T_only(img_full, T, image_size, c_tile, W_out, W_f):
    "Right while T < 4 (the old checks drew T from 1..3): ignores c_tile beyond the third tile."
    P = img_full.shape[0]
    return img_full.ap([[T * image_size, P], [1, W_out], [1, W_f]], offset=min(c_tile, 2) * image_size)


def ex1_1_small_rows_only(img_full, T, image_size, c_tile, W_out, W_f):
    "Right while image_size <= 12 (the old checks drew at most 12): a window step of 2 on longer rows."
    P = img_full.shape[0]
    step = 1 if image_size <= 12 else 2
    return img_full.ap([[T * image_size, P], [step, W_out], [1, W_f]], offset=c_tile * image_size)


# ---- exercise 8.1: the filter broadcast -------------------------------------------------------------------------------
def ex8_1_small_W_out_only(filter_full, T, c_tile, W_out, W_f):
    "Right while W_out <= 8 (drawn from 1..8): steps along the taps instead of broadcasting on longer rows."
    P = filter_full.shape[0]
    return filter_full.ap([[T * W_f, P], [0 if W_out <= 8 else 1, W_out], [1, W_f]], offset=c_tile * W_f)


# ---- exercise 8.2: one tile, one multiply, one reduce -----------------------------------------------------------------
def ex8_2_gpsimd(img_tile, filt_tile, prod, out_tile):
    "The multiply on the GpSimd engine; the lesson asks for the Vector engine."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [1, W_out], [1, W_f]]),
                       data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply, engine=nisa.engine.gpsimd)
    nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=2)


def ex8_2_psum_scratch(img_tile, filt_tile, prod, out_tile):
    "The products in a PSUM tile of the answer's own (prod unused): only SBUF allocations are counted."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    mine = psum((P, W_out, W_f))
    nisa.tensor_tensor(dst=mine, data1=img_tile.ap([[L, P], [1, W_out], [1, W_f]]),
                       data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply)
    nisa.tensor_reduce(dst=out_tile, op=nl.add, data=mine, axis=2)


def ex8_2_wipe_inputs(img_tile, filt_tile, prod, out_tile):
    "Right numbers, then the inputs (and the scratch) wiped: a kernel that destroys what it was given."
    conv1d_tile_solution(img_tile, filt_tile, prod, out_tile)
    nisa.memset(img_tile, 0.0); nisa.memset(filt_tile, 0.0); nisa.memset(prod, float('nan'))


def ex8_2_first_4_partitions(img_tile, filt_tile, prod, out_tile):
    "Computes at most 4 partitions (the old checks used P <= 4)."
    P0, L = img_tile.shape; P = min(P0, 4); W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    nisa.tensor_tensor(dst=prod[:P], data1=img_tile.ap([[L, P], [1, W_out], [1, W_f]]),
                       data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply)
    nisa.tensor_reduce(dst=out_tile[:P], op=nl.add, data=prod[:P], axis=2)


_EX3_CASES = None
def ex8_2_lookup(img_tile, filt_tile, prod, out_tile):
    "Computes only the shapes the check draws with its default seed (a table of the drawn cases); nothing otherwise."
    if (img_tile.shape, filt_tile.shape[1]) not in {((c.P, c.L), c.W_f) for c in _tile_cases(rng0())}: return
    conv1d_tile_solution(img_tile, filt_tile, prod, out_tile)


def ex8_2_psum_reduce_then_copy(img_tile, filt_tile, prod, out_tile):
    "Reduces into a PSUM tile of its own, then copies it to out_tile (one more instruction, memory the lesson does not give)."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [1, W_out], [1, W_f]]),
                       data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply)
    acc = psum((P, W_out))
    nisa.tensor_reduce(dst=acc, op=nl.add, data=prod, axis=2)
    nisa.tensor_copy(dst=out_tile, src=acc)


# ---- exercise 9.1: the channel tiles of program p ------------------------------------------------------------------------
_EX9_1 = None
def ex9_1_lookup(C, num_programs, pid):
    "A table of the check's cases (the fixed ones and those drawn with seed 0); [] for anything else."
    global _EX9_1
    if _EX9_1 is None:
        _EX9_1 = {(C_, k, p): program_channels_solution(C_, k, p) for C_, k in _channel_cases(rng0()) for p in range(k)}
    return _EX9_1.get((C, num_programs, pid), [])


def ex9_1_few_programs_only(C, num_programs, pid):
    "Right for up to 8 programs (the old checks drew 1..8); beyond that, every program takes every tile."
    if num_programs <= 8: return program_channels_solution(C, num_programs, pid)
    return [(t * 128, min(C, t * 128 + 128)) for t in range(div_ceil(C, 128))]


def ex9_1_small_C_only(C, num_programs, pid):
    "Right for C < 1100 (the old checks drew C from 1..1099); the last partial tile is dropped above that."
    r = program_channels_solution(C, num_programs, pid)
    return r if C < 1100 else [t for t in r if t[1] - t[0] == 128]


# ---- exercise 10.1: the f-packing chunk loop ---------------------------------------------------------------------------
def ex10_1_balanced_chunks(img_tile, filt_tile, prod, out_tile):
    "div_ceil(W_out, F) chunks, but balanced (not F positions each): the lesson's chunks are F = div_ceil(512, W_f) wide."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    F = prod.shape[1]; k = div_ceil(W_out, F); size = div_ceil(W_out, k)
    for base in range(0, W_out, size):
        n = min(size, W_out - base)
        nisa.tensor_tensor(dst=prod[:, :n, :], data1=img_tile.ap([[L, P], [1, n], [1, W_f]], offset=base),
                           data2=filt_tile.ap([[W_f, P], [0, n], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, n]], offset=base), op=nl.add, data=prod[:, :n, :], axis=2)


def ex10_1_psum_scratch(img_tile, filt_tile, prod, out_tile):
    "The chunk loop with its products in a PSUM tile of its own (prod unused)."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    F = prod.shape[1]; mine = psum((P, F, W_f))
    for base in range(0, W_out, F):
        n = min(F, W_out - base)
        nisa.tensor_tensor(dst=mine[:, :n, :], data1=img_tile.ap([[L, P], [1, n], [1, W_f]], offset=base),
                           data2=filt_tile.ap([[W_f, P], [0, n], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, n]], offset=base), op=nl.add, data=mine[:, :n, :], axis=2)


def ex10_1_three_chunks_max(img_tile, filt_tile, prod, out_tile):
    "At most three chunks (the old checks' rows needed at most three): the rest of a longer row is never computed."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    F = prod.shape[1]
    for base in list(range(0, W_out, F))[:3]:
        n = min(F, W_out - base)
        nisa.tensor_tensor(dst=prod[:, :n, :], data1=img_tile.ap([[L, P], [1, n], [1, W_f]], offset=base),
                           data2=filt_tile.ap([[W_f, P], [0, n], [1, W_f]]), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, n]], offset=base), op=nl.add, data=prod[:, :n, :], axis=2)


def ex10_1_gpsimd(img_tile, filt_tile, prod, out_tile):
    "The chunk loop with every multiply on GpSimd."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    F = prod.shape[1]
    for base in range(0, W_out, F):
        n = min(F, W_out - base)
        nisa.tensor_tensor(dst=prod[:, :n, :], data1=img_tile.ap([[L, P], [1, n], [1, W_f]], offset=base),
                           data2=filt_tile.ap([[W_f, P], [0, n], [1, W_f]]), op=nl.multiply, engine=nisa.engine.gpsimd)
        nisa.tensor_reduce(dst=out_tile.ap([[W_out, P], [1, n]], offset=base), op=nl.add, data=prod[:, :n, :], axis=2)


# ---- exercise 13.1: an LHS-dilated row ----------------------------------------------------------------------------------
def ex13_1_host_written(row, dilated, dil, W_padding_l):
    "One memset and one DMA from row (into the wrong place), then the right values written by the host into storage."
    P, W = row.shape; L = dilated.shape[1]
    nisa.memset(dilated, 0)
    nisa.dma_copy(dst=dilated[:, :W], src=row)                          # the copy the check counts, anywhere
    x = row.storage.reshape(P, W)                                        # .numpy() is refused; .storage is not
    d = dilated.storage.reshape(P, L); d[...] = 0
    d[:, W_padding_l:W_padding_l + (W - 1) * dil + 1:dil] = x


def ex13_1_host_via_scratch(row, dilated, dil, W_padding_l):
    "The DMA goes to an HBM scratch of its own; the dilated row is filled by the host."
    P, W = row.shape; L = dilated.shape[1]
    scratch = nl.ndarray((P, W), nl.float32, buffer=nl.hbm, name='scratch')
    nisa.memset(dilated, 0)
    nisa.dma_copy(dst=scratch, src=row)
    d = dilated.storage.reshape(P, L)
    d[:, W_padding_l:W_padding_l + (W - 1) * dil + 1:dil] = row.storage.reshape(P, W)


def ex13_1_small_dil_only(row, dilated, dil, W_padding_l):
    "Right for dil <= 4 (the old checks drew 1..4); a step of 4 for anything larger."
    P, W = row.shape; L = dilated.shape[1]
    nisa.memset(dilated, 0)
    nisa.dma_copy(dst=dilated.ap([[L, P], [min(dil, 4), W]], offset=W_padding_l), src=row)


# ---- exercise 13.2: one tile of the H window ---------------------------------------------------------------------------
_EX13_2 = None
def ex13_2_lookup(in_H, k_H, H_padding, dil_H_lhs, outer_row, window_size):
    "A table of every tile the check asks about with its default seed; (0, 0, 0) otherwise."
    global _EX13_2
    if _EX13_2 is None:
        _EX13_2 = {}
        for case in _h_cases(rng0()):
            for t in h_window_plan(*case):
                if t.window_size > 0:
                    key = (case[0], case[1], tuple(case[2]), case[3], t.outer_row, t.window_size)
                    _EX13_2[key] = h_tile_solution(case[0], case[1], case[2], case[3], t.outer_row, t.window_size)
    return _EX13_2.get((in_H, k_H, tuple(H_padding), dil_H_lhs, outer_row, window_size), (0, 0, 0))


def ex13_2_small_dil_only(in_H, k_H, H_padding, dil_H_lhs, outer_row, window_size):
    "Right for dil_H_lhs <= 3 (the old checks drew 1..3); treats larger dilations as 3."
    return h_tile_solution(in_H, k_H, H_padding, min(dil_H_lhs, 3), outer_row, window_size)


def ex13_2_short_images_only(in_H, k_H, H_padding, dil_H_lhs, outer_row, window_size):
    "Right for in_H <= 8 (the old checks drew 1..8); loads one row too few on taller images."
    org, load, ip = h_tile_solution(in_H, k_H, H_padding, dil_H_lhs, outer_row, window_size)
    return (org, max(0, load - 1) if in_H > 8 else load, ip)


# ---- exercise 8.3: kernel dilation by access pattern ------------------------------------------------------------------
def ex8_3_small_dil_only(img_tile, filt_tile, prod, out_tile, rhs_dil):
    "Right for rhs_dil <= 4 (the old checks drew 1..4)."
    conv1d_rhs_dilated_tile_solution(img_tile, filt_tile, prod, out_tile, min(rhs_dil, 4))


def ex8_3_psum_scratch(img_tile, filt_tile, prod, out_tile, rhs_dil):
    "Products in a PSUM tile of its own."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    mine = psum((P, W_out, W_f))
    nisa.tensor_tensor(dst=mine, data1=img_tile.ap([[L, P], [1, W_out], [rhs_dil, W_f]]),
                       data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply)
    nisa.tensor_reduce(dst=out_tile, op=nl.add, data=mine, axis=2)


# ---- exercise 11.1: a filter wider than its scratch ---------------------------------------------------------------------
def ex11_1_psum_scratch(img_tile, filt_tile, prod, out_tile, partial):
    "Tap chunks of K, but products and partial sums in PSUM tiles of its own (prod and partial unused)."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    K = prod.shape[2]; mine, part = psum((P, W_out, K)), psum((P, W_out))
    for k0 in range(0, W_f, K):
        n = min(K, W_f - k0)
        nisa.tensor_tensor(dst=mine[:, :, :n], data1=img_tile.ap([[L, P], [1, W_out], [1, n]], offset=k0),
                           data2=filt_tile.ap([[W_f, P], [0, W_out], [1, n]], offset=k0), op=nl.multiply)
        nisa.tensor_reduce(dst=out_tile if k0 == 0 else part, op=nl.add, data=mine[:, :, :n], axis=2)
        if k0: nisa.tensor_tensor(dst=out_tile, data1=out_tile, data2=part, op=nl.add)


def ex11_1_gpsimd_adds(img_tile, filt_tile, prod, out_tile, partial):
    "The solution with its multiplies and adds on GpSimd."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    K = prod.shape[2]
    for k0 in range(0, W_f, K):
        n = min(K, W_f - k0)
        nisa.tensor_tensor(dst=prod[:, :, :n], data1=img_tile.ap([[L, P], [1, W_out], [1, n]], offset=k0),
                           data2=filt_tile.ap([[W_f, P], [0, W_out], [1, n]], offset=k0), op=nl.multiply,
                           engine=nisa.engine.gpsimd)
        nisa.tensor_reduce(dst=out_tile if k0 == 0 else partial, op=nl.add, data=prod[:, :, :n], axis=2)
        if k0: nisa.tensor_tensor(dst=out_tile, data1=out_tile, data2=partial, op=nl.add, engine=nisa.engine.gpsimd)


# ---- exercise 12.1: a channels-last image's gather ---------------------------------------------------------------------
_EX12_1 = None
def ex12_1_lookup(C, H, W, N, c_start, c_current, n, org_image_index, load_h_size):
    "A table of the check's cases; a fixed wrong view otherwise."
    global _EX12_1
    if _EX12_1 is None:
        _EX12_1 = {tuple(c[:4][i] for i in (3, 1, 2, 0)) + tuple(c[4:]): None for c in _gather_cases(rng0())}
        _EX12_1 = {(cc[3], cc[1], cc[2], cc[0], *cc[4:]): b01f_gather_solution(cc[3], cc[1], cc[2], cc[0], *cc[4:])
                 for cc in _gather_cases(rng0())}
    return _EX12_1.get((C, H, W, N, c_start, c_current, n, org_image_index, load_h_size), ([[1, 1]], 0))


def ex12_1_small_C_only(C, H, W, N, c_start, c_current, n, org_image_index, load_h_size):
    "Right for C <= 4 (the old checks drew 1..4): steps 4 between columns whatever C is."
    pattern = [[1, c_current], [W * C, load_h_size], [min(C, 4), W]]
    return pattern, ((n * H + org_image_index) * W) * C + c_start


# ---- exercise 9.2: output rows shared by SPMD programs ------------------------------------------------------------------
def ex9_2_small_out_H_only(out_H, num_programs, pid):
    "Balanced for out_H < 200 (the old checks drew 1..199); the ceiling rule (unbalanced) above."
    if out_H < 200: return program_rows_solution(out_H, num_programs, pid)
    per = div_ceil(out_H, num_programs); a = min(out_H, pid * per)
    return a, min(out_H, a + per)


def ex9_2_few_programs_only(out_H, num_programs, pid):
    "Balanced for up to 16 programs (the old checks drew 1..16); everything to program 0 beyond."
    if num_programs <= 16: return program_rows_solution(out_H, num_programs, pid)
    return (0, out_H) if pid == 0 else (out_H, out_H)


_EX9_2 = None
def ex9_2_lookup(out_H, num_programs, pid):
    "A table of the check's cases; (0, 0) otherwise."
    global _EX9_2
    if _EX9_2 is None:
        _EX9_2 = {(h, k, p): program_rows_solution(h, k, p) for h, k in _row_cases(rng0()) for p in range(k)}
    return _EX9_2.get((out_H, num_programs, pid), (0, 0))


# ---- exercise 26.1: stride 2 on the Vector engine ------------------------------------------------------------------------
def ex26_1_stride1_then_pick(img_tile, filt_tile, prod, out_tile, stride):
    "Computes every stride-1 position (products and sums in PSUM of its own), then copies every stride-th column."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    W1 = L - W_f + 1
    mine, acc = psum((P, W1, W_f)), psum((P, W1))
    nisa.tensor_tensor(dst=mine, data1=img_tile.ap([[L, P], [1, W1], [1, W_f]]),
                       data2=filt_tile.ap([[W_f, P], [0, W1], [1, W_f]]), op=nl.multiply)
    nisa.tensor_reduce(dst=acc, op=nl.add, data=mine, axis=2)
    nisa.tensor_copy(dst=out_tile, src=acc.ap([[W1, P], [stride, W_out]]))


def ex26_1_stride1_in_prod(img_tile, filt_tile, prod, out_tile, stride):
    "Stride-1 products where they fit the given scratch (a prefix), then picks columns: wrong scratch use, SBUF only."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    W1 = L - W_f + 1
    if W1 * W_f > W_out * W_f * 1: return conv1d_strided_tile_solution(img_tile, filt_tile, prod, out_tile, stride)
    conv1d_strided_tile_solution(img_tile, filt_tile, prod, out_tile, stride)


def ex26_1_small_stride_only(img_tile, filt_tile, prod, out_tile, stride):
    "Right for stride <= 4 (the old checks drew 1..4); stride 4 for anything larger."
    conv1d_strided_tile_solution(img_tile, filt_tile, prod, out_tile, min(stride, 4))


def ex26_1_gpsimd(img_tile, filt_tile, prod, out_tile, stride):
    "The strided multiply on GpSimd; the exercise's title is 'stride 2 on the Vector engine'."
    P, L = img_tile.shape; W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
    nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [stride, W_out], [1, W_f]]),
                       data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply, engine=nisa.engine.gpsimd)
    nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=2)



# ---- exercises added since: answers that call what they are asked to write ---------------------------------------------
def ex7_1_calls_the_reference(x, f, padding, stride, rhs_dilation):
    "Chapter 7's reference instead of the loop."
    from dwlit.kernels.reference import depthwise1d
    return depthwise1d(x[None, :, None, :], f[:, None, None, :], padding, stride, rhs_dilation)[0, :, 0, :]


def ex7_2_no_dilation(W, W_f, padding, lhs_dilation):
    "The width of the undilated row: right only for lhs_dilation = 1."
    return W + sum(padding) - W_f + 1


def ex11_2_one_program(N, C, W, W_f, target, dtype):
    "Always one program: fits the small calls only."
    return 1


def ex12_2_inverse(src, dst):
    "The inverse permutation: where each letter of src goes in dst."
    return tuple(dst.index(letter) for letter in src)


def ex14_1_four_bytes(in_H, k_H, dil_W, dil_H_lhs, itemsize):
    "L841 as written: 4-byte elements whatever the dtype."
    return h_tile_rows_answer(in_H, k_H, dil_W, dil_H_lhs, 4)


def h_tile_rows_answer(in_H, k_H, dil_W, dil_H_lhs, itemsize):
    from dwlit.kernels.conv2d import SBUF_BUDGET_BYTES
    from dwlit.kernels.dilation import calc_inverse_dilated_dimension
    return max(min(in_H, calc_inverse_dilated_dimension(div_ceil(SBUF_BUDGET_BYTES, dil_W * itemsize), dil_H_lhs) - 1), k_H)


# (exercise, wrong answer, phrases of which the message must hold one: the rule it breaks)
WRONG = [
    ('1.1', ex1_1_small_T_only, ('it should read elements',)),
    ('1.1', ex1_1_small_rows_only, ('it should read elements', 'AccessPatternError')),
    ('8.1', ex8_1_small_W_out_only, ('it should read taps', 'AccessPatternError')),
    ('8.2', ex8_2_gpsimd, ('runs on the GpSimd engine',)),
    ('8.2', ex8_2_psum_scratch, ('of PSUM for tensors of its own',)),
    ('8.2', ex8_2_wipe_inputs, ('is a memset; this exercise', 'an input')),
    ('8.2', ex8_2_first_4_partitions, ('is never written',)),
    ('8.2', ex8_2_lookup, ('is never written',)),
    ('8.2', ex8_2_psum_reduce_then_copy, ('is a tensor_copy; this exercise', 'of PSUM for tensors of its own')),
    ('9.1', ex9_1_lookup, ('yours makes it idle', 'yours gives it')),
    ('9.1', ex9_1_few_programs_only, ('yours gives it', 'is idle')),
    ('9.1', ex9_1_small_C_only, ('yours makes it idle', 'yours gives it')),
    ('10.1', ex10_1_balanced_chunks, ("f-packing's chunk",)),
    ('10.1', ex10_1_psum_scratch, ('of PSUM for tensors of its own',)),
    ('10.1', ex10_1_three_chunks_max, ('is never written',)),
    ('10.1', ex10_1_gpsimd, ('runs on the GpSimd engine',)),
    ('13.1', ex13_1_host_written, ('not what your instructions put in dilated',)),
    ('13.1', ex13_1_host_via_scratch, ('not what your instructions put in dilated', 'tensors of its own')),
    ('13.1', ex13_1_small_dil_only, ('landed at position', 'should be 0', 'should hold x[')),
    ('13.2', ex13_2_lookup, ('Buffer row', 'buffer row')),
    ('13.2', ex13_2_small_dil_only, ('Buffer row', 'buffer row')),
    ('13.2', ex13_2_short_images_only, ('Buffer row', 'buffer row')),
    ('8.3', ex8_3_small_dil_only, ('its window is',)),
    ('8.3', ex8_3_psum_scratch, ('of PSUM for tensors of its own',)),
    ('11.1', ex11_1_psum_scratch, ('of PSUM for tensors of its own',)),
    ('11.1', ex11_1_gpsimd_adds, ('runs on the GpSimd engine',)),
    ('12.1', ex12_1_lookup, ('it should be (c_current, load_h_size, W)', 'it should read')),
    ('12.1', ex12_1_small_C_only, ('it should read',)),
    ('9.2', ex9_2_small_out_H_only, ('balanced bands differ by at most one row',)),
    ('9.2', ex9_2_few_programs_only, ('balanced bands differ by at most one row',)),
    ('9.2', ex9_2_lookup, ('computed by no program', 'in program order')),
    ('7.1', ex7_1_calls_the_reference, ('your code calls depthwise1d',)),
    ('7.2', ex7_2_no_dilation, ('zero(s) between neighbours',)),
    ('11.2', ex11_2_one_program, ('it does not fit',)),
    ('12.2', ex12_2_inverse, ('Axis k of the result is axis perm[k] of x',)),
    ('14.1', ex14_1_four_bytes, ('budgeted', 'byte elements')),
]


def says_one(r, phrases) -> bool: return any(r.says(p) for p in phrases)


@pytest.mark.parametrize('n, answer, phrases', WRONG, ids=[f"{n}-{a.__name__}" for n, a, _ in WRONG])
def test_a_wrong_answer_is_refused_with_its_rule(n, answer, phrases):
    check = EXERCISES[n].check
    for seed in (None, 1, 2, 3):          # not 0: a lookup table of seed 0's cases is right there, and only there
        r = check(answer, show=False, seed=seed)
        assert r.status == 'wrong', f"seed={r.seed}: {r.message}"
        assert says_one(r, phrases), f"none of {phrases} in:\n{r.message}"
        assert f"seed={r.seed}" in r.message                  # the verdict says how to replay it


@pytest.mark.parametrize('n', KERNEL_EXERCISES)
def test_the_solution_passes_on_fresh_cases(n):
    e = EXERCISES[n]
    for seed in (None, None, 0, 1):
        r = e.check(e.solution, show=False, seed=seed)
        assert r.passed, r.message


def test_every_kernel_exercise_has_a_hostile_answer():
    assert set(KERNEL_EXERCISES) <= {n for n, *_ in WRONG}


def test_a_check_draws_new_cases_and_a_seed_replays_them():
    seeds = {check_window_view(window_view_off_by_one_on_big_tiles, show=False).seed for _ in range(5)}
    assert len(seeds) == 5                                     # a new seed at every call
    r = check_conv1d_tile(ex8_2_lookup, show=False)
    again = check_conv1d_tile(ex8_2_lookup, show=False, seed=r.seed)
    assert (again.status, again.message) == (r.status, r.message)


def window_view_off_by_one_on_big_tiles(img_full, T, image_size, c_tile, W_out, W_f):
    "Right but for the last of 16 tiles, a case every call includes."
    P = img_full.shape[0]
    return img_full.ap([[T * image_size, P], [1, W_out], [1, W_f]], offset=min(c_tile, 14) * image_size)


def test_a_check_can_fail_on_a_fixed_edge_case_whatever_the_seed():
    for seed in range(5):
        assert check_window_view(window_view_off_by_one_on_big_tiles, show=False, seed=seed).status == 'wrong'


def test_the_dilated_row_is_followed_from_row_not_only_compared():
    r = check_dilated_row(ex13_1_host_written, show=False, seed=1)
    assert r.says('the values are right, but they are not what your instructions put in dilated')


@pytest.fixture
def apps():
    "Chapter 26's checks, once they exist."
    mod = pytest.importorskip('dwlit.exercises.apps')
    if not hasattr(mod, 'conv1d_strided_tile_solution'): pytest.skip("dwlit.exercises.apps has no strided exercise")
    return mod


def test_strided_answers_are_refused(apps):
    global conv1d_strided_tile_solution
    conv1d_strided_tile_solution = apps.conv1d_strided_tile_solution
    check = apps.check_strided_conv1d
    for answer in (ex26_1_stride1_then_pick, ex26_1_small_stride_only, ex26_1_gpsimd):
        for seed in (None, 1, 2):
            assert check(answer, show=False, seed=seed).status == 'wrong'
