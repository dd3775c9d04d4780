"Property tests for the instructions: agreement with NumPy (fp32 arithmetic, all three dtypes), writes confined to the destination, capacity, SPMD."
import re

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dwlit
from dwlit import AllocationError, NotModelledError, SimulatorError, kernel, nisa, nl, simulate_kernel, trace
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.target import using_target

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16]
OPS = [(nl.multiply, np.multiply), (nl.add, np.add), (nl.subtract, np.subtract), (nl.maximum, np.maximum)]


def fresh(target=None):
    return use_core(NeuronCore(target))


def sbuf_from(arr, dtype):
    t = nl.ndarray(arr.shape, dtype, buffer=nl.sbuf, name='t')
    t.write(arr)
    return t


def rounded(x, dtype):
    """What storing `x` in `dtype` gives, back in fp32 (NumPy's own cast, independent of the simulator).
    One rounding from x's own precision: float64 inputs are not rounded through float32 first."""
    return np.asarray(x).astype(dtype).astype(np.float32)


shapes = st.tuples(st.integers(1, 128), st.integers(1, 9), st.integers(1, 7))


@settings(max_examples=60, deadline=None)
@given(shape=shapes, dt=st.sampled_from(DTYPES), op=st.sampled_from(OPS), seed=st.integers(0, 2**31))
def test_tensor_tensor_matches_numpy_fp32(shape, dt, op, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    with fresh():
        ta, tb, tc = sbuf_from(a, dt), sbuf_from(b, dt), nl.ndarray(shape, dt, buffer=nl.sbuf)
        nisa.tensor_tensor(tc, ta, tb, op[0])
        expect = rounded(op[1](rounded(a, dt), rounded(b, dt)), dt)   # inputs as stored, fp32 op, one rounding
        np.testing.assert_array_equal(tc.numpy().astype(np.float32), expect)


@settings(max_examples=60, deadline=None)
@given(shape=shapes, dt=st.sampled_from(DTYPES), ntrail=st.integers(1, 2), seed=st.integers(0, 2**31),
       negate=st.booleans())
def test_tensor_reduce_matches_numpy_fp32(shape, dt, ntrail, seed, negate):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    axes = (2,) if ntrail == 1 else (1, 2)
    out_shape = (shape[0], shape[1]) if ntrail == 1 else (shape[0], 1)
    with fresh():
        ta, tr = sbuf_from(a, dt), nl.ndarray(out_shape, dt, buffer=nl.sbuf)
        nisa.tensor_reduce(tr, nl.add, ta, axis=axes if ntrail == 2 else 2, negate=negate)
        s = rounded(a, dt).astype(np.float64).sum(axis=axes).reshape(out_shape)
        expect = (-s if negate else s)
        # fp32 accumulation of at most 63 terms: compare at fp32 accuracy plus one rounding of the storage dtype
        tol = {np.float32: 1e-5, np.float16: 1e-3, ml_dtypes.bfloat16: 8e-3}[dt]
        np.testing.assert_allclose(tr.numpy().astype(np.float64), expect, rtol=tol, atol=tol * 8)


# --- nothing is written outside the destination -------------------------------------------------------

free_pairs = st.lists(st.tuples(st.integers(1, 5), st.integers(1, 4)), min_size=1, max_size=2)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(P=st.integers(1, 6), F=st.integers(1, 30), nparts=st.integers(1, 6), pairs=free_pairs,
       p0=st.integers(0, 5), f0=st.integers(0, 29), which=st.sampled_from(['memset', 'tensor_tensor', 'dma_copy', 'tensor_reduce']))
def test_instructions_write_only_their_destination(P, F, nparts, pairs, p0, f0, which):
    with fresh():
        big = nl.ndarray((P, F), np.float32, buffer=nl.sbuf, name='big')
        sentinel = np.arange(P * F, dtype=np.float32).reshape(P, F) + 1000
        big.write(sentinel)
        try:
            dst = big.ap([[F, nparts]] + [list(p) for p in pairs], offset=p0 * F + f0)
        except SimulatorError:
            assume(False)  # not a valid pattern (covered by the access-pattern tests)
        addrs = dst.addresses().ravel()
        if np.unique(addrs).size != addrs.size:
            with pytest.raises(SimulatorError, match="more than once"):
                nisa.memset(dst, 0.0)
            return
        shape = dst.shape
        src = nl.ndarray(shape, np.float32, buffer=nl.sbuf, name='src')
        src.write(np.full(shape, -7.0))
        if which == 'memset': nisa.memset(dst, -7.0)
        elif which == 'tensor_tensor': nisa.tensor_tensor(dst, src, src, nl.maximum)
        elif which == 'dma_copy': nisa.dma_copy(dst, src)
        else:
            wide = nl.ndarray(shape + (3,), np.float32, buffer=nl.sbuf, name='wide')
            wide.write(np.full(shape + (3,), -7.0 / 3))
            nisa.tensor_reduce(dst, nl.add, wide, axis=len(shape))
        after = big.numpy().ravel()
        inside = np.zeros(P * F, bool); inside[addrs] = True
        np.testing.assert_array_equal(after[~inside], sentinel.ravel()[~inside])   # untouched outside
        np.testing.assert_allclose(after[inside], -7.0, rtol=1e-6)                 # written inside


# --- capacity -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("target,kib", [("trn1", 192), ("trn2", 224), ("trn3", 256)])
def test_over_capacity_allocation_raises(target, kib):
    with using_target(target), fresh() as core:
        cap = kib * 1024 // 4
        a = nl.ndarray((128, cap - 10), np.float32, buffer=nl.sbuf, name='a')
        with pytest.raises(AllocationError, match=r"'b'.*needs 44 B per partition, but only 40 of"):
            nl.ndarray((128, 11), np.float32, buffer=nl.sbuf, name='b')
        b = nl.ndarray((128, 10), np.float32, buffer=nl.sbuf, name='b')   # exactly fills it
        assert core.sbuf.used == core.sbuf.capacity == kib * 1024
        del a, b


def test_psum_capacity_is_16kib():
    with fresh():
        with pytest.raises(AllocationError, match="PSUM overflow"):
            nl.ndarray((128, 4097), np.float32, buffer=nl.psum)


# --- SPMD ---------------------------------------------------------------------------------------------

def test_each_program_has_its_own_sbuf_and_shared_hbm_output():
    @kernel
    def write_pid(x):
        out = nl.ndarray((4, 8), nl.float32, buffer=nl.shared_hbm, name='out')
        # 150 KiB per partition: two programs sharing one SBUF could not both hold this
        nl.ndarray((128, 150 * 256), nl.float32, buffer=nl.sbuf, name='hog')
        t = nl.ndarray((1, 8), nl.float32, buffer=nl.sbuf, name='t')
        nisa.memset(t, float(nl.program_id(0)))
        nisa.dma_copy(out.ap([[8, 1], [1, 8]], offset=8 * nl.program_id(0)), t)
        return out

    with trace() as tr:
        res = write_pid[4](np.zeros(1, np.float32))
    np.testing.assert_array_equal(res, np.repeat(np.arange(4.0), 8).reshape(4, 8))
    assert sorted({i.program_id for i in tr.instructions}) == [0, 1, 2, 3]
    assert tr.counts() == {'memset': 4, 'dma_copy': 4}


def test_simulate_kernel_rejects_bad_num_programs():
    with pytest.raises(SimulatorError, match="num_programs must be >= 1, got num_programs=0"):
        simulate_kernel(lambda x: x, np.zeros(1, np.float32), num_programs=0)
    with pytest.raises(SimulatorError, match="num_programs must be <= 4,096"):
        simulate_kernel(lambda x: x, np.zeros(1, np.float32), num_programs=10**9)   # hours, if it ran
    with pytest.raises(TypeError, match="num_programs must be an integer, got num_programs=True"):
        simulate_kernel(lambda x: x, np.zeros(1, np.float32), num_programs=True)


def test_new_allocations_are_nan_so_missing_memsets_show():
    @kernel
    def forgets_memset(x):
        out = nl.ndarray((2, 3), nl.float32, buffer=nl.shared_hbm, name='out')
        t = nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf, name='t')
        nisa.dma_copy(out, t)
        return out
    assert np.isnan(forgets_memset(np.zeros(1, np.float32))).all()


