"""The no-PE-array checks (dwlit.analysis.proof): they pass on Vector-only code, fail on every PE-array design of chapters
15-18, refuse what is not a call site, a trace or a count, and match the original's compute sites line for line."""
import numpy as np
import pytest

from dwlit import SimulatorError, kernel, nisa, nl, trace
from dwlit.analysis.proof import (
    INTRINSIC_ENGINE,
    assert_no_pe_dynamic,
    assert_no_pe_static,
    engine_histogram,
    isa_call_sites,
    sites_table,
)
from dwlit.sim import SimulatorTypeError, Trace

_mm_alias = nisa.nc_matmul


def _helper(dst, a, b):
    _mm_alias(dst, a, b)                        # aliased PE-array call, one call away


@kernel
def _sneaky(x):
    a = nl.ndarray((4, 4), nl.float32, buffer=nl.sbuf, name='a')
    o = nl.ndarray((4, 4), nl.float32, buffer=nl.psum, name='o')
    nisa.dma_copy(a, x)
    _helper(o, a, a)
    return x


@kernel
def _clean(x):
    a = nl.ndarray((4, 4), nl.float32, buffer=nl.sbuf, name='a')
    nisa.dma_copy(a, x)
    nisa.tensor_tensor(a, a, a, nl.multiply)   # L251
    nisa.tensor_reduce(a[:, :1], nl.add, a, axis=1)
    return x


def test_static_finds_aliased_pe_call_in_helper():
    sites = isa_call_sites(_sneaky)
    assert [(s.function, s.intrinsic, s.engine) for s in sites] == [('_helper', 'nc_matmul', 'Tensor'),
                                                                      ('_sneaky', 'dma_copy', 'DMA')]
    with pytest.raises(AssertionError, match="nc_matmul at _helper"): assert_no_pe_static(sites)
    # without following calls the helper is invisible: the check would wrongly pass
    assert assert_no_pe_static(isa_call_sites(_sneaky, follow=False))


def test_static_passes_clean_and_reads_op_axis_and_original_line():
    sites = isa_call_sites(_clean)
    assert assert_no_pe_static(sites)
    tt = [s for s in sites if s.intrinsic == 'tensor_tensor'][0]
    red = [s for s in sites if s.intrinsic == 'tensor_reduce'][0]
    assert (tt.op, tt.original, red.op, red.axis, red.original) == ('nl.multiply', 'L251', 'nl.add', '1', None)
    assert 'file=' not in repr(tt)                 # no temporary paths in what a reader sees
    assert tt.line == red.line - 1


def test_dynamic_check_both_ways():
    x = np.ones((4, 4), np.float32)
    with trace() as good: _clean(x)
    with trace() as bad: _sneaky(x)
    assert assert_no_pe_dynamic(good) and engine_histogram(good)['Tensor'] == 0
    assert engine_histogram(bad)['Tensor'] == 1
    with pytest.raises(AssertionError, match="1 PE-array instructions in the trace: {'nc_matmul': 1}"):
        assert_no_pe_dynamic(bad)


def test_engine_table_matches_simulator():
    assert INTRINSIC_ENGINE['nc_matmul'] == INTRINSIC_ENGINE['nc_transpose'] == 'Tensor'
    assert {INTRINSIC_ENGINE[k] for k in ('tensor_tensor', 'tensor_reduce', 'memset', 'dve_transpose')} == {'Vector'}


from dwlit.analysis.proof import ORIGINAL_COMPUTE_SITES, k_replication, original_correspondence
from dwlit.contenders.dense_pe import conv1d_dense_on_pe_array
from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01


def test_dwlit_kernels_match_the_original_compute_sites():
    sites = isa_call_sites(conv1d_depthwise_bf01_oi01_bf01, conv2d_depthwise_f01b_o01i_bf01)
    assert assert_no_pe_static(sites)
    rows = original_correspondence(sites)
    assert [r[0] for r in rows] == ['L251', 'L276', 'L357', 'L381', 'L587', 'L594', 'L634', 'L641', 'L1015', 'L1046']
    # a compute site without a counterpart in the original, or a site of the original without one of ours, fails
    with pytest.raises(AssertionError, match="has no counterpart in the original"):
        original_correspondence(sites + isa_call_sites(conv1d_dense_on_pe_array))
    with pytest.raises(AssertionError, match="original L1015 has 0 dwlit sites"):
        original_correspondence(isa_call_sites(conv1d_depthwise_bf01_oi01_bf01))
    wrong = dict(ORIGINAL_COMPUTE_SITES, L276=('tensor_reduce', 'nl.add', '1'))
    with pytest.raises(AssertionError, match="original L276 is tensor_reduce"):
        original_correspondence(sites, wrong)


@pytest.mark.parametrize("C,taps,r,passes", [(16, 8, 8, 1), (16, 9, 8, 2), (128, 9, 1, 9), (1, 3, 3, 1), (200, 5, 1, 10)])
def test_k_replication_by_hand(C, taps, r, passes):
    d = k_replication(C, taps)
    assert (d['r'], d['passes']) == (r, passes)
    assert d['rows_busy'] <= 128


def test_k_replication_errors():
    with pytest.raises(SimulatorError, match="taps must be >= 1, got taps=0"): k_replication(4, 0)
    with pytest.raises(SimulatorTypeError, match="C_in must be an integer, got C_in=True"): k_replication(True, 9)


