"""The machine chapters' exercise checks (chapters 2-6, appendix 35b): each passes its solution on fresh random cases
and on fixed seeds, says 'not done yet' for a stub, refuses bad arguments by name, and fails plausible wrong answers
with the message that names the rule they break (matched by phrase)."""
import time

import numpy as np
import pytest

from dwlit import nisa, nl
from dwlit.exercises import (
    EXERCISES,
    NotDone,
    check_engine_elements,
    check_free_transpose,
    check_partition_bytes,
    check_row_range,
    check_strided_rows,
)
from dwlit.exercises.machine import (
    _dealt,
    engine_elements_solution,
    partition_bytes_solution,
    strided_rows_solution,
)
from dwlit.kernels.tiling import div_ceil
from dwlit.sim import SimulatorError, SimulatorTypeError

MACHINE = {n: e for n, e in EXERCISES.items() if e.check.__module__ == 'dwlit.exercises.machine'}


def wrong(result, *phrases):
    "Assert `result` is a wrong-answer verdict whose message holds every phrase; return it."
    assert result.status == 'wrong', result.message
    for p in phrases: assert result.says(p), f"{p!r} not in:\n{result.message}"
    return result


def test_the_five_exercises_are_registered_with_their_chapters():
    assert {n: e.chapter for n, e in MACHINE.items()} == {'2.1': '02_memory', '3.1': '03_access_patterns',
                                                         '4.1': '04_instructions', '5.1': '05_trace', '6.1': '06_programs'}


@pytest.mark.parametrize('n', sorted(MACHINE))
def test_solution_passes_on_fresh_and_fixed_cases_in_bounded_time(n):
    e = MACHINE[n]
    for seed in (None, None, 0, 1, 2):
        t = time.perf_counter()
        r = e.check(e.solution, show=False, seed=seed)
        assert r.passed, r.message
        assert time.perf_counter() - t < 5, f"{n} took {time.perf_counter() - t:.1f} s"
        assert f"(seed={r.seed})" in r.message


@pytest.mark.parametrize('n', sorted(MACHINE))
def test_stub_is_not_done_yet(n):
    def stub(*args): raise NotDone("write your answer here")
    r = MACHINE[n].check(stub)
    assert (r.status, r.passed, r.png) == ('not done', False, None)
    assert r.says('is not done yet: stub still raises NotDone (write your answer here)')


@pytest.mark.parametrize('n', sorted(MACHINE))
def test_bad_arguments_are_refused_by_name(n):
    check, name = MACHINE[n].check, MACHINE[n].check.__name__
    with pytest.raises(SimulatorTypeError, match=f"{name}: fn must be your function"): check(42)
    with pytest.raises(SimulatorTypeError, match=f"{name}: show must be True or False"): check(MACHINE[n].solution, show='no')
    with pytest.raises(SimulatorError, match=f"{name}: seed must be"): check(MACHINE[n].solution, seed=-1)


@pytest.mark.parametrize('n', sorted(MACHINE))
def test_a_seed_replays_the_same_verdict(n):
    def off(*args): raise ValueError("boom")
    a, b = (MACHINE[n].check(off, seed=7) for _ in range(2))
    assert a.status == 'wrong' and a.message == b.message and a.says('your code raised ValueError')


# --- 2.1 bytes per partition -------------------------------------------------------------------------------------

def test_partition_bytes_wrong_answers():
    wrong(check_partition_bytes(lambda tiles: sum(int(np.prod(s)) * d.itemsize for s, d in tiles)),
          'your answer is 983,040; the allocator holds 7,680 B in every partition', 'You counted the partition axis')
    wrong(check_partition_bytes(lambda tiles: sum(int(np.prod(s[1:])) * 4 for s, _ in tiles)),
          'counted every element as 4 bytes')
    wrong(check_partition_bytes(lambda tiles: sum(int(np.prod(s[1:])) for s, _ in tiles)), 'elements, not bytes')
    wrong(check_partition_bytes(lambda tiles: float(partition_bytes_solution(tiles))), 'return the number of bytes, an integer')
    # the largest tile only, as if the allocator reused the room: right on one tile, wrong on two
    wrong(check_partition_bytes(lambda tiles: max(int(np.prod(s[1:])) * d.itemsize for s, d in tiles)),
          'the allocator holds 1,316 B')


