"""The design chapters' exercise checks (chapters 15-24, appendix 35d): each passes its solution on fresh random
cases and on replayed seeds, says 'not done yet' for a stub, refuses bad arguments by name, and fails at least one
plausible wrong answer per exercise with the message that names the rule it broke (matched by phrase)."""
import json
import math
import time
from pathlib import Path

import numpy as np
import pytest

from dwlit import nisa, nl
from dwlit.exercises import EXERCISES, NotDone, reveal_solution
from dwlit.exercises import designs as D
from dwlit.sim import SimulatorError

NBS = Path(__file__).resolve().parent.parent / 'nbs'
ALL = {n: (e.check, e.solution) for n, e in EXERCISES.items() if e.check.__module__ == 'dwlit.exercises.designs'}


def wrong(result, *phrases):
    "Assert `result` is a wrong-answer verdict whose message holds every phrase; return it."
    assert result.status == 'wrong', result.message
    for p in phrases: assert result.says(p), f"{p!r} not in:\n{result.message}"
    return result


def test_every_design_chapter_has_its_exercises():
    assert {n.split('.')[0] for n in ALL} == {str(c) for c in range(15, 25)}
    assert all(EXERCISES[n].chapter[:2] == n.split('.')[0] for n in ALL)


@pytest.mark.parametrize('n', sorted(ALL))
def test_the_chapter_states_the_exercise_with_its_stub_check_and_hint(n):
    "After 'What we found': '## Exercises', then per exercise its statement, its stub, the check on it, a folded hint."
    e = EXERCISES[n]
    nb = json.loads(next(NBS.glob(f"*/{e.chapter}.ipynb")).read_text())
    src = [''.join(c['source']) for c in nb['cells']]
    found = next(i for i, s in enumerate(src) if '## What we found' in s.splitlines())
    ex = next(i for i, s in enumerate(src) if s.startswith('## Exercises'))
    at = next(i for i, s in enumerate(src) if s.startswith(f"### Exercise {n}: {e.title}"))
    assert found < ex < at
    stub, call, hint = src[at + 1:at + 4]
    assert f"def {e.stub}(" in stub and 'raise NotDone(' in stub and f"import {e.check.__name__}" in stub.replace('(', ' ')
    assert call.strip() == f"{e.check.__name__}({e.stub})"
    assert hint.startswith('<details><summary>Hint</summary>') and hint.rstrip().endswith('</details>')
    out = ''.join(o.get('text', '') or ''.join(o.get('data', {}).get('text/plain', ''))
                  for o in nb['cells'][at + 2].get('outputs', []))
    assert f"Exercise {n} ({e.title}) is not done yet" in ' '.join(out.split())


@pytest.mark.parametrize('n', sorted(ALL))
def test_reveal_solution_prints_the_solution(n, capsys):
    reveal_solution(n)
    assert f"def {EXERCISES[n].solution.__name__}(" in capsys.readouterr().out


# --- every check: the solution passes, fast; a stub is 'not done'; bad arguments refused -----------------------------

@pytest.mark.parametrize('n', sorted(ALL))
def test_solution_passes_on_fresh_and_replayed_cases(n):
    check, solution = ALL[n]
    for seed in (None, None, 0, 1, 2**32 - 1):
        t = time.perf_counter()
        r = check(solution, show=False, seed=seed)
        assert r.passed, r.message
        assert time.perf_counter() - t < 10, f"check {n} took {time.perf_counter() - t:.1f} s"
        if seed is not None: assert f"seed={seed}" in r.message


@pytest.mark.parametrize('n', sorted(ALL))
def test_stub_is_not_done_yet(n):
    check, _ = ALL[n]
    def stub(*args): raise NotDone("write your answer here")
    r = check(stub)
    assert (r.status, r.passed) == ('not done', False)
    assert r.says('is not done yet: stub still raises NotDone (write your answer here)')


@pytest.mark.parametrize('n', sorted(ALL))
def test_bad_arguments_are_refused_by_name(n):
    check, solution = ALL[n]
    with pytest.raises(SimulatorError, match='fn must be your function'): check('my answer')
    with pytest.raises(SimulatorError, match='show must be True or False'): check(solution, show='yes')
    with pytest.raises(SimulatorError, match='seed must be'): check(solution, seed=-1)


