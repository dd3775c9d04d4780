"""dwlit's `nl` and `nisa` against the public NKI reference: each documented behaviour (defaults, PSUM accumulation,
dtype and buffer rules, the 4-free-dimension limit, the wider ISA) as a small kernel of our own, checked against an
independent NumPy computation. Each test fails on semantics that differ from the reference."""
import math

import ml_dtypes
import numpy as np
import pytest

import dwlit.nki as nki
import dwlit.nki.isa as nisa
import dwlit.nki.language as nl
from dwlit import AccessPatternError, NotModelledError, SimulatorError, simulate_kernel, trace
from dwlit.sim.core import NeuronCore, use_core

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
    out = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm, name='out')
    acc = nl.ndarray((M, N), nl.float32, buffer=nl.psum, name='acc')
    for k in nl.affine_range(K // 128):
        lhs = nl.ndarray((128, M), a_t.dtype, buffer=nl.sbuf, name='lhs')
        rhs = nl.ndarray((128, N), b.dtype, buffer=nl.sbuf, name='rhs')
        nisa.dma_copy(dst=lhs, src=a_t[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=rhs, src=b[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(acc, lhs, rhs)                      # accumulate=None: first write overwrites, later ones add
    res = nl.ndarray((M, N), nl.float32, buffer=nl.sbuf, name='res')
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
        acc = nl.ndarray((4, 8), nl.float32, buffer=nl.psum, name='acc')
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
        acc = nl.ndarray((2, 3), nl.float32, buffer=nl.psum, name='acc')
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
        out = nl.ndarray((2, 3), nl.bfloat16, buffer=nl.psum, name='out')
        nisa.nc_matmul(out, st, mv)
        np.testing.assert_array_equal(out.numpy().astype(np.float32), np.full((2, 3), 128.0))


def test_nc_transpose_keeps_the_dtype():
    with fresh():
        x = sbuf_from(np.arange(12.0).reshape(3, 4))
        with pytest.raises(SimulatorError, match="dst must have data's dtype float32, got bfloat16"):
            nisa.nc_transpose(nl.ndarray((4, 3), nl.bfloat16, buffer=nl.psum), x)
        y = nl.ndarray((4, 3), nl.float32, buffer=nl.psum, name='y')
        nisa.nc_transpose(y, x)
        np.testing.assert_array_equal(y.numpy(), np.arange(12.0).reshape(3, 4).T)


def two_programs(x, buffer):
    "Each of two programs copies its half of the rows of x into out."
    out = nl.ndarray(x.shape, x.dtype, buffer=buffer, name='out')
    rows = x.shape[0] // nl.num_programs()
    r0 = nl.program_id(0) * rows
    t = nl.ndarray((rows, x.shape[1]), x.dtype, buffer=nl.sbuf, name='t')
    nisa.dma_copy(dst=t, src=x[r0:r0 + rows, :])
    nisa.dma_copy(dst=out[r0:r0 + rows, :], src=t)
    return out


def test_shared_hbm_outputs_are_seen_by_every_program_and_hbm_outputs_are_refused():
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(simulate_kernel(two_programs, x, nl.shared_hbm, num_programs=2), x)
    with pytest.raises(SimulatorError, match="must be nl.shared_hbm"):
        simulate_kernel(two_programs, x, nl.hbm, num_programs=2)
    np.testing.assert_array_equal(simulate_kernel(two_programs, x, nl.hbm, num_programs=1), x)   # one program: fine


def test_at_most_four_free_dimensions_per_pattern():
    with fresh():
        t = nl.ndarray((2, 64), nl.float32, buffer=nl.sbuf, name='t')
        t.ap([[64, 2], [32, 2], [16, 2], [8, 2], [1, 8]])   # four free axes: fine
        with pytest.raises(AccessPatternError, match="at most 5"):
            t.ap([[64, 2], [32, 2], [16, 2], [8, 2], [4, 2], [1, 4]])
        h = nl.ndarray((64 * 2,), nl.float32, buffer=nl.hbm, name='h')
        with pytest.raises(AccessPatternError, match="at most 5"):
            h.ap([[64, 2], [32, 2], [16, 2], [8, 2], [4, 2], [2, 2], [1, 2]])


def test_engine_members_place_tensor_copy():
    with fresh('trn2'):
        a, b = sbuf_from(np.ones((2, 3))), nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf)
        with trace() as tr:
            nisa.tensor_copy(b, a, engine=nisa.engine.scalar)
            nisa.tensor_copy(b, a)
            nisa.tensor_copy(b, a, engine=nisa.scalar_engine)       # NKI's deprecated alias of the same member
        assert [i.engine for i in tr.instructions] == ['Scalar', 'Vector', 'Scalar']
        with pytest.raises(SimulatorError, match="engine must be one of"):
            nisa.tensor_copy(b, a, engine='scalar')
    with fresh('trn1'):                                            # NeuronCore-v2: no tensor_copy on the Scalar engine
        a, b = sbuf_from(np.ones((2, 3))), nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf)
        with pytest.raises(SimulatorError, match="not on the Scalar engine on trn1"):
            nisa.tensor_copy(b, a, engine=nisa.engine.scalar)


def test_unmodelled_names_raise_not_modelled_error_naming_them():
    "An NKI name dwlit does not model stops the kernel that uses it, naming it; a name NKI does not have stops at once."
    with pytest.raises(NotModelledError, match="nisa.quantize_mx is part of NKI"):
        nisa.quantize_mx(None, None)
    with pytest.raises(NotModelledError, match="nl.erf_dx is part of NKI"):
        nl.erf_dx(None)
    with pytest.raises(NotModelledError, match="nl.gelu_typo is not a name dwlit models"):
        nl.gelu_typo   # noqa: B018 (the attribute access is what must raise)


def test_nki_names_can_be_stored_at_import_and_refuse_when_used():
    "A helper module may put NKI's names in tables when it is imported; only a kernel that uses an unmodelled one stops."
    table = {nl.gelu: 'gelu', nl.gelu_apprx_sigmoid: 'swish', nl.int32: 'i32', nl.float8_e4m3fn_x4: 'mx'}
    assert table[nl.gelu_apprx_sigmoid] == 'swish' and nl.silu_dx == nl.silu_dx and nl.silu_dx != nl.erf_dx
    default = nisa.dma_engine.dma            # an enum member of an unmodelled enum, as a default argument
    assert 'nisa.dma_engine.dma' in repr(default)
    with fresh():
        d, y = sbuf_from(np.ones((2, 3))), nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf)
        with pytest.raises(NotModelledError, match="nl.gelu_apprx_sigmoid is part of NKI, but dwlit does not model it"):
            nisa.activation(y, nl.gelu_apprx_sigmoid, d)
        with pytest.raises(NotModelledError, match="nl.power is part of NKI"):
            nisa.tensor_tensor(y, d, d, nl.power)
        with pytest.raises(NotModelledError, match="nl.bitwise_and is part of NKI"):
            nisa.tensor_scalar(y, d, nl.bitwise_and, 1.0)
        with pytest.raises(NotModelledError, match="nl.tfloat32 is part of NKI"):
            nl.ndarray((2, 3), nl.tfloat32, buffer=nl.sbuf)
        with pytest.raises(NotModelledError, match="nisa.dma_engine is part of NKI"):
            default(1)


# --- tensor_scalar ------------------------------------------------------------------------------------------------

@nki.jit
def center_and_scale(x, mean_col):
    "out[p, :] = (x[p, :] - mean[p]) * 0.5, then 3 - out: tensor_scalar with a column, a number and reverse."
    P, F = x.shape
    out = nl.ndarray((P, F), x.dtype, buffer=nl.shared_hbm, name='out')
    t, m = nl.ndarray((P, F), x.dtype, buffer=nl.sbuf), nl.ndarray((P, 1), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=m, src=mean_col)
    r = nl.ndarray((P, F), x.dtype, buffer=nl.sbuf, name='r')
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
        y = nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf, name='y')
        nisa.tensor_scalar(y, x, nl.add, 1.0, op1=nl.divide, operand1=12.0, reverse1=True)   # 12 / (x + 1)
        np.testing.assert_allclose(y.numpy(), 12 / (np.arange(6.0).reshape(2, 3) + 2), rtol=1e-6)


