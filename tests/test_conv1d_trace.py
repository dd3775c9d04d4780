"""The trace contract of the 1D depthwise path (the original's instruction order, its exact count, no nc_matmul) and
its SBUF need."""
import dataclasses
import time
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dwlit.kernels.conv1d import (
    check_conv1d_emit_order,
    conv1d_depthwise_bf01_oi01_bf01,
    conv1d_depthwise_default,
    conv1d_depthwise_f_packing,
    conv1d_emit_order,
    conv1d_instruction_count,
    conv1d_sbuf_bytes,
)
from dwlit.sim import AllocationError, SimulatorError, current_core, kernel, simulate_kernel, trace, using_target


def ceil(a, b): return -(-a // b)


@st.composite
def shapes(draw):
    N = draw(st.integers(1, 3))
    C = draw(st.one_of(st.integers(1, 520), st.sampled_from([128, 129, 256, 384, 512])))
    W_f = draw(st.integers(1, 200))
    pad = (draw(st.integers(0, 3)), draw(st.integers(0, 3)))
    F = ceil(512, W_f)
    W_out = draw(st.integers(max(1, sum(pad) - W_f + 2), F * 8))
    W = W_out + W_f - 1 - sum(pad)
    k = draw(st.integers(1, ceil(C, 128) + 2))
    return N, C, W, W_f, pad, W_out, k


def run_traced(N, C, W, W_f, pad, W_out, k):
    img = np.ones((N, C, 1, W), np.float32)
    filt = np.ones((C, 1, 1, W_f), np.float32)
    with trace() as tr:
        y = simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, img, filt, ((0, 0), pad), out_shape=(N, C, 1, W_out),
                            num_programs=k)
    return tr, y


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes())
def test_trace_contract(s):
    N, C, W, W_f, pad, W_out, k = s
    tr, _ = run_traced(*s)
    F = ceil(512, W_f)                       # flattend_input_img_f
    tiles = ceil(C, 128)
    chunks = ceil(W_out, F)
    assert check_conv1d_emit_order(tr, N, C, W_out, W_f, sum(pad) > 0, k) == len(tr)
    assert len(tr) == conv1d_instruction_count(N, C, W_out, W_f, sum(pad) > 0, k)      # the up-front count is exact
    c = tr.counts()
    assert 'nc_matmul' not in c and 'nc_transpose' not in c
    assert set(tr.engines()) <= {'DMA', 'Vector'}
    per = N * tiles * (1 if chunks == 1 else chunks)
    assert c['tensor_tensor'] == per and c['tensor_reduce'] == per
    for ins in tr.instructions:
        if ins.op == 'tensor_tensor':
            assert ins.attrs['op'] == 'multiply'
        if ins.op == 'tensor_reduce':
            assert ins.attrs == {'op': 'add', 'axis': 2}
        if ins.op in ('tensor_tensor', 'tensor_reduce'):
            if chunks == 1:
                assert ins.free_elems == W_out * W_f          # default: the whole row at once
            else:
                assert ins.free_elems <= F * W_f


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes())
def test_spmd_sharding(s):
    "Which program does which tiles: contiguous blocks of div_ceil(tiles, k), idle programs issue nothing."
    N, C, W, W_f, pad, W_out, k = s
    tr, _ = run_traced(*s)
    tiles = ceil(C, 128)
    chunks = ceil(W_out, ceil(512, W_f))
    per_tile = N * (1 if chunks == 1 else chunks)
    per_core = ceil(tiles, k)
    mults = Counter(i.program_id for i in tr.where(op='tensor_tensor'))
    for p in range(k):
        mine = max(0, min(tiles, (p + 1) * per_core) - p * per_core)
        assert mults.get(p, 0) == mine * per_tile
        if mine == 0:
            assert not [i for i in tr.instructions if i.program_id == p]
    # the partial tile's instructions (fewer than 128 partitions) come from the owner of the last tile only
    if C % 128:
        owners = {i.program_id for i in tr.where(op='tensor_tensor') if i.partitions == C % 128}
        assert owners == {(tiles - 1) // per_core}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes())
def test_one_filter_dma_and_one_image_dma_per_batch_element(s):
    N, C, W, W_f, pad, W_out, k = s
    tr, _ = run_traced(*s)
    for p in {i.program_id for i in tr.instructions}:
        dmas = [i for i in tr.where(op='dma_copy') if i.program_id == p]
        parts = {i.dst.tensor for i in dmas if i.srcs[0].tensor == 'filter'}   # filter_full and/or filter_last
        assert len([i for i in dmas if i.srcs[0].tensor == 'filter']) == len(parts)
        assert len([i for i in dmas if i.srcs[0].tensor == 'img']) == N * len(parts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes(), st.sampled_from(['default', 'f_packing']))
def test_each_kernel_called_directly_keeps_the_original_order(s, path):
    "_default and _f_packing called directly, whatever the row: the original's order and the exact count of each."
    N, C, W, W_f, pad, W_out, k = s
    fn = {'default': conv1d_depthwise_default, 'f_packing': conv1d_depthwise_f_packing}[path]
    img, filt = np.ones((N, C, 1, W), np.float32), np.ones((C, 1, 1, W_f), np.float32)
    with trace() as tr:
        simulate_kernel(fn, img, filt, np.zeros((N, C, 1, W_out), np.float32), ((0, 0), pad), num_programs=k)
    chunks = 1 if path == 'default' else ceil(W_out, ceil(512, W_f))
    check_conv1d_emit_order(tr, N, C, W_out, W_f, sum(pad) > 0, k, path)
    assert len(tr) == conv1d_instruction_count(N, C, W_out, W_f, sum(pad) > 0, k, chunks)


def test_the_order_check_can_fail():
    "A missing, a swapped or an extra instruction, or a program too many: each named with where it is."
    tr, _ = run_traced(2, 300, 20, 5, (2, 1), 19, 2)
    check_conv1d_emit_order(tr, 2, 300, 19, 5, True, 2)
    ins = list(tr.instructions)
    j = next(k for k, i in enumerate(ins) if i.op == 'tensor_reduce')
    tr.instructions[:] = ins[:j] + ins[j + 1:]
    with pytest.raises(AssertionError, match=r"program 0, instruction 5: expected tensor_reduce into out_full \(batch element 0"):
        check_conv1d_emit_order(tr, 2, 300, 19, 5, True, 2)
    tr.instructions[:] = ins + ins[-1:]
    with pytest.raises(AssertionError, match="expected nothing into -"):
        check_conv1d_emit_order(tr, 2, 300, 19, 5, True, 2)
    tr.instructions[:] = ins + [dataclasses.replace(ins[-1], program_id=2)]
    with pytest.raises(AssertionError, match=r"instructions of program\(s\) \[2\], but the launch has 2"):
        check_conv1d_emit_order(tr, 2, 300, 19, 5, True, 2)
    tr.instructions[:] = ins
    with pytest.raises(AssertionError, match="got memset into img_full"):       # told there is no padding
        check_conv1d_emit_order(tr, 2, 300, 19, 5, False, 2)
    with pytest.raises(SimulatorError, match="tr must be a Trace"):
        check_conv1d_emit_order(None, 2, 300, 19, 5, True, 2)
    with pytest.raises(SimulatorError, match="N must be an integer"):
        check_conv1d_emit_order(tr, 2.0, 300, 19, 5, True, 2)


def test_the_emit_order_reads_like_the_original():
    "_default: PART 1 for every batch element, then PART 2; _f_packing: both filter loads, then per batch element both parts."
    ops = lambda L: [(op, t) for op, t, _ in L]
    d = ops(conv1d_emit_order(2, 130, 10, 3, False))
    assert d[:6] == [('dma_copy', 'filter_full'), ('dma_copy', 'img_full'), ('memset', 'out_full'),
                     ('tensor_tensor', 'prod_buffer_full'), ('tensor_reduce', 'out_full'), ('dma_copy', 'out')]
    assert d[11] == ('dma_copy', 'filter_last') and len(d) == 2 * 11
    f = ops(conv1d_emit_order(1, 130, 10, 3, True, path='f_packing'))
    assert f == [('dma_copy', 'filter_full'), ('dma_copy', 'filter_last'), ('memset', 'img_full'), ('dma_copy', 'img_full'),
                 ('memset', 'out_full'), ('tensor_tensor', 'prod_buffer'), ('tensor_reduce', 'out_full'), ('memset', 'img_last'),
                 ('dma_copy', 'img_last'), ('memset', 'out_last'), ('tensor_tensor', 'prod_buffer_last'),
                 ('tensor_reduce', 'out_last'), ('dma_copy', 'out'), ('dma_copy', 'out')]


def test_a_call_of_too_many_instructions_is_refused_at_once():
    "N=200,000 batch elements of one channel: 1,000,001 instructions, refused before the first one (it used to run 100 s)."
    t0 = time.perf_counter()
    with pytest.raises(SimulatorError, match="would issue 1,000,001 instructions"):
        conv1d_depthwise_bf01_oi01_bf01(np.zeros((200_000, 1, 1, 10), np.float32), np.zeros((1, 1, 1, 3), np.float32),
                                        ((0, 0), (0, 0)), out_shape=(200_000, 1, 1, 8))
    assert time.perf_counter() - t0 < 5
    assert conv1d_instruction_count(199_999, 1, 8, 3, False) <= 10**6 < conv1d_instruction_count(200_000, 1, 8, 3, False)


peaks = []


@kernel
def _peak(img, filter, padding, out_shape):
    out = conv1d_depthwise_bf01_oi01_bf01(img, filter, padding, out_shape=out_shape)
    peaks.append(current_core().sbuf.peak)
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shapes(), st.sampled_from([np.float32, np.float16]))
def test_sbuf_bytes_equals_allocator_peak(s, dt):
    N, C, W, W_f, pad, W_out, k = s
    img = np.zeros((N, C, 1, W), dt)
    filt = np.zeros((C, 1, 1, W_f), dt)
    peaks.clear()
    simulate_kernel(_peak, img, filt, ((0, 0), pad), (N, C, 1, W_out), num_programs=k)
    tiles, per_core = ceil(C, 128), ceil(ceil(C, 128), k)
    path = 'default' if ceil(W_out, ceil(512, W_f)) == 1 else 'f_packing'
    expect = []
    for p in range(k):
        mine = max(0, min(tiles, (p + 1) * per_core) - p * per_core)
        partial = bool(C % 128) and mine > 0 and (p + 1) * per_core >= tiles
        need = conv1d_sbuf_bytes(path, N, W_f, W_out, W + sum(pad), mine - partial, partial, np.dtype(dt).itemsize)
        expect.append(sum(need.values()))
    assert peaks == expect