# --- 3.1 swapping the free axes ----------------------------------------------------------------------------------

def test_free_transpose_wrong_answers():
    reshape = lambda t: t.ap([[t.shape[1] * t.shape[2], t.shape[0]], [t.shape[1], t.shape[2]], [1, t.shape[1]]])
    wrong(check_free_transpose(reshape), 'element [0, 0, 1] of your view reads t[0, 0, 1]; it should read t[0, 1, 0]',
          'that is a reshape to (P, B, A), not a transpose')
    wrong(check_free_transpose(lambda t: t.ap([[t.shape[1] * t.shape[2], t.shape[0]], [t.shape[2], t.shape[1]], [1, t.shape[2]]])),
          'has shape (2, 3, 4); it should be (P, B, A) = (2, 4, 3)')
    wrong(check_free_transpose(lambda t: t), 'returned the tile t itself')
    wrong(check_free_transpose(lambda t: t.numpy().transpose(0, 2, 1)), 'not a view')
    # the partition step left at B: an error of the simulator's, shown with the answer's line
    wrong(check_free_transpose(lambda t: t.ap([[t.shape[2], t.shape[0]], [1, t.shape[2]], [t.shape[2], t.shape[1]]])),
          'your code raised AccessPatternError')


# --- 4.1 the range of each row ------------------------------------------------------------------------------------

def _range(first, second, op=nl.subtract, engine=None):
    "A row-range answer: reduce into out with `first`, into tmp with `second`, then out op tmp."
    def answer(a, tmp, out):
        nisa.tensor_reduce(dst=out, op=first, data=a, axis=1)
        nisa.tensor_reduce(dst=tmp, op=second, data=a, axis=1)
        kw = {} if engine is None else dict(engine=engine)
        nisa.tensor_tensor(dst=out, data1=out, data2=tmp, op=op, **kw)
    return answer


def test_row_range_wrong_answers():
    wrong(check_row_range(_range(nl.minimum, nl.maximum)), 'that is min - max')
    wrong(check_row_range(_range(nl.maximum, nl.minimum, nl.add)), 'that is max + min: op=nl.subtract')
    wrong(check_row_range(_range(nl.maximum, nl.maximum)), 'that is 0: both reductions took the same op')
    wrong(check_row_range(lambda a, tmp, out: None), 'it is NaN, never written')
    wrong(check_row_range(_range(nl.maximum, nl.minimum, engine=nisa.engine.gpsimd)),
          'the numbers are right, but instruction 2 (tensor_tensor) runs on the GpSimd engine')


def test_row_range_rules_of_a_kernel():
    def own_tiles(a, tmp, out):
        nisa.tensor_tensor(dst=out, data1=nl.max(a, axis=1, keepdims=True), data2=nl.min(a, axis=1, keepdims=True),
                           op=nl.subtract)
    wrong(check_row_range(own_tiles), 'the numbers are right, but your code took', 'tmp (P, 1) holds one reduction')
    def scribbles(a, tmp, out):
        _range(nl.maximum, nl.minimum)(a, tmp, out)
        nisa.tensor_tensor(dst=a[:, 0:1], data1=out, data2=out, op=nl.add)
    wrong(check_row_range(scribbles), 'writes a, an input')
    def four(a, tmp, out):
        _range(nl.maximum, nl.minimum)(a, tmp, out)
        nisa.tensor_tensor(dst=out, data1=out, data2=out, op=nl.maximum)
    wrong(check_row_range(four), 'your code issued 4 instructions', 'the range takes three')


