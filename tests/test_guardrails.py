"""Guardrails for kernel writers (issue 10): a kernel that returns a non-HBM tensor or nothing, a kernel function called
with NumPy arrays outside the launcher, and NKI names dwlit does not model each get a message that says what to do."""
import numpy as np
import pytest

import dwlit
from dwlit import NotModelledError, SimulatorError, kernel, nisa, nl, simulate_kernel


def _double_into(out_buffer, ret):
    "A kernel that doubles x via SBUF into `out_buffer`, then returns what `ret(out, tile)` picks."
    def k(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=out_buffer, name='out')
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name='t')
        nisa.dma_copy(t, x)
        nisa.tensor_tensor(t, t, t, nl.add)
        if out_buffer is nl.psum: nisa.tensor_copy(out, t)
        else: nisa.dma_copy(out, t)
        return ret(out, t)
    return k


X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("ret,buffer,msg", [
    (lambda out, t: t, nl.shared_hbm, "returned Tensor('t', (2, 3), float32, nl.sbuf), which is in SBUF"),
    (lambda out, t: out, nl.psum, "which is in PSUM: on-chip memory belongs to one program"),
    (lambda out, t: t[:, 0:2], nl.shared_hbm, "returned t.ap([[3, 2], [1, 2]], offset=0), which is in SBUF"),
    (lambda out, t: None, nl.shared_hbm, "returned nothing (None); a kernel returns the HBM tensor it wrote its result into"),
    (lambda out, t: (out, t), nl.shared_hbm, "returned as item 1 of its tuple Tensor('t'"),
    (lambda out, t: (), nl.shared_hbm, "returned an empty tuple"),
    (lambda out, t: 3.0, nl.shared_hbm, "returned an object of type float, not a tensor"),
    (lambda out, t: out.numpy(), nl.shared_hbm, "numpy() of tensor 'out' inside a running kernel"),
])
@pytest.mark.parametrize("launch", ['simulate_kernel', 'decorator', 'grid'])
def test_kernel_must_return_hbm_tensors(ret, buffer, msg, launch):
    k = _double_into(buffer, ret)
    run = {'simulate_kernel': lambda: simulate_kernel(k, X),
           'decorator': lambda: kernel(k)(X),
           'grid': lambda: kernel(k)[3](X)}[launch]
    with pytest.raises(SimulatorError, match=None) as e:
        run()
    assert msg in str(e.value), str(e.value)
    if 'numpy()' not in msg: assert "kernel k (program 0)" in str(e.value)


def test_every_program_must_return_hbm():
    "Program 0 fine, program 1 returns nothing: still refused, and the message names program 1."
    def k(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm, name='out')
        t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf, name='t')
        nisa.dma_copy(t, x); nisa.dma_copy(out, t)
        return out if nl.program_id(0) == 0 else None
    with pytest.raises(TypeError, match=r"kernel k \(program 1\) returned nothing"):
        simulate_kernel(k, X, num_programs=2)


def test_hbm_results_and_tuples_of_them_pass():
    k = _double_into(nl.shared_hbm, lambda out, t: out)
    np.testing.assert_array_equal(simulate_kernel(k, X), 2 * X)
    two = _double_into(nl.shared_hbm, lambda out, t: (out, out[0:1]))
    a, b = simulate_kernel(two, X, num_programs=2)
    np.testing.assert_array_equal(a, 2 * X); np.testing.assert_array_equal(b, 2 * X[0:1])
    lst = _double_into(nl.shared_hbm, lambda out, t: [out])
    assert isinstance(simulate_kernel(lst, X), list)
    np.testing.assert_array_equal(simulate_kernel(lambda x: x, X), X)          # the input itself is an HBM tensor


def test_kernel_function_called_with_numpy_says_how_to_launch():
    k = _double_into(nl.shared_hbm, lambda out, t: out)
    with pytest.raises(TypeError) as e:
        k(X)                                          # no simulate_kernel, no @kernel
    msg = str(e.value)
    assert "dma_copy: src must be a tensor or a view of one" in msg and "got ndarray" in msg
    assert "simulate_kernel" in msg and "@kernel" in msg
    np.testing.assert_array_equal(kernel(k)(X), 2 * X)   # decorated, it works


@pytest.mark.parametrize("call,arg", [
    (lambda a: nisa.tensor_tensor(a, a, a, nl.add), 'dst'),
    (lambda a: nisa.tensor_reduce(a, nl.add, a, axis=1), 'dst'),
    (lambda a: nisa.memset(a, 0.0), 'dst'),
    (lambda a: nisa.tensor_copy(a, a), 'dst'),
    (lambda a: nisa.nc_matmul(a, a, a), 'dst'),
])
def test_every_intrinsic_names_the_numpy_operand(call, arg):
    with pytest.raises(TypeError, match=f"{arg} must be a tensor or a view of one.*got ndarray.*simulate_kernel"):
        call(X.copy())