def test_tensor_scalar_rounds_once_into_the_destination_dtype():
    with fresh():
        x = sbuf_from(np.full((1, 2), 1.0))
        y = nl.ndarray((1, 2), nl.bfloat16, buffer=nl.sbuf, name='y')
        nisa.tensor_scalar(y, x, nl.add, 2.0 ** -9, op1=nl.add, operand1=2.0 ** -9)   # 1 + 2^-8 in fp32, then bf16
        want = np.float32(1 + 2.0 ** -8).astype(ml_dtypes.bfloat16)
        assert y.numpy()[0, 0] == want


def test_tensor_scalar_records_its_engine_and_refuses_bad_operands():
    with fresh():
        x, y, col = sbuf_from(np.ones((4, 3))), nl.ndarray((4, 3), nl.float32, buffer=nl.sbuf), sbuf_from(np.ones((4, 1)))
        with trace() as tr:
            nisa.tensor_scalar(y, x, nl.multiply, col, name='scale')
            nisa.tensor_scalar(y, x, nl.multiply, 2.0, engine=nisa.engine.scalar)
        assert [(i.op, i.engine) for i in tr.instructions] == [('tensor_scalar', 'Vector'), ('tensor_scalar', 'Scalar')]
        assert tr.instructions[0].attrs['op0'] == 'multiply' and len(tr.instructions[0].srcs) == 2
        with pytest.raises(SimulatorError, match=r"operand0 must be a number or a \(4, 1\) tile"):
            nisa.tensor_scalar(y, x, nl.add, sbuf_from(np.ones((4, 2))))
        with pytest.raises(SimulatorError, match="operand0 must be a number"):
            nisa.tensor_scalar(y, x, nl.add, 'two')
        with pytest.raises(SimulatorError, match="op0 must be one of nl.add"):
            nisa.tensor_scalar(y, x, 'add', 1.0)
        with pytest.raises(SimulatorError, match="op1 and operand1 go together"):
            nisa.tensor_scalar(y, x, nl.add, 1.0, op1=nl.add)