@pytest.mark.parametrize('n', sorted(ALL))
def test_an_answer_that_raises_is_wrong_with_its_line(n):
    check, _ = ALL[n]
    def boom(*args): return 1 // 0
    wrong(check(boom, show=False), 'your code raised ZeroDivisionError')


@pytest.mark.parametrize('n', sorted(ALL))
def test_a_seed_replays_the_same_verdict(n):
    check, _ = ALL[n]
    def none(*args): return None
    a, b = check(none, show=False, seed=7), check(none, show=False, seed=7)
    assert a.status == 'wrong' and a.message == b.message


# --- one or more plausible wrong answers per exercise, each told the rule it broke ---------------------------------

def test_15_1_counting_only_the_useful_multiplies():
    def useful_only(N, C, W, W_f, padding):
        W_out = sum(padding) + W - W_f + 1
        return N * W_f, N * C * W_out * W_f
    wrong(D.check_dense_work(useful_only), 'That is what the convolution needs')
    wrong(D.check_dense_work(lambda N, C, W, W_f, p: (W_f, W_f * C * C * (W + sum(p) - W_f + 1))),
          'one nc_matmul per batch element and tap')
    wrong(D.check_dense_work(lambda N, C, W, W_f, p: [N * W_f, 0]), 'return two integers')


def test_15_1_refuses_counting_from_the_trace():
    from dwlit.contenders.dense_pe import pe_macs
    def by_trace(N, C, W, W_f, padding): return pe_macs(None)
    wrong(D.check_dense_work(by_trace), 'your code calls pe_macs')


