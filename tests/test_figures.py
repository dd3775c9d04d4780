"""Figures legible at the size the website shows them (CONTRIBUTING.md, "Pictures").

Every exported drawing function of dwlit (`plot_*`, `draw_*`, `show_*`, `*_animation`) is called on a small example
and its figure measured, as the site shows it: saved at the figure's dpi, shown 1:1 when it is at most 900 px wide
(the content column at a 1400x1000 window), scaled down to 900 px when it is wider. It fails on:

- text under `MIN_TEXT_PX` on screen (scripts/legible.py);
- a figure drawn below dpi 100 (animations included: their frames are shown 1:1);
- a figure wider than 9 in at dpi 100 (the site would scale it, and all its text, down);
- a legend on top of the data (a bar, a line's points or a value label of the same axes);
- two texts drawn over each other (e.g. a label across a subplot title).

A new drawing function needs an entry in SAMPLES (how to call it); the test says so. tests/test_site.py checks the
saved figures of the notebooks themselves on the built site (shown 1:1, drawn at dpi >= 100)."""
import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip('matplotlib')
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

import dwlit  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / 'scripts'))
from legible import MIN_TEXT_PX, legibility  # noqa: E402  (the one home of the rule: scripts/legible.py)

_re_drawing = re.compile(r'^(plot|draw|show)_\w+$|^\w+_animation$')


def _view():
    t = dwlit.nl.ndarray((4, 12), dwlit.nl.float32, name='t')
    return t.ap([[12, 4], [1, 5], [1, 3]])


def _trace():
    from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01
    rng = np.random.default_rng(0)
    x, f = rng.standard_normal((1, 130, 1, 40)).astype(np.float32), rng.standard_normal((130, 1, 1, 3)).astype(np.float32)
    with dwlit.trace() as tr:
        dwlit.simulate_kernel(conv1d_depthwise_bf01_oi01_bf01, x, f, ((0, 0), (1, 1)), num_programs=2, out_shape=(1, 130, 1, 40))
    return tr


def _programs():
    "A traced launch of two programs, each copying its half of the rows of x into a shared output through its SBUF."
    nl, nisa = dwlit.nl, dwlit.nisa
    def halves(x):
        out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm, name='out')
        r = x.shape[0] // nl.num_programs(); r0 = nl.program_id(0) * r
        t = nl.ndarray((r, x.shape[1]), x.dtype, buffer=nl.sbuf, name='t')
        nisa.dma_copy(dst=t, src=x[r0:r0 + r]); nisa.dma_copy(dst=out[r0:r0 + r], src=t)
        return out
    with dwlit.trace() as tr: dwlit.simulate_kernel(halves, np.ones((8, 3), np.float32), num_programs=2)
    return tr


def _gather():
    from dwlit.kernels.layouts import f01b_gather
    C, H, W, N = 3, 3, 4, 2
    img = dwlit.nl.ndarray((C, H, W, N), dwlit.nl.float32, buffer=dwlit.nl.hbm)
    img.write(np.arange(C * H * W * N).reshape(C, H, W, N))
    return img.ap(*f01b_gather(C, H, W, N, n=1, org_image_index=1, load_h_size=2)), C, H, W, N


def _dilated():
    from dwlit.kernels.dilation import dilate_tile
    x = np.arange(1, 13, dtype=np.float32).reshape(1, 3, 4)
    return x[0], dilate_tile(x, (2, 3), ((1, 2), (1, 0)))[0], (2, 3), ((1, 2), (1, 0))


# 'module.function': a call on a small example, like the chapter's own
SAMPLES = {
    'ap.show_touches': lambda f: f(_view(), title='Input: a (4, 12) tensor. Output: how often the view reads each element'),
    'tiling.plot_dispatch': lambda f: f(300, 5),
    'tiling.plot_tiles': lambda f: f(600, 4),
    'tiling.plot_chunks': lambda f: f(300, 31),
    'memory.draw_memories': lambda f: f(),
    'memory.draw_layout': lambda f: f(dwlit.nl.ndarray((4, 2, 3), dwlit.nl.float32, name='a'),
                                      dwlit.nl.ndarray((4, 2, 3), dwlit.nl.float32, buffer=dwlit.nl.hbm, name='b')),
    'isa.draw_instructions': lambda f: f(),
    'language.plot_programs': lambda f: f(_programs(), 'x', 'out', 3),
    'timeline.plot_gantt': lambda f: f(dwlit.predict(_trace()), title='Input: a traced 1D kernel. Output: its timeline'),
    'dilation.draw_dilated': lambda f: f(*_dilated(), title='Output: the dilated, padded buffer'),
    'dilation.draw_h_window': lambda f: f(5, 3, (2, 3), 2, 3, step=1),
    'dilation.h_window_animation': lambda f: f(),
    'im2col.show_im2col': lambda f: f(8, 3, 1, 1),
    'conv2d.draw_tile_loads': lambda f: f(*_conv2d_run(np.arange(5 * 260, dtype=np.float32).reshape(1, 5, 260, 1),
                                                      np.ones((1, 3, 3, 1), np.float32), ((2, 3), (1, 1)))),
    'conv2d.draw_output_row': lambda f: f(*_conv2d_run(np.arange(1, 13, dtype=np.float32).reshape(1, 3, 4, 1),
                                                      np.arange(1, 10, dtype=np.float32).reshape(1, 3, 3, 1), ((1, 1), (1, 1))),
                                          _dilated_3x4(), np.arange(1, 10, dtype=np.float32).reshape(3, 3), row=1)[0],
    'tracing.plot_trace': lambda f: f(_trace(), title='Input: a traced 1D kernel. Output: its instructions by engine'),
    'layouts.draw_gather': lambda f: f(*_gather(), title='Input: an f01b image in HBM. Output: the elements one DMA reads'),
    'decision_map.plot_engine_map': lambda f: f(_engine_map(), 'Input: 1D depthwise on a 2 x 2 grid. Output: the design predicted fastest'),
    'dense_pe.plot_matmul': lambda f: f(128, 128, 500, np.eye(128), 'Input: a diagonal weight and 500 columns; output: a PSUM bank'),
    'networks.plot_network': lambda f: f([dwlit.run_layer(n, N=1) for n in ('conformer-m', 'mobilenetv2-576x14')],
                                       'Input: two real layers. Output: predicted time per layer and target'),
}


