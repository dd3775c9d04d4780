"""Dimension labels, layout conversion, the f01b gather pattern and the DVE transpose, against explicit indexing."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dwlit import SimulatorError, trace
from dwlit.kernels.layouts import (
    contiguous_runs,
    convert_layout,
    f01b_gather,
    in_perm_label,
    parse_conv_labels,
    parse_layout,
    tiled_dve_transpose_210,
)
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.memory import float32, hbm, ndarray


@settings(max_examples=200, deadline=None)
@given(data=st.data(), rank=st.integers(1, 3))
def test_convert_matches_explicit_indexing(data, rank):
    src = ''.join(data.draw(st.permutations(list('bf' + ''.join(map(str, range(rank)))))))
    dst = ''.join(data.draw(st.permutations(list(src))))
    sizes = {c: data.draw(st.integers(1, 3)) for c in src}
    x = np.arange(int(np.prod([sizes[c] for c in src]))).reshape([sizes[c] for c in src])
    y = convert_layout(x, src, dst)
    assert y.shape == tuple(sizes[c] for c in dst)
    for idx in itertools.product(*[range(sizes[c]) for c in src]):
        named = dict(zip(src, idx))
        assert y[tuple(named[c] for c in dst)] == x[idx]


@pytest.mark.parametrize("labels,expect", [
    ('bf01_oi01_bf01', ('bf01', 'oi01', 'bf01')),
    ('f01b_o01i_bf01', ('f01b', 'o01i', 'bf01')),
    ('b01f_01io->b01f', ('b01f', '01io', 'b01f')),
    ('bf0_oi0_bf0', ('bf0', 'oi0', 'bf0')),
])
def test_parse(labels, expect):
    L = parse_conv_labels(labels)
    assert (L.input.label, L.filter.label, L.output.label) == expect
    assert L.input.axis('f') == expect[0].index('f') and L.filter.axis('o') == expect[1].index('o')


@pytest.mark.parametrize("bad,msg", [
    ('f01x_o01i_bf01', "letter 'x' is not allowed"), ('ff01_o01i_bf01', "appears more than once"),
    ('f01_o01i_bf01', "batch axis 'b' is missing"), ('b01_o01i_bf01', "feature axis 'f' is missing"),
    ('f02b_o02i_bf02', "digits 0..k-1"), ('fb_oi_fb', "digits 0..k-1"), ('bf0_oi01_bf01', "spatial ranks differ"),
    ('f01b_o01i', "expected three labels"), ('a_b_c_d', "expected three labels"), ('f01b_oi01->', "non-empty"),
    ('f01b_o01b_bf01', "letter 'b' is not allowed"), ('f01b_o0i_bf01', "spatial ranks differ"),
])
def test_malformed_labels(bad, msg):
    with pytest.raises(SimulatorError, match=msg.replace('.', r'\.').replace('(', r'\(')):
        parse_conv_labels(bad)


@settings(max_examples=100, deadline=None)
@given(C=st.integers(1, 6), H=st.integers(1, 5), W=st.integers(1, 5), N=st.integers(1, 4), data=st.data())
def test_f01b_gather_reads_one_batch_element(C, H, W, N, data):
    n = data.draw(st.integers(0, N - 1)); c0 = data.draw(st.integers(0, C - 1)); cc = data.draw(st.integers(1, C - c0))
    r0 = data.draw(st.integers(0, H - 1)); rows = data.draw(st.integers(1, H - r0))
    with use_core(NeuronCore()):
        t = ndarray((C, H, W, N), float32, buffer=hbm, name='img')
    x = np.arange(C * H * W * N, dtype=np.float32).reshape(C, H, W, N)
    t.write(x)
    v = t.ap(*f01b_gather(C, H, W, N, c0, cc, n, r0, rows))
    np.testing.assert_array_equal(v.numpy(), x[c0:c0 + cc, r0:r0 + rows, :, n])
    # with N > 1 every pixel is its own run (stride N); with N = 1 each channel's rows are one run, and
    # consecutive channels join up when whole channels are read
    assert contiguous_runs(v.addresses()) == (cc * rows * W if N > 1 else (1 if rows == H else cc))


def test_contiguous_runs():
    assert contiguous_runs(np.array([0, 1, 2, 5, 6, 9])) == 3
    assert contiguous_runs(np.arange(10) * 2) == 10
    assert contiguous_runs(np.array([], dtype=int)) == 0


@settings(max_examples=40, deadline=None)
@given(C=st.integers(1, 140), H=st.integers(1, 7), W=st.integers(1, 7), N=st.integers(1, 3), seed=st.integers(0, 99))
def test_dve_transpose_210(C, H, W, N, seed):
    x = np.random.default_rng(seed).standard_normal((C, H, W, N)).astype(np.float32)
    fb10 = np.empty((C, N, W, H), np.float32)
    for h, w, n in itertools.product(range(H), range(W), range(N)):
        fb10[:, n, w, h] = x[:, h, w, n]
    with trace() as tr:
        y = tiled_dve_transpose_210(fb10)
    np.testing.assert_array_equal(y, x)
    assert 'Tensor' not in tr.engines() and tr.counts()['dve_transpose'] >= -(-C // 128)


def test_in_perm_label():
    assert in_perm_label((1, 0, 3, 2)) == 'fb10' and in_perm_label(None) == 'f01b'
    with pytest.raises(SimulatorError, match="permutation"):
        in_perm_label((0, 0, 1, 2))


# --- bad input: refused with the rule, never read as something else ---

@pytest.mark.parametrize("label", ['f\u0660b', 'f0\u00b2b', 'f\U0001d7ceb', 'f0\uff11b', 'f0\u0967b'])
def test_only_ascii_digits_are_spatial_axes(label):
    "Unicode digits (Arabic-Indic, superscript, mathematical, full-width, Devanagari) pass str.isdigit but name no axis."
    assert label[1:-1].isdigit() or label[2].isdigit()
    with pytest.raises(SimulatorError, match=f"letter '{label[-2]}' is not allowed|letter '{label[1]}' is not allowed"):
        parse_layout(label)


@pytest.mark.parametrize("args,msg", [((2.7, 3, 3, 1), "C must be an integer, got C=2.7"),
                                      ((3, 3.0, 3, 1), "H must be an integer, got H=3.0"),
                                      ((3, 3, 3, True), "N must be an integer, got N=True")])
def test_f01b_gather_refuses_non_integer_dimensions(args, msg):
    "What an older check_dims((2.7, 3), ...) truncated to 2 is refused: the dimensions go through check_int."
    with pytest.raises(SimulatorError, match=msg.replace('.', r'\.')): f01b_gather(*args)


def test_long_values_are_shown_shortened():
    for call in (lambda: parse_conv_labels('x' * 5000), lambda: contiguous_runs({'a' * 5000}),
                 lambda: in_perm_label(list(range(5000)))):
        with pytest.raises(SimulatorError) as e: call()
        assert len(str(e.value)) < 300 and 'x' * 100 not in str(e.value), str(e.value)[:300]


def test_contiguous_runs_refuses_ragged_and_float_input():
    for bad in ([2.7, []], [1.5, 2.5], [[1, 2], [3]]):
        with pytest.raises(SimulatorError, match="addresses must be"): contiguous_runs(bad)
    assert contiguous_runs([3, 4, 5, 9, 10]) == 2          # counted by hand: 3..5, 9..10


def test_chapter_12_checks():
    "The checks chapter 12 once showed: decoding, round trips, in_perm, the transpose on a wide image and its refusals."
    from fastcore.test import test_fail

    from dwlit.kernels.layouts import check_transpose
    f01b = parse_layout('f01b')
    assert (f01b.axis('f'), f01b.axis('b')) == (0, 3)
    assert parse_layout('bf01').perm_to_canonical == (0, 1, 2, 3)
    assert parse_layout('o01i', 'filter').perm_to_canonical == (0, 3, 1, 2)
    assert parse_layout('b012f').spatial_rank == 3
    L = parse_conv_labels('b01f_01io->b01f')
    assert (L.input.axis('f'), L.filter.axis('o'), L.output.axis('b')) == (3, 3, 0)
    x = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    for p in itertools.permutations('bf01'):
        lab = ''.join(p)
        assert np.array_equal(convert_layout(convert_layout(x, 'bf01', lab), lab, 'bf01'), x)
    assert convert_layout(np.zeros((7, 3, 5, 1)), 'o01i', 'oi01', 'filter').shape == (7, 1, 3, 5)
    assert in_perm_label(np.array([1, 0, 3, 2])) == 'fb10'
    assert convert_layout(x, 'bf01', in_perm_label((1, 0, 3, 2))).shape == (3, 2, 5, 4)
    for call, msg in [(lambda: convert_layout(x, 'bf01', 'f0b'), "different spatial ranks"),
                      (lambda: convert_layout(x.tolist(), 'bf01', 'f01b'), "x must be a NumPy array in layout 'bf01', got list"),
                      (lambda: convert_layout([[1, 2], [3]], 'bf01', 'f01b'), "x must be a NumPy array"),
                      (lambda: convert_layout(x, 'abc', 'f01b'), "src: image label 'abc': letter 'a' is not allowed"),
                      (lambda: convert_layout(x, 'bf01', 'abc'), "dst: image label 'abc'"),
                      (lambda: parse_conv_labels('bf1_oi01_bf01'), "labels: image label 'bf1'"),
                      (lambda: in_perm_label(5), "in_perm must be an ordered sequence (a tuple or a list), got in_perm=5"),
                      (lambda: in_perm_label({1, 0, 3, 2}), "in_perm must be an ordered sequence"),
                      (lambda: contiguous_runs(-1), "addresses must be an array or a list of integers, got addresses=-1"),
                      (lambda: check_transpose((3, 200_003, 200_003, 1), 4), "img.shape=(3, 200003, 200003, 1)"),
                      (lambda: check_transpose((3, 2, 4, 1), 10**30), "itemsize must be one of 2, 4"),
                      (lambda: check_transpose((3 * 10**8, 1, 1, 3), 4), "more than the simulator's HBM budget MAX_HBM_BYTES"),
                      (lambda: check_transpose((6 * 10**7, 1, 1, 1), 4), "may issue at most 1,000,000"),
                      (lambda: tiled_dve_transpose_210([[1.0, 2.0]]), "img must be a simulated tensor, got list"),
                      (lambda: tiled_dve_transpose_210(np.zeros((2, 0, 4, 3), np.float32)), "N must be >= 1, got N=0 in img.shape=(2, 0, 4, 3)"),
                      (lambda: tiled_dve_transpose_210(np.zeros((2, 2, 30_000, 1), np.float32)),
                       "image too wide for one SBUF partition")]:
        test_fail(call, contains=msg)
    xw = np.random.default_rng(0).standard_normal((2, 3, 2000, 2)).astype(np.float32)   # a row of all batch elements: 16,000 B
    with trace() as tr: yw = tiled_dve_transpose_210(convert_layout(xw, 'f01b', 'fb10'))
    assert np.array_equal(yw, xw) and tr.counts()['dve_transpose'] == 3                # three chunks of one row


def test_draw_gather_refuses_by_name():
    from fastcore.test import test_fail

    from dwlit.kernels.layouts import draw_gather
    with use_core(NeuronCore()):
        img = ndarray((3, 3, 4, 2), float32, buffer=hbm)
        v = img.ap(*f01b_gather(3, 3, 4, 2, n=1))
        test_fail(lambda: draw_gather(None, 3, 3, 4, 2), contains="view must be an access pattern")
        test_fail(lambda: draw_gather(v, None, 3, 4, 2), contains="C must be an integer, got C=None")
        test_fail(lambda: draw_gather(v, 3, 3, 4, 10**6), contains="draw_gather draws at most 40 lines of 40 elements")
