"""Chapter 23's harness (dwlit.analysis.race): every contender runs and matches the reference in bf16, obeys the ISA's
rules for PSUM, the step widths run the same kernel and restore it, and bad arguments are refused before any data is
drawn."""
import numpy as np
import pytest

from dwlit.analysis.race import CONTENDERS, STEP_WIDTHS, TUNED, contender_trace, designs, race, race_table
from dwlit.analysis.timeline import step_width
from dwlit.sim import SimulatorError, SimulatorTypeError


@pytest.mark.parametrize("kind,name", [(k, n) for k in CONTENDERS for n in CONTENDERS[k]])
def test_every_contender_in_bf16(kind, name):
    tr = contender_trace(kind, name, 3, 40, 'bfloat16', C=20, check=True)   # raises if off the reference
    assert len(tr) > 0


def test_the_check_can_fail(monkeypatch):
    "A contender that computes the wrong thing is caught by check=True."
    import dwlit.analysis.race as race_module
    monkeypatch.setitem(race_module.CONTENDERS['1D'], 'Vector (original)', lambda img, f, out: np.zeros(out, np.float32))
    with pytest.raises(AssertionError, match="off the reference"):
        contender_trace('1D', 'Vector (original)', 3, 16, check=True)


@pytest.mark.parametrize("dtype", ['float32', 'bfloat16'])
def test_no_contender_uses_psum_where_the_isa_forbids_it(dtype):
    """The ISA reference: a tensor_tensor's two inputs cannot both be in PSUM, the GpSimd engine cannot reach PSUM, and
    the PE array reads its inputs from SBUF. Every contender obeys."""
    seen = set()
    for kind in CONTENDERS:
        for name in CONTENDERS[kind]:
            for size, width in ((3, 40), (5, 20)):
                tr = contender_trace(kind, name, size, width, dtype, C=20)
                for i in tr.instructions:
                    bufs = [s.buffer for s in i.srcs]
                    seen.add((i.op, i.engine, tuple(sorted(bufs)), i.dst.buffer))
                    if i.op == 'tensor_tensor': assert bufs.count('psum') <= 1, (name, str(i))
                    if i.engine == 'GpSimd': assert 'psum' not in bufs + [i.dst.buffer], (name, str(i))
                    if i.op in ('nc_matmul', 'nc_transpose'):
                        assert set(bufs) == {'sbuf'} and i.dst.buffer == 'psum', (name, str(i))
    assert ('tensor_copy', 'Vector', ('psum',), 'sbuf') in seen            # the check did meet PSUM operands


def test_step_width_runs_the_same_kernel_wider_and_restores_it():
    import dwlit.kernels.tiling as tiling
    narrow = contender_trace('1D', 'Vector (original)', 3, 2000, check=True)
    wide = contender_trace('1D', 'Vector, step 2048', 3, 2000, check=True)          # still checked against the reference
    assert tiling.PACK == 512
    mult = lambda tr: max(i.free_elems for i in tr.where(op='tensor_tensor'))
    assert mult(narrow) == 171 * 3 and mult(wide) > 1000                                 # div_ceil(512, 3) positions x 3 taps
    with pytest.raises(SimulatorError, match="width must be >= 1"):
        with step_width(0): pass
    with pytest.raises(RuntimeError):
        with step_width(1024): raise RuntimeError("inside")
    assert tiling.PACK == 512                                                            # restored after an error too


def test_designs_fold_the_step_alternatives_into_one():
    assert designs('1D') == ('Vector (original)', 'Vector, step tuned', 'PE, diagonal weights', 'PE, implicit GEMM')
    assert designs('2D') == ('Vector (original)', 'Vector, rows packed', 'Vector/Scalar, tensor_scalar', 'PE, diagonal weights',
                             'PE, identity sum (older variant)')
    assert all(a in CONTENDERS[k] for k in ('1D', '2D') for n in designs(k) for a in TUNED.get(n, (n,)))
    assert STEP_WIDTHS[0] == 512


@pytest.mark.parametrize("call,cls,words", [
    (lambda: contender_trace('1D', 'Vector (original)', 3, 10**9), SimulatorError, "width=1,000,000,000"),
    (lambda: contender_trace('2D', 'Vector (original)', 10**5, 10), SimulatorError, "size=100,000"),
    (lambda: contender_trace('1D', 'Vector (original)', 3, 16, C=10**7, N=10**3), SimulatorError, "bytes of input"),
    (lambda: contender_trace('1D', 'Vector (original)', 3, 16, dtype='abc'), SimulatorError, "dtype must be one of"),
    (lambda: contender_trace('1D', 'Vector (original)', 3, 16, dtype='int8'), SimulatorError, "dtype must be one of"),
    (lambda: contender_trace('3D', 'x', 1, 1), SimulatorError, "kind must be one of '1D', '2D'"),
    (lambda: contender_trace('1D', 'GPU', 1, 1), SimulatorError, "name must be one of"),
    (lambda: contender_trace('1D', 'Vector (original)', 0, 16), SimulatorError, "size must be >= 1"),
    (lambda: contender_trace('1D', 'Vector (original)', 3, 1.5), SimulatorTypeError, "width must be an integer"),
    (lambda: contender_trace('1D', 'Vector (original)', 3, 16, check='yes'), SimulatorTypeError, "check must be True or False"),
    (lambda: contender_trace('1D', 'Vector (original)', 3, 16, seed=-1), SimulatorError, "seed must be >= 0"),
    (lambda: designs({}), SimulatorError, "kind must be one of"),
    (lambda: race('1D', 3, 16, names=('nope',)), SimulatorError, "name must be one of")])
def test_bad_arguments_are_refused_before_any_data(call, cls, words):
    with pytest.raises(cls) as e: call()
    assert words in str(e.value), str(e.value)


def test_race_and_its_table():
    res = race('1D', 3, 16, names=('Vector (original)', 'PE, diagonal weights'), dtypes=('float32',), targets=('trn1',))
    assert set(res) == {('Vector (original)', 'float32', 'trn1'), ('PE, diagonal weights', 'float32', 'trn1')}
    table = race_table(res, 'x')
    assert table.count('\n| ') == 3 and f"**{res[('Vector (original)', 'float32', 'trn1')].total_ns / 1e3:.1f}**" in table


def test_race_table_wants_a_race():
    with pytest.raises(SimulatorTypeError, match="results must be what race"): race_table([1, 2], 'x')