def test_row_range_numbers_must_come_from_the_instructions():
    def forged(a, tmp, out):
        nisa.memset(out, 0.0)                                   # a trace that does not compute the range ...
        x = a.storage.reshape(a.shape)                          # ... and the storage, written behind the simulator's back
        out.storage[:] = x.max(1) - x.min(1)
    wrong(check_row_range(forged), 'the numbers are right, but they do not come from your instructions on a')


# --- 5.1 what each engine wrote ------------------------------------------------------------------------------------

def test_engine_elements_wrong_answers():
    streamed = lambda tr: {e: sum(i.partitions * i.free_elems for i in tr.where(engine=e)) for e in tr.engines()}
    wrong(check_engine_elements(streamed), 'You added up partitions x free_elems', 'count the destination')
    wrong(check_engine_elements(lambda tr: tr.engines()), 'You counted the instructions')
    wrong(check_engine_elements(lambda tr: {**engine_elements_solution(tr), 'Sync': 1}), 'no instruction of the trace ran on it')
    wrong(check_engine_elements(lambda tr: sum(engine_elements_solution(tr).values())), 'return a dict')
    # the address span of the destination (lo..hi): right for whole tiles, wrong for a memset of some columns
    span = lambda tr: {e: sum(i.dst.hi - i.dst.lo + 1 for i in tr.where(engine=e)) for e in tr.engines()}
    assert any(check_engine_elements(span, seed=s).status == 'wrong' for s in range(3))


def test_engine_elements_accepts_zeros_for_idle_engines():
    r = check_engine_elements(lambda tr: {'GpSimd': 0, 'Scalar': 0, **engine_elements_solution(tr)})
    assert r.passed, r.message


# --- 6.1 the rows of program p ---------------------------------------------------------------------------------------

def test_strided_rows_wrong_answers():
    def block(C, n, p):
        T, per = div_ceil(C, 128), div_ceil(div_ceil(C, 128), n)
        return [(t * 128, min(C, (t + 1) * 128)) for t in range(p * per, min(T, (p + 1) * per))]
    wrong(check_strided_rows(block), 'program 0 handles rows 0..127, 256..299; yours gives it rows 0..127, 128..255',
          'a contiguous block of tiles')
    wrong(check_strided_rows(lambda C, n, p: [(c, c + 128) for c in range(p * 128, C, n * 128)]), 'There is no row 300')
    wrong(check_strided_rows(lambda C, n, p: (p * 128, (p + 1) * 128)), 'return a list of (first row, end row) pairs')
    wrong(check_strided_rows(lambda C, n, p: [(c, min(C, c + 128)) for c in range(p * 128, C, 128)]),
          'program 0 handles rows 0..127, 256..299; yours gives it rows 0..127, 128..255, 256..299')


def test_the_deal_is_the_chapters_double():
    "The reference deals tiles one by one; double's affine_range(pid * P, C, n * P) gives the same tiles."
    for C, n in [(300, 2), (300, 4), (1, 5), (50_000, 64), (129, 3)]:
        assert _dealt(C, n) == {p: strided_rows_solution(C, n, p) for p in range(n)}


# --- answers that do something else than the exercise asks ------------------------------------------------------------

def test_partition_bytes_refuses_asking_the_allocator():
    def ask(tiles):
        from dwlit.sim import NeuronCore, use_core
        with use_core(NeuronCore()) as core:
            held = [nl.ndarray(s, d) for s, d in tiles]
            return core.sbuf.used + 0 * len(held)
    wrong(check_partition_bytes(ask), 'your code calls ndarray, NeuronCore, use_core: it asks the allocator')


def test_engine_elements_gets_its_own_copy_of_the_trace():
    def spoil(tr):
        tr.instructions.clear()
        return {}
    wrong(check_engine_elements(spoil), 'for the DMA engine your answer is 0; its instructions wrote 24 elements')
