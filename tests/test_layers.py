"""The real-layers chapters' modules (25 and 26): the presets against the papers' tables, the planner's program counts,
the kernels against the framework reference (JAX present and absent), the isolation of the XLA child process, and
the exhaustive and bad-argument checks that the chapters leave here."""
import inspect

import numpy as np
import pytest

import dwlit.apps.layers as L
from dwlit import TARGETS, SimulatorError
from dwlit.apps.layers import (
    LAYERS,
    Layer,
    RefCase,
    Reference,
    explain_args,
    framework_reference,
    get_layer,
    in_contract,
    jax_dimension_numbers,
    kernel_args,
    layer_plan,
    numpy_reference,
    programs_to_fit,
    run_layer,
    xla_reference,
)
from dwlit.apps.networks import check_runs, compare, error_bound, layer_case, layers_table, plot_network

HAS_JAX = L.jax_available()
needs_jax = pytest.mark.skipif(not HAS_JAX, reason="JAX is not installed (pip install -e '.[xla]')")


# --- the presets, against numbers written out from the papers (not read from the module) ---

def _net(src, stride=None):
    return [l for l in LAYERS.values() if l.source == src and (stride is None or l.stride == stride)]

def test_layer_counts_match_the_papers():
    assert sum(l.count for l in _net('mobilenetv2')) == 17            # bottleneck rows n = 1, 2, 3, 4, 3, 3, 1
    assert sum(l.count for l in _net('mobilenetv2', 2)) == 4          # s = 2 on rows c=24, 32, 64, 160
    assert sum(l.count for l in _net('convnext')) == 18               # ConvNeXt-T blocks 3, 3, 9, 3
    assert [l.C for l in _net('convnext')] == [96, 192, 384, 768]
    assert sum(l.count for l in _net('efficientnet')) == 9            # 5x5 stages: 2 + 3 + 4 blocks
    assert [l.C for l in _net('mamba')] == [1536, 2048, 3072, 4096, 5120]
    assert {l.kernel for l in _net('mamba')} == {(4,)} and {l.padding for l in _net('mamba')} == {((3, 0),)}
    assert [(l.C, l.kernel, l.padding) for l in _net('conformer')] == [(256, (31,), ((15, 15),)), (512, (31,), ((15, 15),))]
    s = LAYERS['speech-frontend']
    assert (s.C, s.size, s.kernel, s.out_size) == (512, (5000,), (8,), (5000,))
    assert LAYERS['long-conv'].kernel[0] >= 512