def test_tensor_scalar_engines_follow_the_reference():
    "GpSimd runs tensor_scalar only for rsqrt (not modelled); the Scalar engine of trn2 only multiply[+add] or add."
    with fresh('trn2'):
        x, y = sbuf_from(np.ones((4, 3))), nl.ndarray((4, 3), nl.float32, buffer=nl.sbuf)
        with pytest.raises(NotModelledError, match="GpSimd engine runs tensor_scalar only for nl.rsqrt"):
            nisa.tensor_scalar(y, x, nl.multiply, 2.0, engine=nisa.engine.gpsimd)
        nisa.tensor_scalar(y, x, nl.multiply, 2.0, op1=nl.add, operand1=1.0, engine=nisa.engine.scalar)
        np.testing.assert_array_equal(y.numpy(), np.full((4, 3), 3.0))
        with pytest.raises(SimulatorError, match="the Scalar engine of trn2 runs op0=nl.multiply"):
            nisa.tensor_scalar(y, x, nl.subtract, 2.0, engine=nisa.engine.scalar)
    with fresh('trn1'):
        x, y = sbuf_from(np.ones((4, 3))), nl.ndarray((4, 3), nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(y, x, nl.subtract, 2.0, engine=nisa.engine.scalar)
        np.testing.assert_array_equal(y.numpy(), np.full((4, 3), -1.0))


def test_comparison_operators_give_one_or_zero_and_unary_alu_operators_are_refused():
    "nl.equal, nl.less, ... compare in fp32 and write 1 where true and 0 elsewhere, in the destination's dtype."
    a = np.array([[1.0, 2.0, 3.0, np.nan]], np.float32)
    b = np.array([[1.0, 3.0, 2.0, 0.0]], np.float32)
    with fresh():
        ta, tb = sbuf_from(a), sbuf_from(b)
        for op, ref in ((nl.equal, np.equal), (nl.not_equal, np.not_equal), (nl.less, np.less),
                        (nl.less_equal, np.less_equal), (nl.greater, np.greater), (nl.greater_equal, np.greater_equal)):
            y = nl.ndarray((1, 4), nl.bfloat16, buffer=nl.sbuf, name='y')
            nisa.tensor_tensor(y, ta, tb, op)
            np.testing.assert_array_equal(y.numpy().astype(np.float32), ref(a, b).astype(np.float32))
            m = nl.ndarray((1, 4), nl.uint8, buffer=nl.sbuf, name='m')
            nisa.tensor_scalar(m, ta, op, 2.0)
            np.testing.assert_array_equal(m.numpy(), ref(a, 2.0).astype(np.uint8))
        np.testing.assert_array_equal(nl.less(ta, tb, dtype=nl.float32).numpy(), [[0.0, 1.0, 0.0, 0.0]])
        with pytest.raises(SimulatorError, match="op must be one of nl.add"):
            nisa.tensor_reduce(nl.ndarray((1, 1), nl.float32, buffer=nl.sbuf), nl.equal, ta, 1)   # not a reduction op
        with pytest.raises(NotModelledError, match="op0=nl.abs as a unary ALU operator is part of NKI"):
            nisa.tensor_scalar(nl.ndarray((1, 4), nl.float32, buffer=nl.sbuf), ta, nl.abs, 0.0)


# --- activation ---------------------------------------------------------------------------------------------------

@nki.jit
def shifted_exp(x, shift_col):
    "out = exp(0.5 * x - shift) per row: one activation with a scale and a per-partition bias."
    P, F = x.shape
    out = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm, name='out')
    t, s = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf), nl.ndarray((P, 1), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=s, src=shift_col)
    nisa.tensor_scalar(s, s, nl.multiply, -1.0)
    e = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf, name='e')
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
    ('gelu_apprx_tanh', lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    ('gelu', lambda x: np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.ravel()]).reshape(x.shape)),
    ('erf', lambda x: np.array([math.erf(v) for v in x.ravel()]).reshape(x.shape)), ('sign', np.sign),
    ('mish', lambda x: x * np.tanh(np.log1p(np.exp(x))))])
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
        with pytest.raises(NotModelledError, match="models its reduction as reduce_op=nl.add into reduce_res with reduce_cmd=reset_reduce"):
            nisa.activation(y, nl.exp, d, reduce_op=nl.add, reduce_res=nl.ndarray((2, 1), nl.float32, buffer=nl.sbuf))
        with pytest.raises(SimulatorError, match=r"bias must be a number or a \(2, 1\) tile"):
            nisa.activation(y, nl.exp, d, bias=sbuf_from(np.ones((2, 3))))
        with pytest.raises(SimulatorError, match="engine must be one of nisa.engine.scalar"):
            nisa.activation(y, nl.exp, d, engine=nisa.engine.vector)


# --- hint keywords ------------------------------------------------------------------------------------------------

def test_hint_keywords_are_accepted_and_kept_in_the_record():
    with fresh():
        h = nl.ndarray((4, 3), nl.float32, buffer=nl.hbm, name='h')
        h.write(np.ones((4, 3)))
        s = nl.ndarray((4, 3), nl.float32, buffer=nl.sbuf, name='s')
        with trace() as tr:
            nisa.dma_copy(dst=s, src=h, dge_mode=nisa.dge_mode.hwdge, oob_mode=nisa.oob_mode.error, name='load_h')
            nisa.tensor_tensor(s, s, s, nl.add, name='double')
            nisa.memset(s, 0.0, name='clear')
            nisa.dma_copy(dst=s, src=h)
        a = [i.attrs for i in tr.instructions]
        assert a[0]['dge_mode'] == 'hwdge' and a[0]['oob_mode'] == 'error' and a[0]['name'] == 'load_h'
        assert a[1]['name'] == 'double' and a[2]['name'] == 'clear'
        assert 'name' not in a[3] and 'dge_mode' not in a[3]              # not given: not recorded


def test_dma_copy_read_modify_write_adds():
    with fresh():
        h = nl.ndarray((2, 3), nl.float32, buffer=nl.hbm, name='h')
        h.write(np.arange(6.0).reshape(2, 3))
        s = sbuf_from(np.full((2, 3), 10.0))
        nisa.dma_copy(dst=s, src=h, dst_rmw_op=nl.add)
        np.testing.assert_array_equal(s.numpy(), np.arange(6.0).reshape(2, 3) + 10)
        with pytest.raises(SimulatorError, match="dst_rmw_op must be one of nl.add"):
            nisa.dma_copy(dst=s, src=h, dst_rmw_op=nl.multiply)


# --- nl's tile functions ------------------------------------------------------------------------------------------

@nki.jit
def softmax_rows(x):
    "Row softmax written with nl's tile functions: max, subtract (broadcast), exp, sum, divide by a column."
    P, F = x.shape
    out = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm, name='out')
    t = nl.zeros((P, F), nl.float32, name='t')
    nisa.dma_copy(dst=t, src=x)
    m = nl.max(t, axis=1, keepdims=True)
    e = nl.exp(nl.subtract(t, nl.broadcast_to(m, (P, F))))
    s = nl.sum(e, axis=1, keepdims=True)
    nisa.dma_copy(dst=out, src=nl.divide(e, s))
    return out


