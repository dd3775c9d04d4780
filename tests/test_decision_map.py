"""Chapter 24's decision maps (dwlit.analysis.decision_map): they count what they say they count, the verdict agrees
with an independent recount from the traces, every ASSUMED convention is varied, the answer's words follow the numbers,
and bad arguments are refused by name."""
import re

import numpy as np
import pytest

from dwlit.analysis.cost import CONVENTIONS, CostModel, cost_model
from dwlit.analysis.decision_map import (
    MAX_MAP_TRACES,
    VARIANTS,
    answer,
    design_side,
    engine_map,
    flips,
    on_target,
    robustness,
    shapes_won,
    verdict,
    win_counts,
    win_table,
)
from dwlit.analysis.race import TUNED
from dwlit.analysis.timeline import predict
from dwlit.sim import SimulatorError, SimulatorTypeError


@pytest.fixture(scope='module')
def small_1d():
    return engine_map('1D', sizes=(3,), widths=(16, 32), names=('Vector (original)', 'PE, diagonal weights'))


def test_map_counts_and_sensitivity(small_1d):
    em = small_1d
    wc = win_counts(em)
    assert set(wc) == {(t, d) for t in ('trn1', 'trn2', 'trn3') for d in ('float32', 'bfloat16')}
    assert all(sum(c.values()) == 2 for c in wc.values())
    # the winner is the contender with the smallest predicted time, recomputed here by hand
    t_vec = predict(em.traces[('Vector (original)', 3, 32, 'float32')], 'trn1').total_ns
    t_pe = predict(em.traces[('PE, diagonal weights', 3, 32, 'float32')], 'trn1').total_ns
    assert em.winners('trn1', 'float32')[0][0, 1] == (0 if t_vec < t_pe else 1)
    rob = robustness(em, {'same': {'nothing': {}}, 'slow PE': {'1000x': dict(pe_columns_per_cycle=0.001)}})
    assert (rob[('trn1', 'float32')].by_variant[('same', 'nothing')] == rob[('trn1', 'float32')].base).all()
    assert all(r.deciders[i, j] <= {'slow PE'} for r in rob.values() for i in range(1) for j in range(2))
    fl = flips(em, rob)
    assert fl[('same', 'nothing')] == (0, 0) and fl[('slow PE', '1000x')][0] == 0      # a slower PE array moves nothing to it
    assert fl[('slow PE', '1000x')][1] == sum(c['PE, diagonal weights'] for c in win_counts(em).values())
    assert win_table(em).count('\n') == 1 + 6


def test_a_map_of_one_dtype_is_priced_on_that_dtype():
    em = engine_map('1D', sizes=(3,), widths=(16,), dtypes=('float32',), names=('Vector (original)', 'PE, diagonal weights'))
    assert em.dtypes == ('float32',)
    rob = robustness(em, {'same': {'nothing': {}}})
    assert set(rob) == {(t, 'float32') for t in ('trn1', 'trn2', 'trn3')}
    with pytest.raises(SimulatorError, match="dtype must be one of 'float32'"): em.priced('Vector (original)', 'trn1', 'bfloat16')


def test_every_assumed_convention_is_varied():
    assumed = {f for f, (s, _, _) in CONVENTIONS.items() if s == 'ASSUMED'}
    assert set(VARIANTS) == assumed
    for f, vs in VARIANTS.items():
        for ch in vs.values():
            fields = set(ch) - {'on'}
            assert fields <= set(CostModel.__dataclass_fields__) and (f in fields or f == 'penalty_rule')
            for tg in ('trn1', 'trn2', 'trn3'): cost_model(tg, **on_target(ch, tg))      # every variant is a valid model


def _recount(em, variants):
    """(cells, robust, engine-robust Vector wins, engine-robust PE wins, {field: cells whose engine it flips}) per
    (target, dtype), from predict() on the traces directly; a tuned design takes the alternative of least mean log time."""
    def times(tg, d, ch):
        t = {n: np.array([[predict(em.traces[(n, s, w, d)], tg, **ch).total_ns for w in em.widths] for s in em.sizes])
             for n in {a for k in em.names for a in TUNED.get(k, (k,))}}
        return np.stack([min((t[a] for a in TUNED.get(k, (k,))), key=lambda x: np.log(x).mean()) for k in em.names])
    pe = np.array([n.startswith('PE') for n in em.names])
    out = {}
    for tg in ('trn1', 'trn2', 'trn3'):
        for d in ('float32', 'bfloat16'):
            base = times(tg, d, {}).argmin(0)
            wins = {f: [times(tg, d, on_target(ch, tg)).argmin(0) for ch in vs.values()] for f, vs in variants.items()}
            flipped = {f: np.any([pe[w] != pe[base] for w in ws], axis=0) for f, ws in wins.items()}
            robust = np.all([w == base for ws in wins.values() for w in ws], axis=0)
            settled = ~np.any(list(flipped.values()), axis=0)
            moved = {f: int(m.sum()) for f, m in flipped.items() if m.any()}
            out[(tg, d)] = (base.size, int(robust.sum()), int((settled & ~pe[base]).sum()), int((settled & pe[base]).sum()), moved)
    return out