def test_capacity_boundary_is_exact():
    "At the largest W that fits, the call runs; one more element of W raises AllocationError with the numbers."
    N, C, W_f = 1, 256, 3
    with using_target('trn1'):
        cap = 192 * 1024
        def need(W): return sum(conv1d_sbuf_bytes('f_packing', N, W_f, W - W_f + 1, W, 2, False).values())
        W = max(w for w in range(1000, 40000) if need(w) <= cap)
        img = np.zeros((N, C, 1, W), np.float32); filt = np.zeros((C, 1, 1, W_f), np.float32)
        conv1d_depthwise_bf01_oi01_bf01(img, filt, ((0, 0), (0, 0)), out_shape=(N, C, 1, W - W_f + 1))
        img = np.zeros((N, C, 1, W + 1), np.float32)
        with pytest.raises(AllocationError, match=rf"needs {need(W + 1)} B of SBUF per partition.*only {cap} B of {cap} B"):
            conv1d_depthwise_bf01_oi01_bf01(img, filt, ((0, 0), (0, 0)), out_shape=(N, C, 1, W + 1 - W_f + 1))
        # two programs, one tile each: fits again
        y = conv1d_depthwise_bf01_oi01_bf01[2](img, filt, ((0, 0), (0, 0)), out_shape=(N, C, 1, W + 1 - W_f + 1))
        assert y.shape == (N, C, 1, W - 1) and (y == 0).all()
    with using_target('trn2'):          # the bigger SBUF of trn2 takes W + 1 on one program
        conv1d_depthwise_bf01_oi01_bf01(img, filt, ((0, 0), (0, 0)), out_shape=(N, C, 1, W + 1 - W_f + 1))


def test_chunk_widths_for_every_filter_length():
    "A full chunk of _f_packing is at least 512 and less than 512 + W_f elements: 1,022 for the longest filter."
    from dwlit.kernels.tiling import chunk_positions
    chunk = {W_f: chunk_positions(W_f) * W_f for W_f in range(1, 512)}
    assert min(chunk.values()) == 512 and max(chunk.values()) == 1022 and max(chunk, key=chunk.get) == 511
    assert all(chunk[w] == 2 * w for w in range(257, 512)) and all(512 <= chunk[w] < 512 + w for w in chunk)
    with trace() as tr:
        conv1d_depthwise_f_packing(np.zeros((1, 2, 1, 900), np.float32), np.zeros((2, 1, 1, 511), np.float32),
                                   np.zeros((1, 2, 1, 390), np.float32), ((0, 0), (0, 0)))
    assert {i.free_elems for i in tr.where(op='tensor_tensor')} == {1022}