def test_nl_tile_functions_compose_into_a_softmax():
    x = RNG.standard_normal((32, 20)).astype(np.float32) * 4
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(softmax_rows(x), e / e.sum(1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_nl_zeros_fills_and_records_a_memset():
    with fresh():
        with trace() as tr:
            z = nl.zeros((4, 5), nl.bfloat16, name='z')
            o = nl.ones((4, 2), nl.float32, buffer=nl.psum, name='o')
            f = nl.full((3, 3), 2.5, nl.float32, name='f')
        assert z.numpy().astype(np.float32).sum() == 0 and (o.numpy() == 1).all() and (f.numpy() == 2.5).all()
        assert [i.op for i in tr.instructions] == ['memset'] * 3 and o.buffer is nl.psum
        with pytest.raises(NotModelledError, match="fills on-chip tensors only"):
            nl.zeros((4, 5), nl.float32, buffer=nl.hbm)


def test_nl_ds_is_a_slice():
    assert nl.ds(3, 4) == slice(3, 7)
    with fresh():
        t = sbuf_from(np.arange(20.0).reshape(2, 10))
        np.testing.assert_array_equal(t[:, nl.ds(3, 4)].numpy(), np.arange(20.0).reshape(2, 10)[:, 3:7])
    with pytest.raises(SimulatorError, match="size must be >= 1"):
        nl.ds(0, 0)


def test_nl_reductions_match_numpy_and_refuse_the_partition_axis():
    x = RNG.standard_normal((6, 4, 5))
    with fresh():
        t = sbuf_from(x)
        np.testing.assert_allclose(nl.sum(t, axis=2).numpy(), x.astype(np.float32).sum(2), rtol=1e-5)
        np.testing.assert_array_equal(nl.max(t, axis=(1, 2)).numpy(), x.astype(np.float32).max((1, 2)))
        np.testing.assert_array_equal(nl.min(t, axis=-1, keepdims=True).numpy(), x.astype(np.float32).min(2, keepdims=True))
        with pytest.raises(SimulatorError, match="axis 0 is the partition axis"):
            nl.sum(t, axis=0)


def test_nl_binary_functions_dispatch_and_broadcast_like_numpy():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    c = RNG.standard_normal((4, 1)).astype(np.float32)
    with fresh():
        tx, tc = sbuf_from(x), sbuf_from(c)
        with trace() as tr:
            r1, r2, r3 = nl.multiply(tx, tx), nl.subtract(tc, tx), nl.add(2.0, tx)
        assert [i.op for i in tr.instructions] == ['tensor_tensor', 'tensor_scalar', 'tensor_scalar']
        np.testing.assert_allclose(r1.numpy(), x * x, rtol=1e-6)
        np.testing.assert_allclose(r2.numpy(), c - x, rtol=1e-6)
        np.testing.assert_allclose(r3.numpy(), 2 + x, rtol=1e-6)
        row = RNG.standard_normal((1, 6)).astype(np.float32)
        np.testing.assert_array_equal(nl.add(tx, sbuf_from(row)).numpy(), x + row)          # a row across partitions
        with pytest.raises(SimulatorError, match="x or y must be a tile"):
            nl.add(1.0, 2.0)
        with pytest.raises(SimulatorError, match="the partition axis broadcasts from 1 only"):
            nl.broadcast_to(sbuf_from(np.ones((2, 6))), (4, 6))


def test_broadcast_across_partitions_is_exact_and_recorded():
    row = RNG.standard_normal((1, 700)).astype(np.float32)
    with fresh():
        with trace() as tr:
            b = nl.broadcast_to(sbuf_from(row), (96, 700))
        np.testing.assert_array_equal(b.numpy(), np.repeat(row, 96, axis=0))       # exact, not merely close
        assert tr.counts() == {'memset': 1, 'nc_matmul': 2, 'tensor_copy': 2}     # 700 columns: two PSUM banks


# --- reshape, .ap on a view, dtype= on .ap -----------------------------------------------------------------------

def test_tensor_reshape_is_a_row_major_view():
    x = np.arange(24.0).reshape(4, 6)
    with fresh():
        h = nl.ndarray((4, 6), nl.float32, buffer=nl.hbm, name='h')
        h.write(x)
        np.testing.assert_array_equal(h.reshape((2, 12)).numpy(), x.reshape(2, 12))
        s = sbuf_from(x)
        np.testing.assert_array_equal(s.reshape((4, 2, 3))[:, 1, :].numpy(), x.reshape(4, 2, 3)[:, 1, :])
        with pytest.raises(AccessPatternError, match="keep the partition dimension 4"):
            s.reshape((2, 12))
        with pytest.raises(AccessPatternError, match="must keep the 24 elements"):
            h.reshape((5, 5))
        np.testing.assert_array_equal(s[:, 2:6].reshape((4, 2, 2)).numpy(), x[:, 2:6].reshape(4, 2, 2))   # a view too
        with pytest.raises(AccessPatternError, match="cannot show these elements in that shape without a copy"):
            s.reshape((4, 2, 3))[:, :, 0:2].reshape((4, 4))                                        # strided: refused


def test_ap_on_a_view_addresses_the_storage_from_the_views_offset():
    "The language reference (NKI 0.5+): .ap on a view ignores the view's pattern and adds offset to the view's own."
    x = np.arange(32.0).reshape(4, 8)
    with fresh():
        s = sbuf_from(x)
        np.testing.assert_array_equal(s[:, 2:6].ap([[8, 4], [1, 3]]).numpy(), x[:, 2:5])
        np.testing.assert_array_equal(s[:, 2:6].ap([[8, 4], [1, 3]], offset=0).numpy(), x[:, 2:5])    # 0 keeps the base
        np.testing.assert_array_equal(s[:, 2:6].ap([[8, 4], [1, 3]], offset=1).numpy(), x[:, 3:6])    # N shifts past it
        inner = s.ap([[8, 4], [2, 4]])
        np.testing.assert_array_equal(inner.ap([[8, 4], [1, 2]]).numpy(), x[:, 0:2])       # the inner pattern has no effect
        h = nl.ndarray((4, 8), nl.float32, buffer=nl.hbm, name='h')
        h.write(x)
        np.testing.assert_array_equal(h[2].ap([[1, 5]]).numpy(), x[2, :5])                 # row 2's offset, 16
        np.testing.assert_array_equal(h.reshape((32,))[8:].ap([[8, 2], [1, 3]]).numpy(), x[1:3, :3])


def test_ap_dtype_reinterprets_the_bytes():
    with fresh():
        s = sbuf_from(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
        v = s.ap([[4, 2], [1, 4]], dtype=nl.bfloat16)           # 2 fp32 = 4 bf16 per partition
        assert v.shape == (2, 4) and v.dtype == nl.bfloat16
        raw = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32).view(ml_dtypes.bfloat16)
        np.testing.assert_array_equal(v.numpy().view(np.uint16), raw.view(np.uint16))
        with pytest.raises(AccessPatternError, match="out of bounds"):
            s.ap([[4, 2], [1, 5]], dtype=nl.bfloat16)


def test_an_integer_partition_index_keeps_a_size_one_axis():
    with fresh():
        s = sbuf_from(np.arange(12.0).reshape(3, 4))
        v = s[1, :]
        assert v.shape == (1, 4) and (v.numpy() == np.arange(4.0, 8.0)).all()


# --- dtypes -------------------------------------------------------------------------------------------------------

def test_int8_and_fp8_are_storage_types():
    for name, dt in (('int8', np.int8), ('uint8', np.uint8), ('float8_e4m3', ml_dtypes.float8_e4m3),
                     ('float8_e5m2', ml_dtypes.float8_e5m2), ('float8_e4m3fn', ml_dtypes.float8_e4m3fn)):
        assert getattr(nl, name) == np.dtype(dt)


@nki.jit
def widen(x):
    "Copy an 8-bit input into SBUF and convert it to fp32 on the way out."
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm, name='out')
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name='t')
    nisa.dma_copy(dst=t, src=x)
    w = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf, name='w')
    nisa.tensor_copy(dst=w, src=t)
    nisa.dma_copy(dst=out, src=w)
    return out


