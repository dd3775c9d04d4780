"""The exercises of chapters 25-29 (dwlit.exercises.apps): each solution passes on fresh cases, a plausible wrong
answer to each fails with the rule it breaks named, a stub is *not done*, and the checks refuse bad arguments."""
import numpy as np
import pytest

import dwlit.nki.isa as nisa
import dwlit.nki.language as nl
from dwlit.exercises import EXERCISES, NotDone, reveal_solution
from dwlit.exercises.apps import (
    TOL,
    check_conv2d_multiplies,
    check_explain_dispatch,
    check_layer_call,
    check_matches,
    check_refusal,
    check_running_sum,
    check_strided_conv1d,
    conv1d_strided_tile_solution,
    conv2d_multiplies_solution,
    explain_dispatch_solution,
    layer_call_solution,
    matches_solution,
)

CHECKS = {'25.1': check_layer_call, '25.2': check_refusal, '26.1': check_strided_conv1d,
          '26.2': check_conv2d_multiplies, '27.1': check_running_sum,
          '28.1': check_matches, '29.1': check_explain_dispatch}


def wrong(r, *phrases):
    "Assert that verdict `r` is *not right yet* and names each of `phrases`."
    assert r.status == 'wrong', r.message
    for p in phrases: assert r.says(p), (p, r.message)


@pytest.mark.parametrize('n', CHECKS)
def test_registered_with_its_check_and_chapter(n):
    e = EXERCISES[n]
    assert e.check is CHECKS[n] and e.chapter.startswith(n.split('.')[0] + '_')


@pytest.mark.parametrize('n', CHECKS)
def test_solution_passes_on_fresh_cases(n):
    rs = [CHECKS[n](EXERCISES[n].solution, show=False) for _ in range(3)]
    assert all(r.passed for r in rs), [r.message for r in rs]
    assert len({r.seed for r in rs}) > 1                    # a new seed every call


@pytest.mark.parametrize('n', CHECKS)
def test_stub_is_not_done(n):
    def stub(*args): raise NotDone("write your answer here")
    r = CHECKS[n](stub)
    assert r.status == 'not done' and r.says('still raises NotDone'), r.message


@pytest.mark.parametrize('n', CHECKS)
def test_bad_arguments_refused(n):
    for kw, rule in ((dict(fn='layer_call'), 'fn must be your function'), (dict(fn=print, show=1), 'show must be True or False'),
                     (dict(fn=print, seed='x'), 'seed must be an integer')):
        with pytest.raises(Exception, match=rule): CHECKS[n](**kw)


@pytest.mark.parametrize('n', CHECKS)
def test_seed_replays(n):
    def half(*args): raise ValueError("no")
    r = CHECKS[n](half)
    assert r.status == 'wrong' and f"seed={r.seed}" in r.message
    assert CHECKS[n](half, seed=r.seed).message == r.message


def test_reveal_solution_prints_it(capsys):
    reveal_solution('27.1')
    assert 'tensor_tensor_scan' in capsys.readouterr().out


# 25.1 -------------------------------------------------------------------------------------------------------------
def test_layer_call_bf01_for_2d_refused():
    def as_bf01(layer, N):
        if layer.dims == 1: return layer_call_solution(layer, N)
        return (N, layer.C, *layer.size), (layer.C, *layer.kernel, 1), layer.padding
    wrong(check_layer_call(as_bf01), 'which is bf01', 'f01b = (C, H, W, N)')


def test_layer_call_1d_padding_and_3_axes_refused():
    wrong(check_layer_call(lambda l, N: layer_call_solution(l, N)[:2] + (l.padding,)), '((0, 0), (left, right))')
    def three_axes(l, N):
        img, f, p = layer_call_solution(l, N)
        return ((N, l.C, l.size[0]) if l.dims == 1 else img), f, p
    wrong(check_layer_call(three_axes), 'bf01 has four axes')


def test_layer_call_asking_kernel_args_refused():
    from dwlit.apps.layers import kernel_args
    wrong(check_layer_call(lambda l, N: kernel_args(l, N)[1:4]), 'your code calls kernel_args')