def test_16_1_forgetting_the_row_packing_and_the_identity():
    def unpacked(C, H, W, N, k_H, k_W, padding):
        out_H = sum(padding[0]) + H - k_H + 1
        loads, K = -(-C // 128) * N, k_H * k_W
        return {'dma_copy': 1 + -(-C // 128) + loads + loads * out_H, 'memset': loads,
                'tensor_tensor': loads * out_H * K, 'nc_matmul': loads * out_H * K, 'tensor_copy': loads * out_H}
    wrong(D.check_identity_counts(unpacked), 'you counted a block per output row')
    def no_identity(*args):
        d = D.identity_counts_solution(*args)
        return {**d, 'dma_copy': d['dma_copy'] - 1}
    wrong(D.check_identity_counts(no_identity), 'the identity once')
    wrong(D.check_identity_counts(lambda *a: {**D.identity_counts_solution(*a), 'tensor_reduce': 1}),
          'you predict 1 tensor_reduce; the kernel issues none')


def test_17_1_wrong_tap_wrong_instruction_and_scratch():
    def first_tap(diag, identity, f_sb, cc, k):
        nisa.tensor_scalar(dst=diag[:cc, :cc], data=identity[:cc, :cc], op0=nl.multiply, operand0=f_sb[:cc, 0:1])
    wrong(D.check_tap_diagonal(first_tap), "your diagonal holds tap 0's filter values")
    def broadcast(diag, identity, f_sb, cc, k):
        nisa.tensor_tensor(dst=diag[:cc, :cc], data1=identity[:cc, :cc],
                           data2=f_sb.ap([[f_sb.shape[1], cc], [0, cc]], offset=k), op=nl.multiply)
    wrong(D.check_tap_diagonal(broadcast), 'instruction 0 is a tensor_tensor')
    def corner_only(diag, identity, f_sb, cc, k):
        nisa.tensor_scalar(dst=diag[:1, :1], data=identity[:1, :1], op0=nl.multiply, operand0=f_sb[:1, k:k + 1])
    wrong(D.check_tap_diagonal(corner_only), 'is never written')
    def on_gpsimd(diag, identity, f_sb, cc, k):
        tmp = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf, name='tmp')
        nisa.tensor_scalar(dst=tmp[:cc, :cc], data=identity[:cc, :cc], op0=nl.multiply, operand0=f_sb[:cc, k:k + 1])
        nisa.tensor_copy(dst=diag[:cc, :cc], src=tmp[:cc, :cc])
    wrong(D.check_tap_diagonal(on_gpsimd), 'the diagonal is right, but')


def test_17_2_tap_groups_and_psum_tiles():
    dc = D.div_ceil
    wrong(D.check_diagonal_counts(lambda N, C, Wo, Wf, d: (dc(C, 128) * Wf, dc(C, 128) * N * Wf * dc(Wo, 512))),
          'are more than the 192 whose float32 diagonals fit')
    wrong(D.check_diagonal_counts(lambda N, C, Wo, Wf, d: (dc(C, 128) * N * dc(Wo, 2048) * Wf, dc(C, 128) * N * Wf * dc(Wo, 512))),
          'diagonals fit in the SBUF share at once')
    def per_block(N, C, Wo, Wf, d):
        built, _ = D.diagonal_counts_solution(N, C, Wo, Wf, d)
        return built, dc(C, 128) * N * Wf * dc(Wo, 2048)
    wrong(D.check_diagonal_counts(per_block), 'one per tap and PSUM tile of up to 512 output positions')
    wrong(D.check_diagonal_counts(lambda *a: D.diagonal_counts_solution(*a)[0]), 'return two integers')


def test_18_1_rows_side_by_side_and_the_wrong_channel():
    def side_by_side(img, n, c, s0, st, Q):
        N, C, _, W = img.shape
        return img.ap([[Q, st], [1, Q]], offset=n * C * W + c * W + s0)
    wrong(D.check_im2col_rows(side_by_side),
          'element [1, 0] of your view reads position 30 of channel 1; it should read position 1 of channel 1')
    def no_batch(img, n, c, s0, st, Q):
        N, C, _, W = img.shape
        return img.ap([[1, st], [1, Q]], offset=c * W + s0)
    wrong(D.check_im2col_rows(no_batch), 'of batch element 0', 'it should read')
    wrong(D.check_im2col_rows(lambda img, n, c, s0, st, Q: [[1, st], [1, Q]]), 'perhaps the pattern itself')


def test_19_1_position_major_and_transposed_axes():
    wrong(D.check_taps_view(lambda prod, K, span, cc, r, out_W: prod.ap([[K * span, cc], [K, r * out_W], [1, K]])),
          'element [0, 0, 1] of your view reads product 1 of tap 0')
    wrong(D.check_taps_view(lambda prod, K, span, cc, r, out_W: prod.ap([[K * span, cc], [span, K], [1, r * out_W]])),
          'it should be')


def test_19_1_refuses_the_whole_tile():
    wrong(D.check_taps_view(lambda prod, K, span, cc, r, out_W: prod), 'returned the whole tensor prod')


def test_20_1_the_bounds_on_copies_and_the_channel_tiles():
    wrong(D.check_replication(lambda C, t: (128 // C, -(-t // max(1, 128 // C)))), 'more copies than taps is no use')
    wrong(D.check_replication(lambda C, t: (max(1, min(t, 128 // C)), -(-t // max(1, min(t, 128 // C))))),
          'ceil(129 / 128) channel tiles = 18')
    from dwlit.analysis.proof import k_replication
    wrong(D.check_replication(lambda C, t: (k_replication(C, t)['r'], k_replication(C, t)['passes'])),
          'your code calls k_replication')


def test_21_1_floor_clock_and_penalty():
    stream = lambda op, N: 2 * N if op == 'multiply' else N
    wrong(D.check_vector_ns(lambda op, N, d: (60 + 100 * d + stream(op, N)) / 1.12), 'no instruction takes fewer than 64 cycles')
    wrong(D.check_vector_ns(lambda op, N, d: max(64, 60 + 100 * d + stream(op, N))), 'that is the time in cycles')
    wrong(D.check_vector_ns(lambda op, N, d: max(64, 160 + stream(op, N)) / 1.12), 'and only then')
    wrong(D.check_vector_ns(lambda op, N, d: max(64, 60 + 100 * d + N) / 1.12), '2N: two inputs share the path')


def test_21_2_latency_engines_and_runs():
    k = lambda P: min(16, -(-P // 8))
    wrong(D.check_load_ns(lambda P, n: 150 + P * 16 / k(P) + P * n * 4 / (k(P) * 27.2)), 'the data lands 2000 ns after that')
    wrong(D.check_load_ns(lambda P, n: 150 + P + P * n * 4 / (16 * 27.2) + 2000), '1 engine, not 16')
    wrong(D.check_load_ns(lambda P, n: 150 + P * 16 + P * n * 4 / (k(P) * 27.2) + 2000), 'cost 16 ns each, shared by its')
    wrong(D.check_load_ns(lambda P, n: 150 + P * 16 / k(P) + P * n / (k(P) * 27.2) + 2000), 'B at 27.2 GB/s per engine')


def test_21_1_refuses_calling_the_model():
    from dwlit.analysis.cost import instruction_cost
    wrong(D.check_vector_ns(lambda op, N, d: instruction_cost(op)), 'your code calls the cost model')


def test_22_1_counting_the_wait_before_the_first_instruction():
    wrong(D.check_vector_idle(lambda s: s.total_ns - s.busy_ns('Vector')),
          "counts the time before the Vector engine's first instruction")
    def busy_not_idle(sched):
        return sum(s.end_ns - s.start_ns for s in sched.slots if s.engine == 'Vector')
    wrong(D.check_vector_idle(busy_not_idle), 'the Vector engine stands idle')


def test_22_1_reference_is_the_gaps_between_slots():
    for seed in range(5):
        rng = np.random.default_rng(seed)
        sched = D.schedule(D._random_program(rng, [('load', 0), ('multiply', 0), ('load', 1), ('multiply', 1)]), 'trn1')
        vs = [s for s in sched.slots if s.engine == 'Vector']
        gap = vs[1].start_ns - vs[0].end_ns
        assert gap > 0 and math.isclose(D._idle_reference(sched)[0], gap)


def test_23_1_ignoring_the_target_and_inverting_the_margin():
    def whole_race(results, dtype, target):
        times = sorted((s.total_ns, name) for (name, d, t), s in results.items())
        return times[0][1], times[1][0] / times[0][0]
    wrong(D.check_race_winner(whole_race, seed=3), 'the question is about')
    def inverted(results, dtype, target):
        name, margin = D.race_winner_solution(results, dtype, target)
        return name, 1 / margin
    wrong(D.check_race_winner(inverted), "That is the runner-up's speed over the winner's")
    def slowest(results, dtype, target):
        times = sorted((s.total_ns, name) for (name, d, t), s in results.items() if (d, t) == (dtype, target))
        return times[-1][1], times[-1][0] / times[-2][0]
    wrong(D.check_race_winner(slowest), 'is the slowest there')


def test_24_1_only_against_the_original_and_swapped_cells():
    def original_only(em, target, dtype):
        v = em.priced('Vector (original)', target, dtype)
        pe = np.minimum.reduce([em.priced(n, target, dtype) for n in em.names if n.startswith('PE')])
        return [(s, w) for i, s in enumerate(em.sizes) for k, w in enumerate(em.widths) if pe[i, k] < v[i, k]]
    wrong(D.check_pe_cells(original_only), 'every design counts')
    wrong(D.check_pe_cells(lambda em, t, d: [(w, s) for s, w in D.pe_cells_solution(em, t, d)]), '(width, size) pairs')
    wrong(D.check_pe_cells(lambda em, t, d: []), 'does not win')


def test_24_1_maps_mix_winners():
    "The drawn maps are not all one colour: a check an empty or a full answer passes would prove nothing."
    shares = []
    for seed in range(40):
        em, times = D._drawn_map(np.random.default_rng(seed), ('1D', '2D')[seed % 2])
        st = np.stack([times[(n, 'trn2', 'bfloat16')] for n in em.names])
        shares.append(np.mean([em.names[i].startswith('PE') for i in st.argmin(axis=0).ravel()]))
    assert 0.2 < np.mean(shares) < 0.8 and min(shares) < 0.5 < max(shares)