def test_int8_and_fp8_inputs_convert_exactly_to_fp32():
    q = np.array([[-128, -1, 0, 127]], np.int8)
    np.testing.assert_array_equal(widen(q), q.astype(np.float32))
    f8 = np.array([[0.5, -3.0, 240.0, 0.0625]], np.float32).astype(ml_dtypes.float8_e4m3)
    np.testing.assert_array_equal(widen(f8), f8.astype(np.float32))


def test_writes_into_8_bit_types_are_exact_or_refused():
    with fresh():
        src = sbuf_from(np.array([[1.0, -7.0, 100.0]]))
        i8 = nl.ndarray((1, 3), nl.int8, buffer=nl.sbuf, name='i8')
        nisa.tensor_copy(i8, src)
        np.testing.assert_array_equal(i8.numpy(), [[1, -7, 100]])
        with pytest.raises(NotModelledError, match="only whole numbers in \\[-128, 127\\]"):
            nisa.tensor_copy(i8, sbuf_from(np.array([[1.5, 0.0, 0.0]])))
        with pytest.raises(NotModelledError, match="only whole numbers"):
            nisa.tensor_copy(i8, sbuf_from(np.array([[300.0, 0.0, 0.0]])))
        f8 = nl.ndarray((1, 3), nl.float8_e4m3, buffer=nl.sbuf, name='f8')
        nisa.tensor_copy(f8, sbuf_from(np.array([[0.3, 1.0, -2.0]])))
        np.testing.assert_array_equal(f8.numpy().astype(np.float32),
                                      np.float32([0.3, 1.0, -2.0]).astype(ml_dtypes.float8_e4m3).astype(np.float32)[None])
        with pytest.raises(NotModelledError, match="fp8 overflow"):
            nisa.tensor_copy(f8, sbuf_from(np.array([[1000.0, 0.0, 0.0]])))


# --- NKIObject, typing, tile_size, jit options ------------------------------------------------------------------------

def test_nki_objects_typing_and_tile_size():
    class Config(nl.NKIObject):
        pass
    c = Config(tile=128, fused=True)
    assert c.tile == 128 and c.fused
    from dwlit.nki.typing import tensor
    from dwlit.sim.memory import Tensor
    assert tensor is Tensor
    ts = nl.tile_size      # the eight documented attributes
    assert (ts.pmax, ts.psum_fmax, ts.gemm_stationary_fmax, ts.gemm_moving_fmax, ts.bn_stats_fmax) == (128, 512, 128, 512, 512)
    assert ts.psum_min_align > 0 and ts.sbuf_min_align > 0 and ts.total_available_sbuf_size > 0


def test_jit_with_a_platform_target():
    @nki.jit(platform_target='trn3')
    def bf16_matmul(a_t, b):
        out = nl.ndarray((a_t.shape[1], b.shape[1]), nl.bfloat16, buffer=nl.shared_hbm, name='out')
        l, r = nl.ndarray(a_t.shape, a_t.dtype, buffer=nl.sbuf), nl.ndarray(b.shape, b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=l, src=a_t); nisa.dma_copy(dst=r, src=b)
        acc = nl.ndarray((a_t.shape[1], b.shape[1]), nl.bfloat16, buffer=nl.psum, name='acc')    # bf16 PSUM: trn3 only
        nisa.nc_matmul(acc, l, r)
        res = nl.ndarray(acc.shape, nl.bfloat16, buffer=nl.sbuf, name='res')
        nisa.tensor_copy(res, acc); nisa.dma_copy(dst=out, src=res)
        return out
    a_t, b = np.ones((128, 4), ml_dtypes.bfloat16), np.ones((128, 8), ml_dtypes.bfloat16)
    assert (bf16_matmul(a_t, b).astype(np.float32) == 128).all()
    with pytest.raises(SimulatorError, match="dst must be float32 on trn1"):
        bf16_matmul(a_t, b, target='trn1')


# --- iota and tensor_tensor_scan ---------------------------------------------------------------------------------

def test_iota_follows_the_reference_pseudo_code():
    with fresh():
        d = nl.ndarray((4, 2, 3), nl.float32, buffer=nl.sbuf, name='d')
        with trace() as tr:
            nisa.iota(d, [[10, 2], [-1, 3]], offset=5, channel_multiplier=100)
        want = np.zeros((4, 2, 3))
        for p in range(4):
            for w in range(2):
                for x in range(3): want[p, w, x] = 5 + 100 * p + 10 * w - x
        np.testing.assert_array_equal(d.numpy(), want)
        assert tr.instructions[0].engine == 'GpSimd'
        with pytest.raises(SimulatorError, match="must be in SBUF"):
            nisa.iota(nl.ndarray((4, 6), nl.float32, buffer=nl.psum), [[1, 6]], 0)