def test_refusal_slips_named():
    only_2d_stride = lambda l: ('stride' if l.dims == 2 and l.stride != 1 else
                                'taps' if l.dims == 1 and l.kernel[0] >= 512 else None)
    off_by_one = lambda l: 'stride' if l.stride != 1 else ('taps' if l.dims == 1 and l.kernel[0] > 512 else None)
    taps_in_2d = lambda l: 'stride' if l.stride != 1 else ('taps' if l.taps >= 49 else None)
    for fn, rule in ((only_2d_stride, 'the kernels refuse it (stride)'), (off_by_one, 'W_f must be < 512'),
                     (taps_in_2d, "you say 'taps', but the kernels take it: only the 1D entry point limits the taps"),
                     (lambda l: 'no', "return None (the kernels take it), 'stride' or 'taps'")):
        wrong(check_refusal(fn), rule)
    from dwlit.apps.layers import in_contract
    def asks(layer):
        return in_contract(layer) or None
    wrong(check_refusal(asks), 'your code asks dwlit (in_contract)')


# 26.1 -------------------------------------------------------------------------------------------------------------
def _strided(step_windows, step_taps, engine=None):
    "A strided tile whose window view steps `step_windows(stride)` between windows and `step_taps(stride)` between taps."
    def tile(img_tile, filt_tile, prod, out_tile, stride):
        P, L = img_tile.shape
        W_f, W_out = filt_tile.shape[1], out_tile.shape[1]
        nisa.tensor_tensor(dst=prod, data1=img_tile.ap([[L, P], [step_windows(stride), W_out], [step_taps(stride), W_f]]),
                           data2=filt_tile.ap([[W_f, P], [0, W_out], [1, W_f]]), op=nl.multiply,
                           **({'engine': engine} if engine else {}))
        nisa.tensor_reduce(dst=out_tile, op=nl.add, data=prod, axis=2)
    return tile


def test_strided_slips_named():
    wrong(check_strided_conv1d(_strided(lambda s: 1, lambda s: s), show=False), 'its window is')
    wrong(check_strided_conv1d(_strided(lambda s: 1, lambda s: 1), show=False), 'its window is')
    wrong(check_strided_conv1d(_strided(lambda s: s, lambda s: 1, nisa.engine.gpsimd), show=False), 'GpSimd engine')
    def two_multiplies(img_tile, filt_tile, prod, out_tile, stride):
        conv1d_strided_tile_solution(img_tile, filt_tile, prod, out_tile, stride)
        conv1d_strided_tile_solution(img_tile, filt_tile, prod, out_tile, stride)
    wrong(check_strided_conv1d(two_multiplies, show=False), 'one multiply and one reduce')