def _conv2d_run(x, f, padding):
    "(trace, plan) of the 2D kernel on an f01b image with lhs_dilation (2, 2), as chapter 14 draws it."
    from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01, conv2d_plan
    with dwlit.trace() as tr: conv2d_depthwise_f01b_o01i_bf01(x, f, padding, lhs_dilation=(2, 2))
    return tr, conv2d_plan(x.shape, f.shape, padding, lhs_dilation=(2, 2))


def _dilated_3x4():
    d = np.zeros((7, 9)); d[1:6:2, 1:8:2] = np.arange(1, 13).reshape(3, 4)
    return d


def _engine_map():
    from dwlit.analysis.decision_map import engine_map
    return engine_map('1D', sizes=(3, 31), widths=(64, 256), check=False)


def drawing_functions() -> list:
    "('module.function', function) for every exported drawing function of dwlit."
    import importlib
    import pkgutil
    out = []
    for m in pkgutil.walk_packages(dwlit.__path__, 'dwlit.'):
        leaf = m.name.rpartition('.')[2]
        if leaf.startswith('_') or leaf == 'cli' or m.ispkg: continue
        mod = importlib.import_module(m.name)
        for name in getattr(mod, '__all__', []):
            fn = getattr(mod, name, None)
            if inspect.isfunction(fn) and _re_drawing.match(name): out.append((f'{leaf}.{name}', fn))
    return sorted(out)


def _figure(result):
    "The figure a drawing function drew on, and the dpi its frames are saved at (an animation's own)."
    from matplotlib.animation import Animation
    if isinstance(result, Animation):                  # draw its first frame, as the page's player first shows it
        result._init_draw(); result._draw_frame(next(iter(result.new_frame_seq())))
        return result._fig, result._fig.dpi
    if hasattr(result, 'savefig'): return result, result.dpi
    fig = result.figure if hasattr(result, 'figure') else (
        np.ravel(result)[0].figure if isinstance(result, (list, tuple, np.ndarray)) and len(np.ravel(result)) else plt.gcf())
    return fig, fig.dpi




def test_every_drawing_function_has_a_sample():
    missing = [n for n, _ in drawing_functions() if n not in SAMPLES]
    assert not missing, f"add a sample call to SAMPLES in tests/test_figures.py for: {missing}"
    assert len(drawing_functions()) >= 8


@pytest.mark.parametrize('name', sorted(SAMPLES))
def test_figure_is_legible_at_the_size_the_site_shows_it(name):
    fns = dict(drawing_functions())
    if name not in fns: pytest.skip(f"dwlit.{name} is gone (remove its sample)")
    plt.close('all')
    result = SAMPLES[name](fns[name])
    fig, dpi = _figure(result)
    try:
        bad = legibility(fig, dpi)
        assert not bad, f"dwlit.{name}:\n  " + '\n  '.join(bad)
    finally: plt.close('all')


def test_the_legibility_check_can_fail():
    "Tiny text, a dpi-60 figure, a 12-in figure, a legend on the bars and a label across a title are each caught."
    fig, ax = plt.subplots(figsize=(12, 3))
    ax.bar([0, 1, 2], [3, 3, 3], label='bars'); ax.legend(loc='center')
    ax.set_title('a title'); ax.text(0.5, 1.02, 'a clash', transform=ax.transAxes, ha='center', fontsize=12)
    ax.text(0, 1, 'tiny', fontsize=4)
    bad = legibility(fig, 100)
    assert any('12.0 in wide' in b for b in bad), bad
    assert any(f'under {MIN_TEXT_PX} px' in b and "'tiny'" in b for b in bad), bad
    assert any('sits on the data' in b for b in bad) and any('over each other' in b for b in bad), bad
    assert any('dpi 60' in b for b in legibility(fig, 60))
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar([0, 1], [1, 2], label='bars'); ax.set_title('fine'); ax.legend(loc='upper left', bbox_to_anchor=(1, 1))
    fig.tight_layout()
    assert legibility(fig, 100) == [], legibility(fig, 100)
    plt.close(fig)