@nki.jit
def linear_recurrence(a, b):
    "h[t] = a[t] * h[t-1] + b[t] per row, from h[-1] = 0: one tensor_tensor_scan."
    P, T = a.shape
    out = nl.ndarray((P, T), nl.float32, buffer=nl.shared_hbm, name='out')
    ta, tb = nl.ndarray((P, T), nl.float32, buffer=nl.sbuf), nl.ndarray((P, T), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a); nisa.dma_copy(dst=tb, src=b)
    h = nl.ndarray((P, T), nl.float32, buffer=nl.sbuf, name='h')
    nisa.tensor_tensor_scan(h, ta, tb, 0.0, nl.multiply, nl.add)
    nisa.dma_copy(dst=out, src=h)
    return out


def test_tensor_tensor_scan_is_a_linear_recurrence():
    a = RNG.uniform(0.5, 1.0, (8, 30)).astype(np.float32)
    b = RNG.standard_normal((8, 30)).astype(np.float32)
    want, h = np.zeros((8, 30)), np.zeros(8)
    for t in range(30): h = a[:, t].astype(np.float64) * h + b[:, t]; want[:, t] = h
    np.testing.assert_allclose(linear_recurrence(a, b), want, rtol=1e-5, atol=1e-5)


def test_tensor_tensor_scan_reverse_and_column_initial():
    with fresh():
        d0, d1 = sbuf_from(np.full((2, 3), 2.0)), sbuf_from(np.ones((2, 3)))
        init = sbuf_from(np.array([[10.0], [20.0]]))
        r = nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf, name='r')
        nisa.tensor_tensor_scan(r, d0, d1, init, nl.subtract, nl.subtract, reverse0=True, reverse1=True)
        want, prev = np.zeros((2, 3)), np.array([10.0, 20.0])
        for i in range(3): prev = 1.0 - (prev - 2.0); want[:, i] = prev     # op1(d1, op0(prev, d0))
        np.testing.assert_array_equal(r.numpy(), want)


def test_activation_valid_input_ranges_are_enforced():
    with fresh():
        y = nl.ndarray((1, 2), nl.float32, buffer=nl.sbuf, name='y')
        with pytest.raises(SimulatorError, match=r"nl.sin is valid for inputs in \[-3.14159, 3.14159\]"):
            nisa.activation(y, nl.sin, sbuf_from(np.array([[0.0, 4.0]])))
        with pytest.raises(SimulatorError, match="nl.log is valid for inputs"):
            nisa.activation(y, nl.log, sbuf_from(np.array([[1.0, 0.0]])))
        nisa.activation(y, nl.sin, sbuf_from(np.array([[0.5, -1.0]])))
        np.testing.assert_allclose(y.numpy(), np.sin([[0.5, -1.0]]), rtol=1e-6)
        with pytest.raises(SimulatorError, match=r"nl.arctan is valid for inputs in \[-1.5708, 1.5708\]"):
            nisa.activation(y, nl.arctan, sbuf_from(np.array([[0.0, 2.0]])))
        nisa.activation(y, nl.arctan, sbuf_from(np.array([[0.5, -1.5]])))
        np.testing.assert_allclose(y.numpy(), np.arctan([[0.5, -1.5]]), rtol=1e-6)


def test_nc_matmul_transpose_mode_is_refused_not_computed_as_a_matmul():
    with fresh():
        st, mv = sbuf_from(np.eye(4)), sbuf_from(np.arange(12.0).reshape(4, 3))
        with pytest.raises(NotModelledError, match="is_transpose=True"):
            nisa.nc_matmul(nl.ndarray((4, 3), nl.float32, buffer=nl.psum), st, mv, is_transpose=True)


def test_nki_tensor_is_the_tensor_type_and_reshape_of_an_input_works_in_a_kernel():
    from dwlit.sim.memory import Tensor
    assert nl.NkiTensor is Tensor

    @nki.jit
    def running_sum(x: nl.NkiTensor) -> nl.NkiTensor:
        "Cumulative sum over the last axis of a (B, S, H) input, seen as (B * S, H): one scan."
        B, S, H = x.shape
        x2 = x.reshape((B * S, H))
        y = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm, name='y')
        t, ones = nl.ndarray((B * S, H), x.dtype, buffer=nl.sbuf), nl.ones((B * S, H), nl.float32)
        nisa.dma_copy(dst=t, src=x2)
        r = nl.ndarray((B * S, H), x.dtype, buffer=nl.sbuf, name='r')
        nisa.tensor_tensor_scan(r, ones, t, 0.0, nl.multiply, nl.add)
        nisa.dma_copy(dst=y.reshape((B * S, H)), src=r)
        return y

    x = RNG.standard_normal((3, 4, 10)).astype(np.float32)
    np.testing.assert_allclose(running_sum(x), np.cumsum(x.astype(np.float64), axis=-1), rtol=1e-5, atol=1e-5)


def test_dma_copy_arguments_follow_the_current_reference():
    "dst, src, priority, oob_mode, dge_mode, engine, name: a third positional argument is the DMA priority (a hint)."
    import inspect
    assert list(inspect.signature(nisa.dma_copy).parameters)[:7] == ['dst', 'src', 'priority', 'oob_mode', 'dge_mode',
                                                                     'engine', 'name']
    with fresh():
        h = nl.ndarray((2, 3), nl.float32, buffer=nl.hbm, name='h')
        h.write(np.arange(6.0).reshape(2, 3))
        s = nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf, name='s')
        with trace() as tr: nisa.dma_copy(s, h, 1)
        np.testing.assert_array_equal(s.numpy(), np.arange(6.0).reshape(2, 3))
        assert tr.instructions[0].attrs.get('priority') == 1 and 'oob_mode' not in tr.instructions[0].attrs


