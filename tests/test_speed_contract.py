"""What the first-launch speed changes (issue 31) must keep: memory given back when a tensor's last reference goes (no
reference cycle through the whole view a tensor keeps), the same view for an operand given as a tensor, and the same
refusals."""
import gc

import numpy as np
import pytest

from dwlit.sim import isa as nisa
from dwlit.sim import language as nl
from dwlit.sim.ap import _axes, full_view, make_view
from dwlit.sim.checks import AccessPatternError
from dwlit.sim.core import NeuronCore, use_core
from dwlit.sim.memory import float32, hbm_tensor, ndarray, sbuf


def test_tensor_memory_given_back_without_the_garbage_collector():
    gc.disable()
    try:
        core = NeuronCore()
        with use_core(core):
            for _ in range(50):
                t = ndarray((128, 1024), float32, buffer=sbuf, name='t')
                full_view(t); t[:, 3:9]                  # views made and dropped
                nisa.memset(t, 0.0); nisa.tensor_tensor(t[:, 0:8], t[:, 8:16], t[:, 16:24], nl.add)   # instructions too
                del t
            assert core.sbuf.used == 0 and core.sbuf.peak == 4096
    finally:
        gc.enable()


@pytest.mark.parametrize('shape', [(128, 7), (3, 4, 5), (16,), (2, 3, 1, 4)])
def test_whole_view_is_the_view_a_pattern_gives(shape):
    with use_core(NeuronCore()):
        t = ndarray(shape, float32, buffer=sbuf, name='t') if len(shape) > 1 else hbm_tensor(np.zeros(shape, np.float32), 't')
        steps, dims, _ = _axes(t)
        v, w = full_view(t), make_view(t, [[s, n] for s, n in zip(steps, dims)], 0)
        assert v.pattern == w.pattern and v.offset == w.offset == 0
        assert v.array.shape == w.array.shape and v.array.strides == w.array.strides
        assert v.array.__array_interface__['data'] == w.array.__array_interface__['data']


def test_a_tensor_no_pattern_can_show_whole_is_refused_when_used():
    with use_core(NeuronCore()):
        t = hbm_tensor(np.zeros((1, 2, 1, 2, 1, 2), np.float32), 't')
        with pytest.raises(AccessPatternError, match='at most 5'):
            full_view(t)


def test_tensor_scalar_refuses_a_missing_operand0():
    "operand0 is required: None is refused by name (it used to reach NumPy: a TypeError, or all False for nl.equal)."
    from dwlit.sim.checks import SimulatorTypeError
    with use_core(NeuronCore()):
        a = ndarray((4, 3), float32, name='a')
        for op in (nl.multiply, nl.equal):
            with pytest.raises(SimulatorTypeError, match='tensor_scalar: operand0 must be a number'):
                nisa.tensor_scalar(a, a, op, None)