def test_trace_records_op_engine_program():
    with fresh():
        a = nl.ndarray((4, 4), np.float32, buffer=nl.sbuf, name='a')
        with trace() as tr:
            nisa.memset(a, 1.0)
            nisa.tensor_tensor(a, a, a, nl.add)
            p = nl.ndarray((4, 4), np.float32, buffer=nl.psum, name='p')
            nisa.nc_matmul(p, a, a)
    assert [(i.op, i.engine, i.program_id) for i in tr.instructions] == [
        ('memset', 'Vector', 0), ('tensor_tensor', 'Vector', 0), ('nc_matmul', 'Tensor', 0)]
    assert tr.counts() == {'memset': 1, 'tensor_tensor': 1, 'nc_matmul': 1}
    np.testing.assert_array_equal(p.numpy(), np.full((4, 4), 16.0))  # a == 1 + 1 == 2; 2*2 summed over 4 partitions


def test_public_api_names():
    for name in ['nl', 'nisa', 'simulate_kernel', 'trace', 'SimulatorError', 'AccessPatternError', 'AllocationError']:
        assert hasattr(dwlit, name), name
    assert issubclass(dwlit.AllocationError, dwlit.SimulatorError)
    assert issubclass(dwlit.SimulatorError, ValueError)


def test_simulate_kernel_hands_back_cores_and_places_varargs_in_hbm():
    def copy_first(*arrays):
        x = arrays[0]                                   # an HBM tensor, though it came in through *args
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm, name='out')
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name='t')
        nisa.dma_copy(t, x); nisa.dma_copy(out, t)
        return out
    cores = []
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(simulate_kernel(copy_first, x, x, num_programs=2, cores=cores), x)
    assert [(c.program_id, c.sbuf.peak) for c in cores] == [(0, 12), (1, 12)]   # 3 fp32 per partition each