def test_enums_carry_the_reference_values_and_the_target_names_its_neuroncore():
    assert [(m.name, m.value) for m in nisa.dge_mode] == [('unknown', 0), ('swdge', 1), ('hwdge', 2), ('none', 3)]
    assert (nisa.vector_engine, nisa.scalar_engine, nisa.gpsimd_engine, nisa.tensor_engine, nisa.unknown_engine) == (
        nisa.engine.vector, nisa.engine.scalar, nisa.engine.gpsimd, nisa.engine.tensor, nisa.engine.unknown)
    for target, gen in (('trn1', 2), ('trn2', 3), ('trn3', 4)):
        with fresh(target):
            assert nisa.get_nc_version() is nisa.nc_version(gen) and nisa.get_nc_sub_version() == 0


# --- what public kernels of the tutorials and the library rely on ------------------------------------------------

@nki.jit
def add_rows(a, b):
    "c = a + b written with nl.load / nl.store, the getting-started style: each program takes its rows."
    rows = a.shape[0] // nl.num_programs()
    r0 = nl.program_id(0) * rows
    c = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm, name='c')
    x, y = nl.load(a[r0:r0 + rows, :]), nl.load(b[r0:r0 + rows, :], dtype=nl.float32)
    nl.store(c[r0:r0 + rows, :], value=nl.add(x, y))
    return c


def test_nl_load_and_store_move_tiles_between_hbm_and_sbuf():
    a, b = RNG.standard_normal((8, 5)).astype(np.float16), RNG.standard_normal((8, 5)).astype(np.float16)
    with trace() as tr: got = add_rows[2](a, b)
    want = (a.astype(np.float32) + b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(got, want)
    assert tr.counts() == {'dma_copy': 6, 'tensor_tensor': 2}
    with fresh():
        s = sbuf_from(np.ones((2, 3)))
        with pytest.raises(SimulatorError, match="nl.load: src .* is in SBUF; it loads from HBM"):
            nl.load(s)
        h = nl.ndarray((3, 2), nl.float32, buffer=nl.hbm, name='h')
        with pytest.raises(SimulatorError, match=r"nl.store: dst .* has shape \(3, 2\) and value \(2, 3\)"):
            nl.store(h, s)


def test_nc_matmul_accumulate_true_needs_an_earlier_matmul_write():
    "accumulate=True on PSUM no matmul wrote is undefined (on trn1/trn2 also after memset); trn3 accepts a memset start."
    for target in ('trn1', 'trn2', 'trn3'):
        with fresh(target):
            st, mv = sbuf_from(np.ones((128, 2))), sbuf_from(np.ones((128, 3)))
            acc = nl.ndarray((2, 3), nl.float32, buffer=nl.psum, name='acc')
            with pytest.raises(SimulatorError, match="accumulate=True on PSUM elements no earlier nc_matmul wrote"):
                nisa.nc_matmul(acc, st, mv, accumulate=True)
            nisa.memset(acc, 1.0)
            if target == 'trn3':
                nisa.nc_matmul(acc, st, mv, accumulate=True)
                np.testing.assert_array_equal(acc.numpy(), np.full((2, 3), 129.0))
            else:
                with pytest.raises(SimulatorError, match=f"on {target} also after memset"):
                    nisa.nc_matmul(acc, st, mv, accumulate=True)
            nisa.nc_matmul(acc, st, mv, accumulate=False)
            nisa.nc_matmul(acc, st, mv, accumulate=True)
            np.testing.assert_array_equal(acc.numpy(), np.full((2, 3), 256.0))


def test_nc_matmul_moving_free_size_per_target():
    "At most 512 moving columns (one PSUM bank) on trn1/trn2; on trn3 up to 4096 for an fp32 dst, 8192 for bf16."
    with fresh('trn3'):
        st, mv = sbuf_from(np.ones((4, 2))), sbuf_from(np.arange(4 * 2048.0).reshape(4, 2048) % 7)
        acc = nl.ndarray((2, 2048), nl.float32, buffer=nl.psum, name='acc')
        nisa.nc_matmul(acc, st, mv)
        np.testing.assert_array_equal(acc.numpy(), np.ones((4, 2)).T @ (np.arange(4 * 2048.0).reshape(4, 2048) % 7))
    with fresh('trn2'):
        st, mv = sbuf_from(np.ones((4, 2))), sbuf_from(np.ones((4, 513)))
        with pytest.raises(SimulatorError, match="moving free size must be <= 512 on trn2"):
            nisa.nc_matmul(nl.ndarray((2, 513), nl.float32, buffer=nl.psum), st, mv)


def test_nc_matmul_double_row_mode_is_refused_not_computed_as_a_plain_matmul():
    with fresh('trn2'):
        st, mv = sbuf_from(np.ones((128, 2)), ml_dtypes.float8_e4m3), sbuf_from(np.ones((128, 3)), ml_dtypes.float8_e4m3)
        with pytest.raises(NotModelledError, match="double_row"):
            nisa.nc_matmul(nl.ndarray((2, 3), nl.float32, buffer=nl.psum), st, mv, perf_mode=nisa.matmul_perf_mode.double_row)
        with trace() as tr:
            nisa.nc_matmul(nl.ndarray((2, 3), nl.float32, buffer=nl.psum), st, mv, perf_mode=nisa.matmul_perf_mode.none)
        assert tr.instructions[0].attrs['perf_mode'] == 'none'


def test_nc_transpose_flattens_the_free_axes():
    x = np.arange(24.0).reshape(4, 2, 3)
    with fresh():
        y = nl.ndarray((6, 4), nl.float32, buffer=nl.psum, name='y')
        nisa.nc_transpose(y, sbuf_from(x))
        np.testing.assert_array_equal(y.numpy(), x.reshape(4, 6).T)
        with pytest.raises(SimulatorError, match=r"dst must be \(6, 4\)"):
            nisa.nc_transpose(nl.ndarray((4, 6), nl.float32, buffer=nl.psum), sbuf_from(x))


def test_memset_into_8_bit_types_is_exact_or_refused():
    with fresh():
        i8, u8, f8 = (nl.ndarray((2, 3), dt, buffer=nl.sbuf) for dt in (nl.int8, nl.uint8, nl.float8_e4m3))
        nisa.memset(i8, -7); nisa.memset(u8, 200); nisa.memset(f8, 0.5)
        assert (i8.numpy() == -7).all() and (u8.numpy() == 200).all() and (f8.numpy().astype(np.float32) == 0.5).all()
        for t, v in ((i8, 300), (i8, 2.5), (u8, -1)):
            with pytest.raises(NotModelledError, match="only whole numbers"):
                nisa.memset(t, v)
        with pytest.raises(NotModelledError, match="fp8 overflow"):
            nisa.memset(f8, 1e6)


def test_activation_bias_is_a_column_on_trn1():
    "NeuronCore-v2 takes the bias as a (P, 1) vector only; from NeuronCore-v3 a constant too."
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    for target in ('trn1', 'trn2'):
        with fresh(target):
            y = nl.ndarray((2, 3), nl.float32, buffer=nl.sbuf, name='y')
            nisa.activation(y, nl.exp, sbuf_from(x), bias=sbuf_from(np.full((2, 1), 0.5)))
            np.testing.assert_allclose(y.numpy(), np.exp(x + 0.5), rtol=1e-6)
            if target == 'trn1':
                with pytest.raises(SimulatorError, match=r"bias must be a \(2, 1\) tile on trn1"):
                    nisa.activation(y, nl.exp, sbuf_from(x), bias=0.5)
            else:
                nisa.activation(y, nl.exp, sbuf_from(x), bias=0.5)
                np.testing.assert_allclose(y.numpy(), np.exp(x + 0.5), rtol=1e-6)


@nki.jit
def scaled_sum_at_addresses(x, y):
    "out = 2x + y with every SBUF tile at an address of its own choosing, as a stack allocator places them."
    P, F = x.shape
    out = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm, name='out')
    a = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf, address=(0, 0), name='a')
    b = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf, address=(0, 4 * F), name='b')
    nisa.dma_copy(dst=a, src=x)
    nisa.dma_copy(dst=b, src=y)
    c = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf, address=(0, 8 * F), name='c')
    nisa.tensor_scalar(c, a, nl.multiply, 2.0)
    nisa.tensor_tensor(c, c, b, nl.add)
    d = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf, address=(0, 0), name='d')     # a's memory again: a is done with
    nisa.tensor_copy(dst=d, src=c)
    nisa.dma_copy(dst=out, src=d)
    return out