# 26.2 -------------------------------------------------------------------------------------------------------------
def test_multiplies_slips_named():
    cases = [(lambda l, N: conv2d_multiplies_solution(l, N) * l.out_size[1], 'it counts every output position'),
             (lambda l, N: l.kernel[0] * l.kernel[1] * l.size[0] * -(-l.C // 128) * N, 'it counts input rows'),
             (lambda l, N: l.kernel[0] * l.kernel[1] * l.out_size[0] * N, 'it leaves out the channel tiles'),
             (lambda l, N: l.kernel[0] * l.out_size[0] * -(-l.C // 128) * N, 'one per tap'),
             (lambda l, N: float(conv2d_multiplies_solution(l, N)), 'an integer')]
    for fn, rule in cases: wrong(check_conv2d_multiplies(fn), rule)


def test_multiplies_asking_the_planner_refused():
    from dwlit.apps.layers import layer_plan
    wrong(check_conv2d_multiplies(lambda l, N: layer_plan(l, N).instruction_counts()['tensor_tensor']),
          'your code asks the planner')


# 27.1 -------------------------------------------------------------------------------------------------------------
def _scan_kernel(shift=False, reverse=False, engine_pe=False):
    "A running-sum kernel with one of the usual slips."
    def k(x):
        P, F = x.shape
        out = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm, name='out')
        xs, ones, h = (nl.ndarray((P, F), nl.float32, buffer=nl.sbuf, name=n) for n in ('xs', 'ones', 'h'))
        nisa.dma_copy(dst=xs, src=x)
        nisa.memset(ones, 1.0)
        if shift:
            nisa.memset(h, 0.0)
            if F > 1: nisa.tensor_tensor_scan(h[:, 1:F], ones[:, 1:F], xs[:, 0:F - 1], 0.0, nl.multiply, nl.add)
        else: nisa.tensor_tensor_scan(h, ones, xs, 0.0, nl.multiply, nl.add, reverse0=reverse, reverse1=reverse)
        if engine_pe:
            acc = nl.ndarray((P, P), nl.float32, buffer=nl.psum, name='acc')
            nisa.nc_matmul(acc, ones[:, 0:P], ones[:, 0:P])
        nisa.dma_copy(dst=out, src=h)
        return out
    return k


def test_running_sum_slips_named():
    wrong(check_running_sum(_scan_kernel(shift=True)), 'a running sum includes the element itself')
    wrong(check_running_sum(_scan_kernel(engine_pe=True)), 'runs on the PE array')


def test_running_sum_column_loop_over_budget():
    def by_columns(x):
        P, F = x.shape
        out = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm, name='out')
        h = nl.ndarray((P, F), nl.float32, buffer=nl.sbuf, name='h')
        nisa.dma_copy(dst=h, src=x)
        for j in range(1, F): nisa.tensor_tensor(dst=h[:, j:j + 1], data1=h[:, j - 1:j], data2=h[:, j:j + 1], op=nl.add)
        nisa.dma_copy(dst=out, src=h)
        return out
    wrong(check_running_sum(by_columns), 'the budget is 8, whatever the row')


def test_running_sum_numpy_inside_refused():
    def peeks(x):
        out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm, name='out')
        out.write(np.cumsum(x.numpy(), axis=1))
        return out
    wrong(check_running_sum(peeks), 'your code raised SimulatorError', 'inside a running kernel')


# 28.1 -------------------------------------------------------------------------------------------------------------
def test_matches_slips_named():
    not_over = lambda o, r, d: not np.abs(o - r).max() / max(1.0, np.abs(r).max()) > TOL[d]
    relative = lambda o, r, d: o.shape == r.shape and bool(np.abs(o - r).max() <= TOL[d] * np.abs(r).max())
    no_abs = lambda o, r, d: o.shape == r.shape and bool((o - r).max() <= TOL[d] * max(1.0, np.abs(r).max()))
    one_tol = lambda o, r, d: o.shape == r.shape and bool(np.abs(o - r).max() <= 1e-4 * max(1.0, np.abs(r).max()))
    def no_shape(o, r, d):
        e = np.abs(o - r).max()
        return bool(e <= TOL[d] * max(1.0, np.abs(r).max()))
    for fn, rule in ((not_over, 'a NaN matches nothing'), (relative, 'the bound is absolute'),
                     (no_abs, 'an error below the reference counts as much'), (one_tol, "the bound is the dtype's"),
                     (no_shape, 'an output of another shape does not match'),
                     (lambda o, r, d: int(matches_solution(o, r, d)), 'return True or False')):
        wrong(check_matches(fn), rule)


def test_matches_allclose_judged_by_the_cases_and_the_tours_own_check_refused():
    wrong(check_matches(lambda o, r, d: bool(np.allclose(o, r))), 'the bound is absolute')
    ok = lambda o, r, d: o.shape == r.shape and bool(np.isclose(o, r, rtol=0, atol=TOL[d] * max(1.0, np.abs(r).max())).all())
    assert check_matches(ok).passed                             # a right answer by isclose is not refused for its means
    from dwlit.apps.tour import check_case
    def leans_on_the_tour(out, reference, dtype):
        return callable(check_case)
    wrong(check_matches(leans_on_the_tour), "your code calls the tour's own check_case")


# 29.1 -------------------------------------------------------------------------------------------------------------
def test_explain_slips_named():
    def floor_chunks(N, C, W, W_f, padding):
        W_out, per = W + sum(padding) - W_f + 1, 512 // W_f
        return (('conv1d_depthwise_default', N * -(-C // 128)) if W_out <= per else
                ('conv1d_depthwise_f_packing', N * -(-C // 128) * -(-W_out // per)))
    wrong(check_explain_dispatch(floor_chunks), 'explain says conv1d_depthwise_default', '512 / W_f rounded up = 171')
    wrong(check_explain_dispatch(lambda N, C, W, W_f, p: explain_dispatch_solution(1, C, W, W_f, p)),
          'N x channel tiles x chunks = 2 x 2 x 2')
    wrong(check_explain_dispatch(lambda N, C, W, W_f, p: ('f_packing', 1)), "name one of 'conv1d_depthwise_default'")


def test_explain_asking_explain_refused():
    from dwlit.apps.cli import explain_conv1d
    wrong(check_explain_dispatch(lambda N, C, W, W_f, p: (explain_conv1d((N, C, W), W_f, ((0, 0), p)), 0)),
          'your code asks dwlit (explain_conv1d)')