@pytest.mark.parametrize("src_buf,dst_buf", [(nl.psum, nl.sbuf), (nl.sbuf, nl.psum), (nl.psum, nl.psum)])
def test_gpsimd_copy_refuses_psum(src_buf, dst_buf):
    "GpSimd reaches SBUF only: a PSUM operand is refused on it, and accepted on the Vector and Scalar engines (trn2)."
    with fresh('trn2'):
        src = nl.ndarray((4, 8), nl.float32, buffer=src_buf, name='src'); nisa.memset(src, 2.0)
        dst = nl.ndarray((4, 8), nl.bfloat16, buffer=dst_buf, name='dst')
        with pytest.raises(SimulatorError, match="tensor_copy: the GpSimd engine cannot access PSUM"):
            nisa.tensor_copy(dst, src, engine=nisa.engine.gpsimd)
        for eng in (nisa.engine.vector, nisa.engine.scalar):
            with trace() as tr: nisa.tensor_copy(dst, src, engine=eng)
            assert tr.instructions[0].engine == eng.name.capitalize() and (dst.numpy().astype(np.float32) == 2).all()
        s2 = nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf, name='s2'); nisa.memset(s2, 3.0)
        s3 = nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf, name='s3')
        nisa.tensor_copy(s3, s2, engine=nisa.engine.gpsimd)                     # SBUF to SBUF: fine on GpSimd
        assert (s3.numpy() == 3).all()


