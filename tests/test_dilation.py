"""Dilation sizes, the dilate-and-scatter kernel and the H-window plan, checked against independent constructions."""
import numpy as np
from hypothesis import given, settings, assume, strategies as st
from dwlit.kernels.dilation import (calc_dilated_dimension, calc_inverse_dilated_dimension, dilate_tile, h_window_plan,
                            plan_errors, dilated_row_sources, PAD, ZERO)


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