def test_every_stride1_2d_layer_keeps_its_size_and_stride2_halves_it():
    for l in LAYERS.values():
        if l.dims == 2:
            assert l.out_size == (l.size if l.stride == 1 else tuple(s // 2 for s in l.size)), l.name

def test_in_contract_names_the_rule():
    out = {n: in_contract(n) for n in LAYERS if in_contract(n)}
    assert set(out) == {'long-conv'} | {n for n in LAYERS if n.endswith('-s2')}
    assert 'W_f' in out['long-conv'] and all('stride' in v for n, v in out.items() if n != 'long-conv')

def test_get_layer_refuses_unknown_names():
    assert get_layer(LAYERS['conformer-m']) is LAYERS['conformer-m']
    for bad in ('resnet50', None, 3, np.str_('mamba-130m')):
        with pytest.raises(SimulatorError, match="layer must be one of 'mamba-130m'"): get_layer(bad)


# --- plans ---

@pytest.mark.parametrize('target', list(TARGETS))
def test_programs_to_fit_is_the_fewest_that_fit(target):
    for name, l in LAYERS.items():
        if in_contract(name) or l.dims != 1: continue
        P, need, cap = programs_to_fit(name, target)
        assert need <= cap and cap == TARGETS[target].sbuf_partition_bytes
        assert layer_plan(name, 1, target, P).fits
        if P > 1: assert not layer_plan(name, 1, target, P - 1).fits, (name, target, P)

def test_kernel_refuses_one_program_fewer():
    P = programs_to_fit('mamba-2.8b', 'trn1')[0]
    k, img, filt, pad, kw = kernel_args('mamba-2.8b')
    with pytest.raises(SimulatorError, match='SBUF'):
        L.simulate_kernel(k, np.zeros(img, np.float32), np.zeros(filt, np.float32), pad, num_programs=P - 1,
                          target='trn1', **kw)

def test_out_of_contract_layers_are_refused_by_the_kernels():
    k, img, filt, pad, kw = kernel_args('long-conv')
    with pytest.raises(SimulatorError, match='W_f'):
        L.simulate_kernel(k, np.zeros(img, np.float32), np.zeros(filt, np.float32), pad, **kw)
    k, img, filt, pad, kw = kernel_args('mobilenetv2-96x112-s2')
    with pytest.raises(SimulatorError, match='stride'):
        L.simulate_kernel(k, np.zeros(img, np.float32), np.zeros(filt, np.float32), pad, **kw)
    for name in ('long-conv', 'efficientnet-b0-144x56-s2'):
        with pytest.raises(SimulatorError): run_layer(name)
        with pytest.raises(SimulatorError): explain_args(name)
    for name in [n for n in LAYERS if n.endswith('-s2')]:            # every stride-2 preset, refused by the planner
        k, img, filt, pad, kw = kernel_args(name)
        with pytest.raises(SimulatorError, match='stride'): L.conv2d_plan(img, filt, pad, **kw)


# --- explain presets ---

def test_explain_args():
    assert explain_args('mamba-2.8b', target='trn3') == ('conv1d', dict(shape=(1, 5120, 2048), W_f=4, padding=((0, 0), (3, 0)), programs=3))
    assert explain_args('convnext-t-96x56', N=2) == ('conv2d', dict(shape=(2, 96, 56, 56), k=(7, 7), padding=((3, 3), (3, 3)), programs=1))
    assert explain_args('efficientnet-b0-240x28')[1]['padding'] == ((2, 2), (2, 2))
    # the programs follow the dtype: a bf16 row is half the bytes (and the default stays fp32, as the CLI expects)
    assert explain_args('mamba-2.8b', target='trn1')[1]['programs'] == 4
    assert explain_args('mamba-2.8b', target='trn1', dtype='bfloat16')[1]['programs'] == 2
    assert explain_args('mamba-2.8b', target='trn1', dtype='float16') == explain_args('mamba-2.8b', target='trn1', dtype='bfloat16')

@pytest.mark.parametrize('name', ['conformer-m', 'mobilenetv2-960x7'])
def test_explain_args_feed_the_cli_planner(name):
    import dwlit.apps.cli as cli
    kind, kw = explain_args(name)
    fn = getattr(cli, f'explain_{kind}', None)
    if fn is None or not set(kw) | {'predict_time'} <= set(inspect.signature(fn).parameters):
        pytest.skip(f"dwlit.apps.cli.explain_{kind} no longer takes {sorted(kw)}")
    text = fn(**kw, predict_time=False)
    assert str(LAYERS[name].C) in text


# --- runs against the references ---

@pytest.fixture(scope='module')
def small_runs():
    return [run_layer('conformer-m', 2), run_layer('mobilenetv2-960x7', 1), run_layer('mamba-130m', 1)]

def test_runs_match_the_plans(small_runs):
    for r in small_runs:
        assert r.peaks == r.sbuf
        assert set(r.engines['trn1']) == {'Vector', 'DMA'}
        assert all(v > 0 for v in r.predicted_ns.values())

def test_numpy_backend(small_runs):
    checks = check_runs(small_runs, 'numpy')
    assert [c.backend for c in checks] == ['numpy'] * 3 and all(c.ok for c in checks), checks

def test_auto_falls_back_to_numpy_when_jax_is_absent(small_runs, monkeypatch):
    monkeypatch.setattr(L, 'jax_available', lambda: False)
    checks = check_runs(small_runs[:1])
    assert checks[0].backend == 'numpy' and checks[0].ok

def test_numpy_fallback_when_the_child_cannot_import_jax(small_runs):
    no_jax = "import sys\nfrom pathlib import Path\n(Path(sys.argv[1]) / 'nojax.txt').write_text('ModuleNotFoundError'); sys.exit(3)\n"
    assert xla_reference([layer_case(small_runs[0])], worker=no_jax) == [None]
    refs = framework_reference([layer_case(small_runs[0])], 'jax', worker=no_jax)
    assert refs[0].backend == 'numpy' and refs[0].status == 'ok'

@needs_jax
def test_jax_backend(small_runs):
    checks = check_runs(small_runs, 'jax')
    assert all(c.backend.startswith('jax') for c in checks) and all(c.ok for c in checks), checks

def test_auto_backend_says_which_it_is_and_agrees_with_numpy():
    "The backend 'auto' picks is named in each answer; its numbers agree with NumPy's, LHS-dilated shapes included."
    cases = _cases(2, seed=4)
    rng = np.random.default_rng(5)
    cases.append(RefCase('f01b_o01i_bf01', rng.standard_normal((2, 5, 9, 2)).astype(np.float32),
                         rng.standard_normal((2, 2, 3, 1)).astype(np.float32), ((1, 0), (0, 2)), (2, 2)))
    auto, ref = framework_reference(cases), framework_reference(cases, 'numpy')
    assert all(a.backend.startswith('jax') == HAS_JAX for a in auto) and {r.backend for r in ref} == {'numpy'}
    for a, r in zip(auto, ref): np.testing.assert_allclose(a.out, r.out, rtol=1e-4, atol=1e-4)
    assert ref[2].out.shape == (2, 2, 9 + 1 - 2 + 1, 17 + 2 - 3 + 1)       # 5 x 9 dilated to 9 x 17, padded, 2 x 3 kernel

def test_layers_table_has_one_row_per_run_and_names_a_failed_check(small_runs):
    from dwlit.apps.networks import layers_table
    checks = check_runs(small_runs, 'numpy')
    rows = [l for l in layers_table(small_runs, checks).splitlines() if l.startswith('| ') and not l.startswith('| layer')]
    assert [r.split(' | ')[0][2:] for r in rows] == [r.layer.name for r in small_runs]
    only = [l for l in layers_table(small_runs, checks, ('conformer',)).splitlines() if l.startswith('| conformer')]
    assert len(only) == 1 and layers_table(small_runs, checks)._repr_markdown_().startswith('\n| layer')
    crashed = compare(small_runs[0].out, Reference('jax', 'crashed', None, 'killed by SIGABRT'), layer_case(small_runs[0]), 9)
    assert 'crashed: killed by SIGABRT' in layers_table(small_runs[:1], [crashed])


def test_compare_can_fail(small_runs):
    r = small_runs[1]
    case = layer_case(r)
    bad = r.out.copy()
    bad[0, 3, 2, 2] += 2 * error_bound(case, r.layer.taps)[0, 3, 2, 2]
    good = Reference('numpy', 'ok', r.out.astype(np.float64))
    assert compare(r.out, good, case, r.layer.taps).ok and not compare(bad, good, case, r.layer.taps).ok
    assert not compare(r.out, Reference('jax', 'crashed', None, 'SIGABRT'), case, 9).ok
    assert compare(r.out[:, :, :3], good, case, 9).status == 'shape'


# --- the child process: crashes, errors and timeouts are results ---

def _cases(n, seed=0):
    rng = np.random.default_rng(seed)
    return [RefCase('f01b_o01i_bf01', rng.standard_normal((2, 5 + i, 4, 2)).astype(np.float32),
                    rng.standard_normal((2, 3, 3, 1)).astype(np.float32), ((1, 1), (1, 1))) for i in range(n)]

FAKE = ("import os, sys, time, numpy as np\nfrom pathlib import Path\nd = Path(sys.argv[1])\n"
        "(d / 'version.txt').write_text('fake')\n"
        "for i in map(int, sys.argv[2:]):\n"
        "    if i == {abort}: os.abort()\n"
        "    if i == {error}: (d / f'error{{i}}.txt').write_text('ValueError: planted'); continue\n"
        "    if i == {sleep}: time.sleep(60)\n"
        "    np.save(d / f'out{{i}}.npy', np.full(1, float(i)))\n")

def test_an_aborting_child_is_a_result_and_the_rest_still_come_back():
    res = xla_reference(_cases(5), worker=FAKE.format(abort=1, error=3, sleep=-1))
    assert [r.status for r in res] == ['ok', 'crashed', 'ok', 'error', 'ok']
    assert 'SIGABRT' in res[1].detail and 'planted' in res[3].detail
    assert [float(r.out[0]) for r in res if r.status == 'ok'] == [0.0, 2.0, 4.0]

def test_a_child_that_hangs_times_out():
    res = xla_reference(_cases(3), worker=FAKE.format(abort=-1, error=-1, sleep=1), timeout=5)
    assert [r.status for r in res] == ['ok', 'timeout', 'ok']

@needs_jax
def test_jax_agrees_with_numpy_on_lhs_dilated_shapes():
    rng = np.random.default_rng(3)
    cases = []
    for _ in range(25):
        C, H, W, N = (int(v) for v in rng.integers(1, 6, 4))
        kh, kw = (int(v) for v in rng.integers(1, 4, 2))
        lhs = tuple(int(v) for v in rng.integers(1, 4, 2))
        pad = tuple(tuple(int(v) for v in rng.integers(0, 3, 2)) for _ in range(2))
        if kh > (H - 1) * lhs[0] + 1 + sum(pad[0]) or kw > (W - 1) * lhs[1] + 1 + sum(pad[1]): continue
        cases.append(RefCase('f01b_o01i_bf01', rng.standard_normal((C, H, W, N)).astype(np.float32),
                             rng.standard_normal((C, kh, kw, 1)).astype(np.float32), pad, lhs))
    for c, j in zip(cases, xla_reference(cases)):
        if j.status == 'crashed': continue                       # a crash is a result; the run goes on
        assert j.status == 'ok', j
        n = numpy_reference(c)
        np.testing.assert_allclose(j.out, n.out, rtol=1e-4, atol=1e-4 * max(1, np.abs(n.out).max()))

@needs_jax
def test_the_shape_xla_has_aborted_on_cannot_take_the_test_run_down():
    rng = np.random.default_rng(0)
    c = RefCase('f01b_o01i_bf01', rng.standard_normal((2, 9, 2, 2)).astype(np.float32),
                rng.standard_normal((2, 2, 4, 1)).astype(np.float32), ((0, 0), (1, 1)), (2, 3))
    r = xla_reference([c])[0]
    assert r.status in ('ok', 'crashed'), r
    if r.status == 'ok': np.testing.assert_allclose(r.out, numpy_reference(c).out, rtol=1e-4, atol=1e-5)


def test_dimension_numbers():
    assert jax_dimension_numbers('f01b_o01i_bf01') == ('CHWN', 'OHWI', 'NCHW')
    assert jax_dimension_numbers('bf01_oi01_bf01') == ('NCHW', 'OIHW', 'NCHW')
    with pytest.raises(SimulatorError): jax_dimension_numbers('bf0_oi0_bf0')
    with pytest.raises(SimulatorError): framework_reference(_cases(1), 'torch')


# --- bad arguments: refused through dwlit.sim.checks before anything is planned or run ---

@pytest.mark.parametrize("call,msg", [
    (lambda: run_layer('mamba-130m', targets=('trn7',)), "run_layer: target must be one of 'trn1', 'trn2', 'trn3', got target='trn7'"),
    (lambda: run_layer('mamba-130m', targets='trn1'), "targets must be a non-empty tuple or list"),
    (lambda: run_layer('mamba-130m', targets=()), "targets must be a non-empty tuple or list"),
    (lambda: run_layer('mamba-130m', seed='a'), "seed must be an integer, got seed='a'"),
    (lambda: run_layer('mamba-130m', N=0), "N must be >= 1, got N=0"),
    (lambda: run_layer('mamba-130m', dtype='int4'), "dtype must be one of 'float32', 'float16', 'bfloat16', got dtype='int4'"),
    (lambda: run_layer('mamba-130m', targets=(1,)), "run_layer: targets[0] must be a str, got targets[0]=1"),
    (lambda: run_layer('mamba-130m', seed=2**32), "seed must be <= 4,294,967,295"),
    (lambda: layer_plan('mamba-130m', num_programs=5000), "num_programs must be <= 4,096"),
    (lambda: layer_plan('convnext-t-96x56', num_programs=True), "num_programs must be an integer"),
    (lambda: framework_reference([1, 2]), "framework_reference: cases[0] must be a RefCase"),
    (lambda: framework_reference((), 'numpy'), "cases must be a non-empty list or tuple of RefCase"),
    (lambda: framework_reference(_cases(1), np.array(['auto', 'jax'])), "backend must be one of 'auto', 'jax', 'numpy'"),
    (lambda: xla_reference(_cases(1), timeout=-1), "timeout must be >= 1"),
    (lambda: numpy_reference(None), "case must be a RefCase"),
    (lambda: jax_dimension_numbers(None), "labels must be a str"),
    (lambda: Layer('x', 'X', 'x', 'x', 8, (16,), (3, 3), ((1, 1),)), "kernel must have 1 integers"),
    (lambda: Layer('x', 'X', 'x', 'x', 8, (16, 4, 4), (3, 3, 3), ((1, 1),) * 3), "size must be (W,) or (H, W)"),
    (lambda: Layer('x', 'X', 'x', 'x', 0, (16,), (3,), ((1, 1),)), "C must be >= 1"),
    (lambda: Layer('x', 'X', 'x', 'x', 8, (16,), (3,), ((1, -1),)), "padding must be >= 0"),
    (lambda: Layer('x', 'X', 'x', 'x', 8, {16}, (3,), ((1, 1),)), "size must be an ordered sequence"),
    (lambda: Layer(None, 'X', 'x', 'x', 8, (16,), (3,), ((1, 1),)), "name must be a str"),
    (lambda: RefCase('bf01_oi01_bf01', np.zeros((1, 4, 1, 8), np.float32), np.zeros((5, 1, 1, 3), np.float32), ((0, 0), (1, 1))),
     "are not a depthwise pair"),
    (lambda: RefCase('bf01_oi01_bf01', np.zeros((1, 4, 1, 8)), np.zeros((4, 1, 1, 3)), ((0, 0), (1, 1))), "img must be a 4-D array of float32"),
    (lambda: RefCase('f01b_o01i_bf01', np.zeros((4, 3, 3, 1), np.float32), np.zeros((4, 5, 5, 1), np.float32), ((0, 0), (0, 0))),
     "larger than the padded image"),
    (lambda: RefCase('f01b_o01i_bf01', np.zeros((4, 3, 3, 1), np.float32), np.zeros((4, 3, 3, 1), np.float32), ((0, 0), (0, 0)), (10**5, 10**5)),
     "more than MAX_HBM_BYTES"),
    (lambda: RefCase('f01b_o01i_bf01', np.zeros((4, 3, 3, 1), np.float32), np.zeros((4, 3, 3, 1), np.float32), (1, 2, 3, 4, 5)), "padding must be"),
    (lambda: RefCase('f01b_o01i_bf01', np.zeros((4, 3, 3, 1), np.float32), np.zeros((4, 3, 3, 1), np.float32), ((0, 0), (0, 0)), {1, 2}), "lhs_dilation must be an ordered"),
    (lambda: RefCase('bf01_oi01_bf01', np.zeros((1, 4, 1, 8), np.float32), np.zeros((4, 1, 1, 3), np.float32), ((0, 0), (1, 1)), (2, 2)), "lhs_dilation[0] must be <= 1"),
    (lambda: Reference('numpy', 'ok', None), "out must be a ndarray"),
    (lambda: Reference('numpy', 'fine'), "status must be one of 'ok'"),
    (lambda: error_bound(_cases(1)[0], 0), "taps must be >= 1"),
    (lambda: compare(None, Reference('numpy', 'ok', np.zeros(1)), _cases(1)[0], 9), "out must be the kernel's output"),
    (lambda: compare(np.zeros((2, 2, 5, 4), np.float32), None, _cases(1)[0], 9), "ref must be a Reference"),
    (lambda: check_runs([1, 2]), "check_runs: runs[0] must be a LayerRun"),
    (lambda: layer_case(None), "run must be a LayerRun"),
    (lambda: layers_table([], []), "runs must be a non-empty list"),
    (lambda: plot_network('abc', 'title'), "runs must be a non-empty list"),
    (lambda: programs_to_fit('mamba-130m', target='x'), "programs_to_fit: target must be one of"),
    (lambda: layer_plan('mamba-130m', N=2.5), "layer_plan: N must be an integer, got N=2.5"),
    (lambda: explain_args('mamba-130m', target={'trn1'}), "target must be one of trn1, trn2, trn3 (a name)"),
    (lambda: kernel_args('mamba-130m', N=np.float64(2)), "N must be an integer"),
    (lambda: get_layer('x' * 5000), "got layer='xxxxxxxx"),
])
def test_bad_arguments_are_refused_with_the_rule(call, msg):
    with pytest.raises(SimulatorError) as e: call()
    assert msg in str(e.value) and len(str(e.value)) < 1000, str(e.value)[:400]


def test_layer_inputs_refuses_a_batch_too_large_to_draw():
    "mamba-2.8b at N=10**7 would be 381 TiB: refused before allocating, in HBM's terms."
    with pytest.raises(SimulatorError, match=r"more than the 2,147,483,648 B one simulated launch may hold"):
        L.layer_inputs('mamba-2.8b', N=10**7)
    x, f = L.layer_inputs('mamba-130m', N=1, seed=np.int64(3))       # a NumPy integer seed is a seed
    assert x.shape == (1, 1536, 1, 2048) and f.shape == (1536, 1, 1, 4)


def test_layer_validation_normalises_and_keeps_the_presets():
    l = Layer('x', 'X', 'x', 'x', 8, [16], [3], [[1, 1]])
    assert (l.size, l.kernel, l.padding) == ((16,), (3,), ((1, 1),)) and hash(l)
    assert all(get_layer(n) is l2 for n, l2 in LAYERS.items())
    assert kernel_args('mamba-130m', N=2)[1:4] == ((2, 1536, 1, 2048), (1536, 1, 1, 4), ((0, 0), (3, 0)))
    assert kernel_args('convnext-t-96x56', N=4)[1:4] == ((96, 56, 56, 4), (96, 7, 7, 1), ((3, 3), (3, 3)))


def test_programs_to_fit_searches_within_the_budget():
    "A made-up layer of 10**6 channels: the search is bounded (a handful of plans), and refusal names the cap."
    wide = Layer('wide', 'X', 'x', 'x', 10**6, (2048,), (4,), ((3, 0),))
    P, need, cap = programs_to_fit(wide, 'trn3')
    assert layer_plan(wide, 1, 'trn3', P).fits and not layer_plan(wide, 1, 'trn3', P - 1).fits
    huge = Layer('huge', 'X', 'x', 'x', 10**7, (20000,), (4,), ((3, 0),))
    with pytest.raises(SimulatorError, match='even on 4,096 programs'): programs_to_fit(huge)


def test_one_target_runs_table_and_plot(small_runs):
    "A run priced on one target only: the table and the picture show that target (no KeyError for the others)."
    import matplotlib
    matplotlib.use('Agg')
    one = run_layer('conformer-m', 1, targets=('trn2',))
    assert 'predicted µs (trn2)' in layers_table([one], check_runs([one], 'numpy'))
    plot_network([one], 'Input: one layer. Output: its predicted time on trn2')
    with pytest.raises(SimulatorError, match='share no target'): layers_table([one, run_layer('conformer-m', 1, targets=('trn1',))],
                                                                             check_runs([one, one], 'numpy'))