@pytest.mark.parametrize("ns,name,hint", [
    (nl, 'load_transpose2d', None),
    (nl, 'transpose', 'use nisa.nc_transpose'),
    (nl, 'mean', None),
    (nl, 'matmul', 'use nisa.nc_matmul'),
    (nl, 'erf_dx', None),
    (nisa, 'activation_reduce', None),
    (nisa, 'tensor_scalar_reduce', None),
    (nisa, 'dropout', None),
])
def test_unmodelled_nki_names_say_so_and_list_what_is_modelled(ns, name, hint):
    "An NKI name dwlit does not model can be looked up (a helper module's table may hold it); using it raises."
    from dwlit.sim.checks import Unmodelled
    nsname = 'nl' if ns is nl else 'nisa'
    stand_in = getattr(ns, name)
    assert isinstance(stand_in, Unmodelled) and stand_in == getattr(ns, name)
    with pytest.raises(NotModelledError) as e:
        stand_in(None)
    msg = str(e.value)
    assert f"{nsname}.{name} is part of NKI, but dwlit does not model it" in msg
    if hint: assert hint in msg
    modelled = ns.NL_MODELLED if ns is nl else ns.MODELLED
    assert f"{nsname} has: {', '.join(modelled)}" in msg
    assert isinstance(e.value, AttributeError)


def test_unknown_names_and_private_names():
    with pytest.raises(NotModelledError, match=r"nl.ndaray is not a name dwlit models \(did you mean nl.ndarray\?\)"):
        nl.ndaray   # noqa: B018 (the attribute access is what must raise)
    with pytest.raises(AttributeError) as e:          # dunder and private lookups stay plain AttributeErrors
        nl.__wrapped__   # noqa: B018 (the attribute access is what must raise)
    assert not isinstance(e.value, NotModelledError)
    assert dwlit.NotModelledError is NotModelledError
    import pickle
    assert pickle.loads(pickle.dumps(nisa.memset)) is nisa.memset and pickle.loads(pickle.dumps(nl.ndarray)) is nl.ndarray


def test_unmodelled_name_inside_a_kernel():
    "The error surfaces through simulate_kernel unchanged."
    def k(x):
        t = nl.mean(x, axis=1)
        return t
    with pytest.raises(NotModelledError, match="nl.mean is part of NKI"):
        simulate_kernel(k, X)


# --- bounded work on valid input (issue 20) ---

def test_the_1d_entry_point_refuses_more_than_max_instructions_before_running():
    "N = 10**6 batch elements of a tiny row: refused from the plan at once, not after a minute of simulation."
    import time

    from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
    x, f = np.ones((10**6, 1, 1, 4), np.float32), np.ones((1, 1, 1, 3), np.float32)
    t0 = time.perf_counter()
    with pytest.raises(SimulatorError, match=r"would issue 5,000,001 instructions .* at most 1,000,000"):
        simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, x, f, ((0, 0), (0, 0)), out_shape=(10**6, 1, 1, 2))
    assert time.perf_counter() - t0 < 10
    y = simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, x[:3], f, ((0, 0), (0, 0)), out_shape=(3, 1, 1, 2))
    np.testing.assert_array_equal(y, np.full((3, 1, 1, 2), 3.0))       # ones * ones over 3 taps: 3 by hand


def test_touch_counts_is_bounded_before_it_allocates():
    "A 2^27-element step-0 view of a 4-element tensor: refused at once (it used to peak at 3.2 GB)."
    import resource

    from dwlit.sim.ap import MAX_TOUCH_ELEMENTS, touch_counts
    from dwlit.sim.core import NeuronCore, use_core
    with use_core(NeuronCore('trn1')):
        t = nl.ndarray((4,), nl.float32, buffer=nl.hbm, name='t')
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with pytest.raises(SimulatorError, match=r"shows 134,217,728 elements, more than the 16,777,216"):
            touch_counts(t.ap([[0, 2**27], [1, 1]]))
        assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000      # kB: nothing expanded
        np.testing.assert_array_equal(touch_counts(t.ap([[0, 3], [1, 4]])), [3, 3, 3, 3])   # 3 rows over all 4
        assert touch_counts(t.ap([[0, MAX_TOUCH_ELEMENTS], [1, 1]]))[0] == MAX_TOUCH_ELEMENTS  # the budget itself is counted


def test_a_huge_lhs_dilation_on_a_one_pixel_image_is_the_no_op_it_is():
    "lhs_dilation=(10**30, 10**30) on a 1x1 image dilates nothing: the answer is img * filter, not an overflow."
    from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01
    x = np.array([2.0, -1.0, 0.5, 3.0], np.float32).reshape(4, 1, 1, 1)          # f01b: C=4, H=W=N=1
    f = np.array([1.5, 2.0, -4.0, 0.25], np.float32).reshape(4, 1, 1, 1)         # o01i: a 1x1 filter
    y = simulate_kernel(conv2d_depthwise_f01b_o01i_bf01, x, f, ((0, 0), (0, 0)), lhs_dilation=(10**30, 10**30))
    np.testing.assert_array_equal(y.reshape(4), [3.0, -2.0, -2.0, 0.75])       # multiplied by hand