def test_tensors_at_fixed_addresses_and_memory_given_again():
    x, y = RNG.standard_normal((16, 8)).astype(np.float32), RNG.standard_normal((16, 8)).astype(np.float32)
    np.testing.assert_allclose(scaled_sum_at_addresses(x, y), 2 * x.astype(np.float64) + y, rtol=1e-6)
    with fresh():
        a = nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf, address=(0, 0), name='a')
        nisa.memset(a, 1.0)
        b = nl.ndarray((2, 4), nl.bfloat16, buffer=nl.sbuf, address=(2, 24), name='b')    # overlaps a's partitions 2-3, bytes 24-31
        nisa.memset(b, 2.0)
        with pytest.raises(NotModelledError, match="its memory was given to 'b' at address \\(2, 24\\)"):
            nisa.tensor_copy(dst=b, src=a)                   # a read after its memory went to b: not modelled
        c = nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf, address=(0, 64), name='c')     # beside b: both stay usable
        nisa.memset(c, 3.0); nisa.tensor_copy(dst=c[0:2, 0:4], src=b)
        assert (c.numpy()[0:2, 0:4] == 2).all() and (c.numpy()[2:] == 3).all()
        with pytest.raises(SimulatorError, match="must lie within 128 partitions"):
            nl.ndarray((64, 8), nl.float32, buffer=nl.sbuf, address=(100, 0))
        with pytest.raises(SimulatorError, match="must lie within"):
            nl.ndarray((4, 8), nl.float32, buffer=nl.psum, address=(0, 16 * 1024 - 16))
        with pytest.raises(NotModelledError, match=r"address=\.\.\.\) of .* in shared_hbm"):
            nl.ndarray((4, 8), nl.float32, buffer=nl.shared_hbm, address=(0, 0))


def scale_into(x, out, alpha):
    "Each program writes alpha * its rows of x into `out`, an array the caller passed in; it returns nothing."
    rows = x.shape[0] // nl.num_programs()
    r0 = nl.program_id(0) * rows
    nl.store(out[r0:r0 + rows, :], nl.multiply(nl.load(x[r0:r0 + rows, :]), alpha))


def test_inputs_a_kernel_writes_are_updated_in_place_as_nki_simulate_does():
    x = RNG.standard_normal((8, 6)).astype(np.float32)
    out = np.zeros_like(x)
    assert nki.simulate(nki.jit(scale_into)[2])(x, out, 3.0) is None
    np.testing.assert_array_equal(out, 3 * x)                    # the caller's array now holds the result
    assert not np.shares_memory(out, x) and (out != 0).all()

    def scale_and_return_a_copy(x, out):
        scale_into(x, out, 2.0)
        res = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm, name='res')
        nl.store(res, nl.load(x))
        return res
    out2 = np.zeros_like(x)
    got = simulate_kernel(scale_and_return_a_copy, x, out2)
    np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(out2, 2 * x)

    def writes_nothing(x, out):
        nl.load(x)
    with pytest.raises(SimulatorError, match="returned nothing"):
        simulate_kernel(writes_nothing, x, np.zeros_like(x))


def test_nki_view_methods_dwlit_lacks_are_named():
    with fresh():
        t = nl.ndarray((4, 2, 3), nl.float32, buffer=nl.sbuf, name='t')
        for call in (lambda: t.permute((0, 2, 1)), lambda: t[:, 0].broadcast(1, 5), lambda: t.view(nl.bfloat16),
                     lambda: t.get_pattern()):
            with pytest.raises(NotModelledError, match=r"\(\) of an NkiTensor is part of NKI, but dwlit does not model it"):
                call()
        assert not hasattr(t, 'no_such_thing') and not hasattr(t[:, 0], 'matmul_written')