def test_nc_transpose_reads_sbuf_only():
    with fresh():
        p = nl.ndarray((4, 6), nl.float32, buffer=nl.psum, name='p'); nisa.memset(p, 1.0)
        d = nl.ndarray((6, 4), nl.float32, buffer=nl.psum, name='d')
        with pytest.raises(SimulatorError, match=r"nc_transpose: on the PE array data must be in SBUF and dst in PSUM, got psum -> psum"):
            nisa.nc_transpose(d, p)
        h = nl.ndarray((4, 6), nl.float32, buffer=nl.hbm, name='h')
        with pytest.raises(SimulatorError, match="engines read and write only SBUF and PSUM"):    # HBM: the message it always had
            nisa.nc_transpose(d, h)
        s = nl.ndarray((4, 6), nl.float32, buffer=nl.sbuf, name='s'); s.write(np.arange(24.).reshape(4, 6))
        nisa.nc_transpose(d, s)
        assert (d.numpy() == np.arange(24.).reshape(4, 6).T).all()


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from(DTYPES), st.sampled_from(DTYPES))
def test_every_operand_record_carries_its_tensors_dtype(d1, d2, d3):
    with fresh():
        a = sbuf_from(np.ones((3, 5)), d1); b = sbuf_from(np.ones((3, 5)), d2)
        o = nl.ndarray((3, 5), d3, buffer=nl.sbuf, name='o')
        with trace() as tr: nisa.tensor_tensor(o, a, b, nl.add)
        (ins,) = tr.instructions
        names = [np.dtype(d).name for d in (d3, d1, d2)]
        assert [ins.dst.dtype, ins.srcs[0].dtype, ins.srcs[1].dtype] == names and ins.dtype == names[0]
        assert str(ins.srcs[0]) == "t[sbuf][[5, 3], [1, 5]]+0"           # the text of a record does not change


@pytest.mark.parametrize("dst_buf", [nl.sbuf, nl.psum])
def test_tensor_tensor_reads_at_most_one_input_from_psum(dst_buf):
    "The ISA reference: data1 and data2 cannot both be in PSUM; one of them may be, and so may the destination."
    with fresh():
        p1 = nl.ndarray((4, 8), nl.float32, buffer=nl.psum, name='p1'); nisa.memset(p1, 2.0)
        p2 = nl.ndarray((4, 8), nl.float32, buffer=nl.psum, name='p2'); nisa.memset(p2, 3.0)
        s = nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf, name='s'); nisa.memset(s, 5.0)
        d = nl.ndarray((4, 8), nl.float32, buffer=dst_buf, name='d')
        for _ in range(2):                                   # the second time after a remembered good call, still refused
            with pytest.raises(SimulatorError, match=r"tensor_tensor: data1 p1.ap\(.*\) and data2 p2.ap\(.*\) are both "
                                                     r"in PSUM, and the engine reads at most one input from PSUM"):
                nisa.tensor_tensor(d, p1, p2, nl.multiply)
            with pytest.raises(SimulatorError, match="are both in PSUM"):
                nisa.tensor_tensor(d[:, :4], p1[:, :4], p1[:, 4:], nl.add)    # two views of one PSUM tile
            nisa.tensor_tensor(d, p1, s, nl.multiply); assert (d.numpy() == 10).all()
            nisa.tensor_tensor(d, s, p2, nl.add); assert (d.numpy() == 8).all()


# --- the refusals of chapter 4: the chapter shows one, each instruction's are here --------------------------------

def _tiles():
    "The chapter's tiles: a = 0..23 and b = 0.5 as (4, 6), prod = a * b as (4, 2, 3), col = 1..4 as (4, 1)."
    a, b = sbuf_from(np.arange(24.0).reshape(4, 6), np.float32), sbuf_from(np.full((4, 6), 0.5), np.float32)
    prod = nl.ndarray((4, 2, 3), nl.float32, buffer=nl.sbuf, name='prod')
    nisa.tensor_tensor(prod, a, b, nl.multiply)
    col = sbuf_from(np.arange(4.0).reshape(4, 1) + 1, np.float32)
    return dict(a=a, b=b, prod=prod, col=col, s=nl.ndarray((4, 2), nl.float32, buffer=nl.sbuf, name='s'),
                ts=nl.ndarray((4, 6), nl.float32, buffer=nl.sbuf, name='ts'))