@pytest.mark.parametrize("name", ['dense (15)', 'identity sum (16)', '1D diagonal (17)', '2D diagonal (17)', 'implicit GEMM (18)'])
def test_both_checks_fail_on_every_pe_design(name):
    from dwlit.contenders.dense_pe import depthwise_as_dense
    from dwlit.contenders.diagonal import conv1d_depthwise_diagonal_pe, conv2d_depthwise_diagonal_pe
    from dwlit.contenders.identity_matmul import conv2d_depthwise_identity_matmul
    from dwlit.contenders.implicit_gemm import conv1d_depthwise_implicit_gemm
    x1, f1 = np.ones((1, 3, 1, 9), np.float32), np.ones((3, 1, 1, 4), np.float32)
    x2, f2 = np.ones((3, 4, 5, 1), np.float32), np.ones((3, 2, 2, 1), np.float32)
    fn, args = {'dense (15)': (conv1d_dense_on_pe_array, (x1, depthwise_as_dense(f1), ((0, 0), (0, 0)), (1, 3, 1, 6))),
                'identity sum (16)': (conv2d_depthwise_identity_matmul, (x2, f2)),
                '1D diagonal (17)': (conv1d_depthwise_diagonal_pe, (x1, f1, ((0, 0), (0, 0)), (1, 3, 1, 6))),
                '2D diagonal (17)': (conv2d_depthwise_diagonal_pe, (x2, f2)),
                'implicit GEMM (18)': (conv1d_depthwise_implicit_gemm, (x1, f1, ((0, 0), (0, 0)), (1, 3, 1, 6)))}[name]
    with trace() as tr: y = fn(*args)
    assert np.all(y == 4)                                  # four taps of ones over ones
    with pytest.raises(AssertionError, match="nc_matmul at"): assert_no_pe_static(isa_call_sites(fn))
    with pytest.raises(AssertionError, match="PE-array instructions in the trace"): assert_no_pe_dynamic(tr)


def test_engine_table_matches_what_the_simulator_records():
    "Every intrinsic run once: the engine the simulator records is the one INTRINSIC_ENGINE says."
    t = nl.ndarray((4, 4), nl.float32, buffer=nl.sbuf, name='t'); u = nl.ndarray((4, 4), nl.float32, buffer=nl.sbuf)
    ps = nl.ndarray((4, 4), nl.float32, buffer=nl.psum, name='ps'); h = nl.ndarray((4, 4), nl.float32, buffer=nl.hbm)
    t3 = nl.ndarray((4, 2, 2), nl.float32, buffer=nl.sbuf, name='t3'); u3 = nl.ndarray((4, 2, 2), nl.float32, buffer=nl.sbuf)
    with trace() as tr:
        nisa.memset(t, 1.0); nisa.memset(u, 2.0); nisa.memset(t3, 1.0)
        nisa.tensor_tensor(u, t, t, nl.add); nisa.tensor_reduce(u[:, :1], nl.add, t, axis=1)
        nisa.dve_transpose(u3, t3); nisa.dma_copy(h, t); nisa.nc_matmul(ps, t, u); nisa.nc_transpose(ps, t)
        nisa.tensor_copy(u, ps); nisa.tensor_scalar(u, t, nl.multiply, 2.0); nisa.activation(u, nl.exp, t)
        nisa.tensor_tensor_scan(u, t, t, 0.0, nl.multiply, nl.add); nisa.iota(u, [[1, 4]], 0)
    ran = {i.op: i.engine for i in tr.instructions}
    assert ran == INTRINSIC_ENGINE
    assert set(ran) == set(nisa.INSTRUCTIONS)              # the table covers every intrinsic there is


def test_the_site_catalogue_of_dwlits_kernels():
    "The call sites the walk finds from the two entry points: the catalogue the chapter counts, site by site."
    from collections import Counter
    sites = isa_call_sites(conv1d_depthwise_bf01_oi01_bf01, conv2d_depthwise_f01b_o01i_bf01)
    assert Counter(s.intrinsic for s in sites) == Counter(dma_copy=18, memset=11, tensor_tensor=5, tensor_reduce=5, dve_transpose=1)
    assert {s.engine for s in sites} == {'DMA', 'Vector'}
    assert {s.function for s in sites} >= {'conv1d_depthwise_default', 'conv1d_depthwise_f_packing', 'conv2d_depthwise_f01b_o01i_bf01'}
    table = sites_table(sites)
    assert table.count('\n') == len(sites) + 1 and '`tensor_reduce` | Vector | nl.add | 2 | L1046 |' in table


@pytest.mark.parametrize("call,arg", [(lambda: assert_no_pe_static(True), 'sites'), (lambda: assert_no_pe_static([1, 2]), 'sites'),
                                      (lambda: sites_table(None), 'sites'), (lambda: engine_histogram(None), 'tr'),
                                      (lambda: assert_no_pe_dynamic(None), 'tr'), (lambda: assert_no_pe_dynamic([]), 'tr'),
                                      (lambda: original_correspondence(None), 'sites'),
                                      (lambda: original_correspondence([], None), 'original'),
                                      (lambda: k_replication(4, 'abc'), 'taps'), (lambda: k_replication(4, 9, 1.5), 'partitions')])
def test_bad_arguments_are_named(call, arg):
    "A wrong kind of argument is refused with a SimulatorError naming it, never an AttributeError or a wrong answer."
    with pytest.raises(SimulatorError, match=rf"\b{arg}\b"): call()


def test_empty_inputs_prove_nothing():
    with pytest.raises(AssertionError, match="found no ISA call sites"): assert_no_pe_static([])
    with pytest.raises(AssertionError, match="empty trace"): assert_no_pe_dynamic(Trace())


def test_k_replication_argument_stops_below_128_channels():
    # with fewer than 128 channels there is room for copies: the "partitions are full" reason does not hold
    assert [k_replication(c, 9)['r'] for c in (32, 64, 127, 128)] == [4, 2, 1, 1]