@pytest.mark.parametrize("kind,sizes,widths", [('1D', (3, 31), (64, 512)), ('2D', (3, 5), (16, 64))])
def test_verdict_matches_a_recount(kind, sizes, widths):
    "The verdict's numbers against an independent recount from the traces."
    variants = {f: VARIANTS[f] for f in ('access_start', 'pe_access_start', 'vector_rates', 'dma_latency_ns')}
    em = engine_map(kind, sizes, widths, check=False)
    rob = robustness(em, variants)
    got, want = verdict(em, rob), _recount(em, variants)
    assert {k: v[:4] for k, v in got.items()} == {k: v[:4] for k, v in want.items()}
    assert {k: sorted(v[4].items()) for k, v in got.items()} == {k: sorted(v[4].items()) for k, v in want.items()}


@pytest.mark.slow
def test_verdict_matches_a_recount_on_a_denser_grid():
    em = engine_map('1D', (3, 7, 15, 31, 63, 127, 255), (64, 256, 1024), check=False)
    variants = {f: VARIANTS[f] for f in ('pe_access_start', 'penalty_rule', 'vector_rates')}
    got, want = verdict(em, robustness(em, variants)), _recount(em, variants)
    assert {k: v[:4] for k, v in got.items()} == {k: v[:4] for k, v in want.items()}


def test_the_answer_says_what_the_maps_say():
    "Every number and shape in the answer, read back and recomputed from the maps."
    m1 = engine_map('1D', (3, 63), (64, 1024), check=False)
    m2 = engine_map('2D', (3, 5), (16, 64), check=False)
    variants = {f: VARIANTS[f] for f in ('vector_rates', 'dma_latency_ns')}
    maps = {'1D': (m1, robustness(m1, variants)), '2D': (m2, robustness(m2, variants))}
    text = answer(maps, 204)
    for tg in ('trn1', 'trn2', 'trn3'):
        orig = sum(int((r.base == 0).sum()) for em, rob in maps.values() for (t, d), r in rob.items() if t == tg)
        assert f"**{tg}** (the original as written wins {orig} of 16 cells)" in text
    for (f, lab), (p, v) in flips(*maps['1D']).items():
        p2, v2 = flips(*maps['2D'])[(f, lab)]
        if p + v + p2 + v2: assert f"`{f}` {lab} ({p + p2} / {v + v2})" in text
    said = re.search(r"PE, diagonal weights \(([^)]*)\)", text.split('**trn1**')[1]).group(1)
    assert said == shapes_won(m1, "trn1", "float32", "PE, diagonal weights")
    win = m1.winners('trn1', 'float32')[0]
    cells = [(s, w) for i, s in enumerate(m1.sizes) for j, w in enumerate(m1.widths) if m1.names[win[i, j]] == 'PE, diagonal weights']
    for _s, w in cells: assert str(w) in said or 'every W_out' in said or said == 'every shape'   # every width it wins is named


@pytest.mark.parametrize("call,cls,words", [
    (lambda: on_target(None, 'trn1'), SimulatorTypeError, "changes must be a dict"),
    (lambda: on_target({}, 'trn9'), SimulatorError, "target must be one of"),
    (lambda: engine_map('4D', (3,), (16,)), SimulatorError, "kind must be one of"),
    (lambda: engine_map('1D', '', (16,)), SimulatorTypeError, "sizes must be an ordered sequence"),
    (lambda: engine_map('1D', (), (16,)), SimulatorError, "at least one value"),
    (lambda: engine_map('1D', (3,), (16,), dtypes=''), SimulatorTypeError, "dtypes must be a tuple"),
    (lambda: engine_map('1D', (3,), (16,), dtypes=('int8',)), SimulatorError, "dtypes must be one of"),
    (lambda: engine_map('1D', (3,), (16,), names=False), SimulatorTypeError, "names must be a tuple"),
    (lambda: engine_map('1D', (3,), (16,), names=('PE, identity sum (older variant)',)), SimulatorError, "names must be one of"),
    (lambda: engine_map('1D', (3,), (16,), check='yes'), SimulatorTypeError, "check must be True or False"),
    (lambda: engine_map('1D', tuple(range(1, 100)), tuple(range(1, 100))), SimulatorError, f"more than the {MAX_MAP_TRACES:,}"),
    (lambda: robustness(None), SimulatorTypeError, "em must be an EngineMap"),
    (lambda: flips(None, {}), SimulatorTypeError, "em must be an EngineMap"),
    (lambda: verdict(None, {}), SimulatorTypeError, "em must be an EngineMap"),
    (lambda: win_counts(None), SimulatorTypeError, "em must be an EngineMap"),
    (lambda: design_side(3), SimulatorTypeError, "name must be a design's name")])
def test_bad_arguments_are_named(call, cls, words):
    with pytest.raises(cls) as e: call()
    assert words in str(e.value), str(e.value)


def test_bad_maps_and_robustness_are_named(small_1d):
    with pytest.raises(SimulatorTypeError, match="variants must be a dict"): robustness(small_1d, None)
    with pytest.raises(SimulatorTypeError, match="rob must be what robustness"): flips(small_1d, None)
    with pytest.raises(SimulatorTypeError, match="rob must be what robustness"): verdict(small_1d, {})
    with pytest.raises(SimulatorError, match="targets must be one of"): win_counts(small_1d, targets=('trn9',))
    with pytest.raises(SimulatorError, match="name must be one of"): shapes_won(small_1d, 'trn1', 'float32', 'GPU')
    with pytest.raises(SimulatorError, match="contender must be one of"): small_1d.priced('x', 'trn1', 'float32')
    with pytest.raises(SimulatorError, match="penalty must be >= 0"): answer({}, -1)