ACT = nisa.ACTIVATIONS
REFUSALS = {   # case: (the call on the tiles, the words of its message)
    'tensor_tensor op by name': (lambda t: nisa.tensor_tensor(t['prod'], t['a'], t['b'], 'multiply'),
                                 "tensor_tensor: op must be one of nl.add, nl.subtract, nl.multiply"),
    'tensor_tensor step-0 dst': (lambda t: nisa.tensor_tensor(t['a'].ap([[6, 4], [0, 6]]), t['a'], t['b'], nl.add),
                                 "writes some addresses more than once"),
    'tensor_reduce axis 1 of 3': (lambda t: nisa.tensor_reduce(t['s'], nl.add, t['prod'], axis=1),
                                  "the legal values are 2; (1, 2); got axis=1"),
    'tensor_scalar wide operand': (lambda t: nisa.tensor_scalar(t['ts'], t['a'], nl.add, nl.ndarray((4, 2), nl.float32)),
                                   "operand0 must be a number or a (4, 1) tile"),
    'tensor_scalar op1 alone': (lambda t: nisa.tensor_scalar(t['ts'], t['a'], nl.add, 1.0, op1=nl.add),
                                "op1 and operand1 go together"),
    'activation ALU op': (lambda t: nisa.activation(t['ts'], nl.add, t['a']), "activation: op must be one of nl.copy, nl.exp"),
    'activation fused reduce': (lambda t: nisa.activation(t['ts'], ACT['exp'], t['a'], reduce_op=nl.add, reduce_res=t['col']),
                                "are not modelled"),
    'iota pattern size': (lambda t: nisa.iota(nl.ndarray((3, 4), nl.float32), [[1, 5]], 0), "multiply to dst's 4 elements per partition"),
    'nl.add across partitions': (lambda t: nl.add(t['a'], nl.ndarray((1, 6), nl.float32)), "never across partitions"),
    'memset None': (lambda t: nisa.memset(t['a'], None), "memset: value must be a number (an int or a float), got value=None"),
    'dma_copy into PSUM': (lambda t: nisa.dma_copy(nl.ndarray((4, 6), nl.float32, buffer=nl.psum), t['a']),
                           "is in PSUM, and DMA moves data between SBUF and HBM only"),
    'nc_matmul mixed dtypes': (lambda t: nisa.nc_matmul(nl.ndarray((4, 8), nl.float32, buffer=nl.psum), nl.ndarray((128, 4), nl.float32),
                                                        nl.ndarray((128, 8), nl.bfloat16)), "if one input is float32 the other must be too"),
    'nisa misspelt': (lambda t: nisa.tensor_tensr, "(did you mean nisa.tensor_tensor?)"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_each_instruction_refuses_bad_operands_with_the_rule(case):
    call, words = REFUSALS[case]
    with fresh():
        tiles = _tiles()
        with pytest.raises(SimulatorError, match=re.escape(words)): call(tiles)


def test_tensor_scalar_reversed_and_activation_tanh_and_unmodelled_names():
    with fresh():
        t = _tiles()
        nisa.tensor_scalar(t['ts'], t['a'], nl.subtract, 1.0, reverse0=True)                   # 1 - a, not a - 1
        np.testing.assert_array_equal(t['ts'].numpy(), 1 - np.arange(24.0).reshape(4, 6))
        nisa.activation(t['ts'], ACT['tanh'], t['a'])
        np.testing.assert_allclose(t['ts'].numpy(), np.tanh(np.arange(24.0).reshape(4, 6)), atol=1e-6)
    with pytest.raises(NotModelledError, match='activation_reduce'): nisa.activation_reduce(None)   # NKI has it, dwlit does not
