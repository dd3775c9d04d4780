"""When is a figure legible at the size the website shows it (CONTRIBUTING.md, "Pictures"): the one home of the rule,
used by tests/test_figures.py (every exported drawing function on a sample call) and by scripts/figure_log.py (every
figure the notebooks draw while nbdev-test runs them).

A figure is saved at its dpi and shown 1:1 when it is at most COLUMN_PX wide (the content column at a 1400x1000
window), scaled down to COLUMN_PX when it is wider. It breaks the rules with text under MIN_TEXT_PX on screen, a dpi
under MIN_DPI, a width over the column, a legend on the data, or two texts drawn over each other."""
import numpy as np
from matplotlib.text import Text

COLUMN_PX = 900          # the site's content column at 1400x1000 (tests/test_site.py measures it)
MIN_TEXT_PX = 10         # text at least this tall on screen at the size the site shows the figure (issue 28)
MIN_DPI = 100


def _texts(fig):
    "Every visible, non-empty text of a figure."
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and t.figure is fig
            and (t.axes is None or t.axes.get_visible())]


def _overlap(a, b) -> float:
    "Area of two display boxes' intersection over the smaller one's area."
    w = min(a.x1, b.x1) - max(a.x0, b.x0); h = min(a.y1, b.y1) - max(a.y0, b.y0)
    if w <= 0 or h <= 0: return 0.0
    return w * h / max(1e-9, min(a.width * a.height, b.width * b.height))


def legibility(fig, dpi) -> list:
    "What in `fig`, saved at `dpi` and shown as the site shows it, breaks CONTRIBUTING.md's rules for pictures."
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    if not hasattr(fig.canvas, 'get_renderer'): FigureCanvasAgg(fig)     # e.g. an animation's figure, never shown
    fig.set_dpi(dpi)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    width_px = fig.get_size_inches()[0] * dpi
    scale = min(1.0, COLUMN_PX / width_px)
    bad = []
    if dpi < MIN_DPI: bad.append(f"drawn at dpi {dpi:.0f} (CONTRIBUTING.md: dpi {MIN_DPI})")
    if width_px > COLUMN_PX + 1:
        bad.append(f"{fig.get_size_inches()[0]:.1f} in wide at dpi {dpi:.0f} = {width_px:.0f} px: shown at {scale:.0%}")
    texts = _texts(fig)
    small = sorted({(t.get_fontsize() * dpi / 72 * scale, t.get_text()[:30]) for t in texts
                    if t.get_fontsize() * dpi / 72 * scale < MIN_TEXT_PX})
    if small:
        bad.append(f"{len(small)} texts under {MIN_TEXT_PX} px on screen, smallest {small[0][0]:.1f} px "
                   f"({small[0][0] / scale * 72 / dpi:.1f} pt): {[s for _, s in small[:4]]}")
    boxes = [(t, t.get_window_extent(r)) for t in texts]
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is None or not leg.get_visible(): continue
        lb = leg.get_window_extent(r)
        on = [t.get_text() for t, b in boxes if t.axes is ax and t not in leg.get_texts() and _overlap(lb, b) > 0.2]
        on += [type(p).__name__ for p in ax.patches if p.get_visible() and _overlap(lb, p.get_window_extent(r)) > 0.05]
        for line in ax.lines:
            xy = ax.transData.transform(np.column_stack(line.get_data()).astype(float)) if len(line.get_xdata()) else []
            if any(lb.contains(*p) for p in xy): on.append(f"line {line.get_label()}")
        if on: bad.append(f"the legend of {ax.get_title()[:40]!r} sits on the data: {on[:4]}")
    clash = []
    for i, (t, b) in enumerate(boxes):
        for u, c in boxes[i + 1:]:
            if _overlap(b, c) > 0.3: clash.append(f"{t.get_text()[:25]!r} / {u.get_text()[:25]!r}")
    if clash: bad.append(f"{len(clash)} texts drawn over each other: {clash[:3]}")
    return bad
