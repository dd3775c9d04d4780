"""How `dwlit.nki` launches a kernel of either generation (grids, jit options, the target, which arrays become tensors)
and that every public name of NKI exists: modelled, or a stand-in that raises NotModelledError naming itself."""
import importlib
import os

import numpy as np
import pytest

import dwlit.nki as nki
import dwlit.nki.isa as nisa
import dwlit.nki.language as nl
from dwlit import NotModelledError, SimulatorError
from dwlit.sim.checks import Unmodelled
from dwlit.sim.memory import current_core
from dwlit.sim.nki_launch import NKI_NAMES, TARGET_VARIABLE, coverage

FACADES = {'nl': 'dwlit.nki.language', 'nisa': 'dwlit.nki.isa', 'nki': 'dwlit.nki', 'nisa.constants': 'dwlit.nki.isa.constants',
           'nki.compiler': 'dwlit.nki.compiler', 'nki.collectives': 'dwlit.nki.collectives'}
SIBLING = {'nl': 'dwlit.neuronxcc.nki.language', 'nisa': 'dwlit.neuronxcc.nki.isa', 'nki': 'dwlit.neuronxcc.nki',
           'nisa.constants': 'dwlit.neuronxcc.nki.isa.constants', 'nki.compiler': 'dwlit.neuronxcc.nki.compiler'}
EVERY = [(m, n) for m, g in NKI_NAMES.items() for n in sorted(g['first'] | g['current'])]


@pytest.mark.parametrize('module,name', EVERY)
def test_every_public_name_imports_and_works_or_says_it_is_not_modelled(module, name):
    mods = [FACADES[module]] + ([SIBLING[module]] if module in SIBLING and name in NKI_NAMES[module]['first'] else [])
    for path in mods:
        ns = {}
        exec(f"from {path} import {name}", ns)                        # `from X import name` never fails
        obj = ns[name]
        if isinstance(obj, Unmodelled):
            with pytest.raises(NotModelledError, match=f"{module}.{name} is part of NKI, but dwlit does not model it"):
                obj(None)
        else:
            assert obj is getattr(importlib.import_module(path), name)


def test_the_coverage_table_is_read_from_the_facades():
    rows = coverage({m: importlib.import_module(p) for m, p in FACADES.items()})
    assert len(rows) == len(EVERY)
    done = {(m, n) for m, n, g, s in rows if s == 'implemented'}
    for m, n in [('nl', 'arange'), ('nl', 'mgrid'), ('nl', 'par_dim'), ('nisa', 'bn_stats'), ('nki', 'simulate_kernel'),
                 ('nisa', 'register_alloc'), ('nl', 'shared_identity_matrix'), ('nisa.constants', 'dge_mode')]:
        assert (m, n) in done
    assert ('nl', 'rand') not in done and ('nisa', 'dropout') not in done   # randomness: refused


def test_a_name_of_neither_generation_is_refused_at_once():
    with pytest.raises(NotModelledError, match="nl.arangee is not a name dwlit models, nor one of NKI's.*did you mean nl.arange"):
        nl.arangee   # noqa: B018 (the attribute access is what must raise)
    with pytest.raises(NotModelledError, match="nisa.dve_transpose is not a name dwlit models"):
        nisa.dve_transpose                                           # dwlit's own instruction: not NKI's   # noqa: B018 (the attribute access is what must raise)
    with pytest.raises(ImportError):
        exec("from dwlit.nki.isa import not_an_nki_name", {})


def test_jit_takes_nki_options_and_refuses_others():
    def k(a): return a
    for ok in (dict(mode='simulation'), dict(mode='auto', platform_target='trn2'), dict(additional_compile_opt='--x')):
        assert nki.jit(k, **ok).func is k
    with pytest.raises(SimulatorError, match="bogus_option=1 is not an option of NKI's jit"):
        nki.jit(k, bogus_option=1)
    with pytest.raises(SimulatorError, match="mode must be one of auto, simulation"):
        nki.jit(mode='fast')(k)


def test_the_target_follows_nki_simulator():
    seen = []
    probe = nki.jit(lambda a: (seen.append(current_core().target.name), a)[1])
    x = np.zeros(2, np.float32)
    old = os.environ.pop(TARGET_VARIABLE, None)
    try:
        probe(x)                                                     # unset: trn3, NKI's simulator without a chip
        for v, _t in (('trn1', 'trn1'), ('inf2', 'trn1'), ('gen3', 'trn2'), ('gen4', 'trn3')):
            os.environ[TARGET_VARIABLE] = v; probe(x)
        nki.jit(probe.func, platform_target='trn2')(x)               # an explicit target wins
        os.environ[TARGET_VARIABLE] = 'trn5'
        with pytest.raises(SimulatorError, match=f"{TARGET_VARIABLE} must be one of"):
            probe(x)
    finally:
        os.environ.pop(TARGET_VARIABLE, None)
        if old is not None: os.environ[TARGET_VARIABLE] = old
    assert seen == ['trn3', 'trn1', 'trn1', 'trn2', 'trn3', 'trn2']


def test_arrays_become_tensors_and_bad_dtypes_are_refused_at_launch():
    @nki.jit
    def kinds(a):
        assert a.dtype == np.dtype(a.dtype) and a.buffer is nl.hbm
        return a
    for dt in (np.int32, np.uint16, np.bool_, np.float16):
        kinds(np.zeros((2, 3), dt))
    for bad, what in ((np.zeros(3, np.complex64), 'complex64'), (np.array([object()] * 2), "'O'"),
                      (np.zeros(3, np.int64), 'int64'), (np.zeros(3, np.float64), 'float64')):
        with pytest.raises(SimulatorError, match=f"dtype of a must be one of float32.*{what}"):
            kinds(bad)


def test_grids_number_programs_row_major():
    @nki.jit
    def ids(a):
        out = nl.ndarray((3, 4), nl.float32, buffer=nl.shared_hbm)
        t = nl.full((1, 1), 100 * nl.program_ndim() + 10 * nl.program_id(0) + nl.program_id(1), nl.float32)
        nl.store(out[nl.program_id(0), nl.program_id(1)], t)
        assert nl.num_programs() == 12 and nl.num_programs(1) == 4 and nl.num_programs((0, 1)) == 12
        return out
    got = ids[3, 4](np.zeros(1, np.float32))
    np.testing.assert_array_equal(got, 200 + 10 * np.arange(3)[:, None] + np.arange(4)[None, :])
    with pytest.raises(SimulatorError, match="program_id: axis must be < 2"):
        nki.jit(lambda a: nl.program_id(2))[2, 2](np.zeros(1, np.float32))
    with pytest.raises(SimulatorError, match="more than the 4,096 one launch may run"):
        ids[100, 100]
    np.testing.assert_array_equal(nki.simulate(ids[3, 4])(np.zeros(1, np.float32)), got)     # nki.simulate(kernel[grid])
    np.testing.assert_array_equal(nki.simulate_kernel(ids[3, 4], np.zeros(1, np.float32)), got)


def test_an_unmodelled_name_in_a_table_refuses_only_when_used():
    table = {nl.gemm_grid: 'grid', nisa.dropout: 'drop'}              # a helper module's table, at import time
    assert len(table) == 2
    with pytest.raises(NotModelledError, match="nisa.dropout is part of NKI, but dwlit does not model it"):
        nisa.dropout(None, None)
    with pytest.raises(NotModelledError, match="nki.benchmark is part of NKI, but dwlit does not model it"):
        nki.benchmark(lambda a: a)
