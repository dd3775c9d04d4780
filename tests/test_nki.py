"""dwlit's `nl` and `nisa` against the public NKI reference: each documented behaviour (defaults, PSUM accumulation,
dtype and buffer rules, the 4-free-dimension limit, the wider ISA) as a small kernel of our own, checked against an
independent NumPy computation. Each test fails on semantics that differ from the reference."""
import ml_dtypes
import numpy as np
import pytest

import dwlit.nki as nki
import dwlit.nki.language as nl
import dwlit.nki.isa as nisa
from dwlit import trace, simulate_kernel, SimulatorError, NotModelledError, AccessPatternError
from dwlit.memory import NeuronCore, use_core, using_target

RNG = np.random.default_rng(17)


def fresh(target=None):
    return use_core(NeuronCore(target))


def sbuf_from(arr, dtype=np.float32, name='t'):
    t = nl.ndarray(arr.shape, dtype, buffer=nl.sbuf, name=name)
    t.write(arr)
    return t


# --- what the core already had: checked against the reference ----------------------------------------------------

@nki.jit
def matmul_k_tiles(a_t, b):
    "C = A @ B for A^T (K, M) and B (K, N), K a multiple of 128: one nc_matmul per K tile into one PSUM tile."
    K, M = a_t.shape
    N = b.shape[1]
    out = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        lhs = nl.ndarray((128, M), a_t.dtype, buffer=nl.sbuf)
        rhs = nl.ndarray((128, N), b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhs, src=a_t[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=rhs, src=b[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(acc, lhs, rhs)                      # accumulate=None: first write overwrites, later ones add
    res = nl.ndarray((M, N), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


def test_nc_matmul_default_accumulates_over_k_tiles():
    a_t, b = RNG.standard_normal((384, 64)).astype(np.float32), RNG.standard_normal((384, 96)).astype(np.float32)
    got = matmul_k_tiles(a_t, b)
    np.testing.assert_allclose(got, a_t.astype(np.float64).T @ b, rtol=1e-4, atol=1e-4)
    last_tile_only = a_t[256:].T.astype(np.float64) @ b[256:]
    assert not np.allclose(got, last_tile_only, atol=1e-2)


def test_nc_matmul_accumulate_none_overwrites_stale_psum_on_first_write():
    with fresh():
        st, mv = sbuf_from(np.ones((128, 4))), sbuf_from(np.full((128, 8), 2.0))
        acc = nl.ndarray((4, 8), nl.float32, buffer=nl.psum)
        nisa.memset(acc, 1000.0)                            # stale contents: a first matmul write ignores them
        nisa.nc_matmul(acc, st, mv)
        np.testing.assert_array_equal(acc.numpy(), np.full((4, 8), 256.0))
        nisa.nc_matmul(acc, st, mv)
        np.testing.assert_array_equal(acc.numpy(), np.full((4, 8), 512.0))
        nisa.nc_matmul(acc, st, mv, accumulate=False)      # explicit False always overwrites
        np.testing.assert_array_equal(acc.numpy(), np.full((4, 8), 256.0))


def test_nc_matmul_positional_arguments_follow_nki_order():
    "NKI's 4th positional argument is is_stationary_onezero, not accumulate."
    import inspect
    names = list(inspect.signature(nisa.nc_matmul).parameters)
    assert names[:7] == ['dst', 'stationary', 'moving', 'is_stationary_onezero', 'is_moving_onezero', 'is_transpose',
                         'accumulate']
    with fresh():
        st, mv = sbuf_from(np.ones((128, 2))), sbuf_from(np.ones((128, 3)))
        acc = nl.ndarray((2, 3), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(acc, st, mv, False)
        nisa.nc_matmul(acc, st, mv, False)                  # False here is is_stationary_onezero: still accumulates
        np.testing.assert_array_equal(acc.numpy(), np.full((2, 3), 256.0))


def test_nc_matmul_dtype_rules_per_target():
    with fresh('trn1'):
        st, mv = sbuf_from(np.ones((128, 2)), ml_dtypes.bfloat16), sbuf_from(np.ones((128, 3)), ml_dtypes.bfloat16)
        with pytest.raises(SimulatorError, match="dst must be float32 on trn1, got bfloat16"):
            nisa.nc_matmul(nl.ndarray((2, 3), nl.bfloat16, buffer=nl.psum), st, mv)
        with pytest.raises(SimulatorError, match="if one input is float32 the other must be too"):
            nisa.nc_matmul(nl.ndarray((2, 3), nl.float32, buffer=nl.psum), sbuf_from(np.ones((128, 2))), mv)
    with fresh('trn3'):
        st, mv = sbuf_from(np.ones((128, 2)), ml_dtypes.bfloat16), sbuf_from(np.ones((128, 3)), ml_dtypes.bfloat16)
        out = nl.ndarray((2, 3), nl.bfloat16, buffer=nl.psum)
        nisa.nc_matmul(out, st, mv)
        np.testing.assert_array_equal(out.numpy().astype(np.float32), np.full((2, 3), 128.0))


def test_nc_transpose_keeps_the_dtype():
    with fresh():
        x = sbuf_from(np.arange(12.0).reshape(3, 4))
        with pytest.raises(SimulatorError, match="dst must have data's dtype float32, got bfloat16"):
            nisa.nc_transpose(nl.ndarray((4, 3), nl.bfloat16, buffer=nl.psum), x)
        y = nl.ndarray((4, 3), nl.float32, buffer=nl.psum)
        nisa.nc_transpose(y, x)
        np.testing.assert_array_equal(y.numpy(), np.arange(12.0).reshape(3, 4).T)


def two_programs(x, buffer):
    "Each of two programs copies its half of the rows of x into out."
    out = nl.ndarray(x.shape, x.dtype, buffer=buffer)
    rows = x.shape[0] // nl.num_programs()
    r0 = nl.program_id(0) * rows
    t = nl.ndarray((rows, x.shape[1]), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[r0:r0 + rows, :])
    nisa.dma_copy(dst=out[r0:r0 + rows, :], src=t)
    return out


def test_shared_hbm_outputs_are_seen_by_every_program_and_hbm_outputs_are_refused():
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(simulate_kernel(two_programs, x, nl.shared_hbm, num_programs=2), x)
    with pytest.raises(SimulatorError, match="must be nl.shared_hbm"):
        simulate_kernel(two_programs, x, nl.hbm, num_programs=2)


def test_at_most_four_free_dimensions_per_pattern():
    with fresh():
        t = nl.ndarray((2, 64), nl.float32, buffer=nl.sbuf)
        t.ap([[64, 2], [32, 2], [16, 2], [8, 2], [1, 8]])   # four free axes: fine
        with pytest.raises(AccessPatternError, match="at most 5"):
            t.ap([[64, 2], [32, 2], [16, 2], [8, 2], [4, 2], [1, 4]])
        h = nl.ndarray((64 * 2,), nl.float32, buffer=nl.hbm)
        with pytest.raises(AccessPatternError, match="at most 5"):
            h.ap([[64, 2], [32, 2], [16, 2], [8, 2], [4, 2], [2, 2], [1, 2]])


def test_engine_members_place_tensor_copy():
    with fresh():
        a, b = sbuf_from(np.ones((2, 3))), nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf)
        with trace() as tr:
            nisa.tensor_copy(b, a, engine=nisa.engine.scalar)
            nisa.tensor_copy(b, a)
        assert [i.engine for i in tr.instructions] == ['Scalar', 'Vector']
        with pytest.raises(SimulatorError, match="engine must be one of"):
            nisa.tensor_copy(b, a, engine='scalar')


def test_unmodelled_names_raise_not_modelled_error_naming_them():
    with pytest.raises(NotModelledError, match="nisa.max8 is part of NKI, but dwlit does not model it"):
        nisa.max8
    with pytest.raises(NotModelledError, match="nl.erf is part of NKI"):
        nl.erf


# --- tensor_scalar ------------------------------------------------------------------------------------------------

@nki.jit
def center_and_scale(x, mean_col):
    "out[p, :] = (x[p, :] - mean[p]) * 0.5, then 3 - out: tensor_scalar with a column, a number and reverse."
    P, F = x.shape
    out = nl.ndarray((P, F), x.dtype, buffer=nl.shared_hbm)
    t, m = nl.ndarray((P, F), x.dtype, buffer=nl.sbuf), nl.ndarray((P, 1), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=m, src=mean_col)
    r = nl.ndarray((P, F), x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(r, t, nl.subtract, m, op1=nl.multiply, operand1=0.5)
    nisa.tensor_scalar(dst=r, data=r, op0=nl.subtract, operand0=3.0, reverse0=True)
    nisa.dma_copy(dst=out, src=r)
    return out


def test_tensor_scalar_column_number_and_reverse():
    x = RNG.standard_normal((16, 10)).astype(np.float32)
    m = RNG.standard_normal((16, 1)).astype(np.float32)
    np.testing.assert_allclose(center_and_scale(x, m), 3 - (x - m) * 0.5, rtol=1e-6)


def test_tensor_scalar_reverse_on_the_second_operator():
    with fresh():
        x = sbuf_from(np.arange(6.0).reshape(2, 3) + 1)
        y = nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(y, x, nl.add, 1.0, op1=nl.divide, operand1=12.0, reverse1=True)   # 12 / (x + 1)
        np.testing.assert_allclose(y.numpy(), 12 / (np.arange(6.0).reshape(2, 3) + 2), rtol=1e-6)


def test_tensor_scalar_rounds_once_into_the_destination_dtype():
    with fresh():
        x = sbuf_from(np.full((1, 2), 1.0))
        y = nl.ndarray((1, 2), nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_scalar(y, x, nl.add, 2.0 ** -9, op1=nl.add, operand1=2.0 ** -9)   # 1 + 2^-8 in fp32, then bf16
        want = np.float32(1 + 2.0 ** -8).astype(ml_dtypes.bfloat16)
        assert y.numpy()[0, 0] == want


def test_tensor_scalar_records_its_engine_and_refuses_bad_operands():
    with fresh():
        x, y, col = sbuf_from(np.ones((4, 3))), nl.ndarray((4, 3), nl.float32, buffer=nl.sbuf), sbuf_from(np.ones((4, 1)))
        with trace() as tr:
            nisa.tensor_scalar(y, x, nl.multiply, col, name='scale')
            nisa.tensor_scalar(y, x, nl.multiply, 2.0, engine=nisa.engine.gpsimd)
        assert [(i.op, i.engine) for i in tr.instructions] == [('tensor_scalar', 'Vector'), ('tensor_scalar', 'GpSimd')]
        assert tr.instructions[0].attrs['op0'] == 'multiply' and len(tr.instructions[0].srcs) == 2
        with pytest.raises(SimulatorError, match=r"operand0 must be a number or a \(4, 1\) tile"):
            nisa.tensor_scalar(y, x, nl.add, sbuf_from(np.ones((4, 2))))
        with pytest.raises(SimulatorError, match="operand0 must be a number"):
            nisa.tensor_scalar(y, x, nl.add, 'two')
        with pytest.raises(SimulatorError, match="op0 must be one of nl.add"):
            nisa.tensor_scalar(y, x, np.add, 1.0)
        with pytest.raises(SimulatorError, match="op1 and operand1 go together"):
            nisa.tensor_scalar(y, x, nl.add, 1.0, op1=nl.add)
        with pytest.raises(SimulatorError, match="GpSimd engine cannot access PSUM"):
            nisa.tensor_scalar(nl.ndarray((4, 3), nl.float32, buffer=nl.psum), x, nl.add, 1.0, engine=nisa.engine.gpsimd)


# --- activation ---------------------------------------------------------------------------------------------------

@nki.jit
def shifted_exp(x, shift_col):
    "out = exp(0.5 * x - shift) per row: one activation with a scale and a per-partition bias."
    P, F = x.shape
    out = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm)
    t, s = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf), nl.ndarray((P, 1), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=s, src=shift_col)
    nisa.tensor_scalar(s, s, nl.multiply, -1.0)
    e = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t, bias=s, scale=0.5)
    nisa.dma_copy(dst=out, src=e)
    return out


def test_activation_scale_then_bias_then_function():
    x = RNG.standard_normal((8, 12)).astype(np.float32)
    s = RNG.standard_normal((8, 1)).astype(np.float32)
    np.testing.assert_allclose(shifted_exp(x, s), np.exp(0.5 * x.astype(np.float64) - s), rtol=1e-5)


@pytest.mark.parametrize("fn,ref", [
    ('exp', np.exp), ('tanh', np.tanh), ('sigmoid', lambda x: 1 / (1 + np.exp(-x))), ('relu', lambda x: np.maximum(x, 0)),
    ('silu', lambda x: x / (1 + np.exp(-x))), ('square', np.square), ('copy', lambda x: x), ('abs', np.abs),
    ('softplus', lambda x: np.log1p(np.exp(x))),
    ('gelu_apprx_tanh', lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))))])
