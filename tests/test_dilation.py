"""Dilation sizes, the dilate-and-scatter kernel and the H-window plan, checked against independent constructions."""
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dwlit.kernels.dilation import (
    PAD,
    ZERO,
    calc_dilated_dimension,
    calc_inverse_dilated_dimension,
    dilate_tile,
    dilated_row_sources,
    h_window_plan,
    plan_errors,
)


@settings(max_examples=500, deadline=None)
@given(d=st.integers(1, 10_000), dil=st.integers(1, 64))
def test_round_trip(d, dil):
    D = calc_dilated_dimension(d, dil)
    if d < 200 and dil < 8:                            # spell it out: X, dil - 1 dots, X, ...
        assert D == len(('X' + '.' * (dil - 1)) * (d - 1) + 'X')
    assert calc_inverse_dilated_dimension(D, dil) == d


@settings(max_examples=500, deadline=None)
@given(D=st.integers(1, 5_000), dil=st.integers(1, 64))
def test_inverse_counts_samples(D, dil):
    starts = len(range(0, D, dil))                     # samples at positions 0, dil, 2*dil, ... below D
    assert calc_inverse_dilated_dimension(D, dil) == starts
    assert calc_dilated_dimension(starts, dil) <= D


def test_row_sources():
    assert dilated_row_sources(3, (1, 2), 3) == [PAD, 0, ZERO, ZERO, 1, ZERO, ZERO, 2, PAD, PAD]
    assert dilated_row_sources(1, (0, 0), 5) == [0]


@settings(max_examples=60, deadline=None)
@given(P=st.integers(1, 128), H=st.integers(1, 6), W=st.integers(1, 6), dh=st.integers(1, 4), dw=st.integers(1, 4),
       pads=st.tuples(*[st.integers(0, 3)] * 4), seed=st.integers(0, 99))
def test_dilate_tile_matches_numpy(P, H, W, dh, dw, pads, seed):
    x = np.random.default_rng(seed).standard_normal((P, H, W)).astype(np.float32)
    got = dilate_tile(x, (dh, dw), ((pads[0], pads[1]), (pads[2], pads[3])))
    want = np.zeros((P, pads[0] + (H - 1) * dh + 1 + pads[1], pads[2] + (W - 1) * dw + 1 + pads[3]), np.float32)
    for i in range(H):
        for j in range(W):
            want[:, pads[0] + i * dh, pads[2] + j * dw] = x[:, i, j]
    np.testing.assert_array_equal(got, want)


plan_shapes = dict(in_H=st.integers(1, 60), k_H=st.integers(1, 9), pt=st.integers(0, 8), pb=st.integers(0, 8),
                   dil=st.integers(1, 5), m=st.integers(1, 70))


@settings(max_examples=3000, deadline=None)
@given(**plan_shapes)
def test_fixed_plan_reads_the_right_rows(in_H, k_H, pt, pb, dil, m):
    assume(calc_dilated_dimension(in_H, dil) + pt + pb >= k_H)
    mh = max(min(in_H, m), k_H)
    assert plan_errors(in_H, k_H, (pt, pb), dil, mh) == []
    plan = h_window_plan(in_H, k_H, (pt, pb), dil, mh)
    assert all(t.window_size >= 1 for t in plan)                        # the 'advance by 1' branch never runs
    assert all(t.load_h_size <= mh for t in plan)                        # loads fit the image buffer's rows


@settings(max_examples=1500, deadline=None)
@given(**plan_shapes)
def test_literal_plan_is_right_unless_bottom_padding_2(in_H, k_H, pt, pb, dil, m):
    assume(calc_dilated_dimension(in_H, dil) + pt + pb >= k_H)
    mh = max(min(in_H, m), k_H)
    if pb < 2:
        assert plan_errors(in_H, k_H, (pt, pb), dil, mh, 'literal') == []


def test_literal_plan_smallest_failures():
    assert plan_errors(2, 4, (0, 2), 1, 4, 'literal') == [0]
    assert plan_errors(3, 5, (3, 3), 1, 5, 'literal') == [4]
    assert plan_errors(2, 4, (0, 2), 1, 4) == []


def test_refusals_name_the_argument():
    "Chapter 13's functions refuse bad arguments naming them (the hostile-input report's cases among them)."
    import re

    import pytest

    from dwlit.kernels.dilation import (
        draw_dilated,
        draw_h_window,
        h_window_animation,
        h_window_widget,
        plan_table,
        tile_rows,
    )
    from dwlit.sim import SimulatorError
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = h_window_plan(5, 3, (2, 3), 2, 3)[1]
    for call, msg in [(lambda: plan_table([]), "plan must be a non-empty list of HTile records"),
                      (lambda: plan_table([1]), "plan must be a non-empty list"),
                      (lambda: h_window_plan(10**30, 3, (0, 0), 1, 3), "in_H=a 31-digit integer"),
                      (lambda: tile_rows(t, 10**30), "dil_H_lhs=a 31-digit integer"),
                      (lambda: plan_errors(5, 3, (0, 0), 10**30, 3), "dil_H_lhs="),
                      (lambda: plan_errors(10**5, 200, (0, 0), 1, 200), "max_h_tile_size=200"),
                      (lambda: draw_h_window(5, 3, (200, 2), 1, 3), "in_H=5, H_padding=(200, 2) and dil_H_lhs=1 make 207"),
                      (lambda: draw_dilated(None, x, (1, 1), ((0, 0), (0, 0))), "x2d must be a 2-D NumPy array, got NoneType"),
                      (lambda: draw_dilated(x, None, (1, 1), ((0, 0), (0, 0))), "dilated must be a 2-D NumPy array"),
                      (lambda: draw_dilated(x, x, None, ((0, 0), (0, 0))), "lhs_dilation must be an ordered sequence"),
                      (lambda: draw_dilated(x, x, (1, 1), None), "padding must be"),
                      (lambda: draw_dilated(x, x, (2, 1), ((0, 0), (0, 0))), "dilated must be x2d (3, 4) dilated"),
                      (lambda: h_window_widget(in_H=None), "in_H must be an integer, got in_H=None"),
                      (lambda: h_window_widget(H_padding=None), "H_padding must be an ordered sequence"),
                      (lambda: h_window_animation(dpi=None), "dpi must be an integer, got dpi=None")]:
        with pytest.raises(SimulatorError, match=re.escape(msg)): call()


def test_dilate_tile_matches_the_reference():
    "dilate_tile against chapter 7's dilate_pad on a grid of shapes, dilations and paddings."
    import itertools

    from dwlit.kernels.reference import dilate_pad
    rng = np.random.default_rng(0)
    for H, W, dh, dw, pl, pr in itertools.product((1, 3), (1, 4), (1, 2, 4), (1, 3), (0, 2), (0, 1)):
        xi = rng.standard_normal((3, H, W)).astype(np.float32)
        pads = ((pl, pr), (pr, pl))
        assert np.array_equal(dilate_tile(xi, (dh, dw), pads), dilate_pad(xi[..., None], (dh, dw), pads)[..., 0])