def test_activation_functions_match_numpy(fn, ref):
    x = np.linspace(-4, 4, 3 * 16).reshape(3, 16)
    with fresh():
        d, y = sbuf_from(x), nl.ndarray((3, 16), nl.float32, buffer=nl.sbuf)
        with trace() as tr: nisa.activation(y, getattr(nl, fn), d)
        np.testing.assert_allclose(y.numpy(), ref(x.astype(np.float32).astype(np.float64)), rtol=2e-6, atol=2e-6)
        assert tr.instructions[0].engine == 'Scalar' and tr.instructions[0].attrs['op'] == fn


def test_activation_refuses_what_it_does_not_model():
    with fresh():
        d, y = sbuf_from(np.ones((2, 3))), nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf)
        with pytest.raises(SimulatorError, match="op must be one of nl.copy, nl.exp"):
            nisa.activation(y, nl.add, d)
        with pytest.raises(NotModelledError, match="reduce_op and reduce_res"):
            nisa.activation(y, nl.exp, d, reduce_op=nl.add, reduce_res=nl.ndarray((2, 1), nl.float32, buffer=nl.sbuf))
        with pytest.raises(SimulatorError, match=r"bias must be a number or a \(2, 1\) tile"):
            nisa.activation(y, nl.exp, d, bias=sbuf_from(np.ones((2, 3))))
        with pytest.raises(SimulatorError, match="engine must be one of nisa.engine.scalar"):
            nisa.activation(y, nl.exp, d, engine=nisa.engine.vector)
