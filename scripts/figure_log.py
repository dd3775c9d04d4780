"""Measure every figure a notebook draws, while it runs, against scripts/legible.py's rules.

scripts/test runs nbdev-test with MATPLOTLIBRC=scripts/figure_log (its matplotlibrc sets `figure.hooks` to `hook`
below) and DWLIT_FIGURE_LOG=<file>: each figure pyplot creates is noted, and at the end of the notebook cell that
made it the figure is measured and one JSON line is appended to the log: the notebook, the cell's first line and what
breaks the rules (nothing, for a legible figure). tests/test_site.py reads the log. Without DWLIT_FIGURE_LOG the hook
does nothing. `python scripts/figure_log.py NOTEBOOK...` runs notebooks this way and prints what it finds."""
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from legible import legibility  # noqa: E402

_made = []            # figures created by the cell now running
_hooked = []


def _measure(result=None):
    "After a cell: measure the figures it made (animations' figures too) and log them."
    log = os.environ.get('DWLIT_FIGURE_LOG')
    figs, _made[:] = list(_made), []
    if not log or not figs: return
    cell = getattr(getattr(result, 'info', None), 'raw_cell', '') or ''
    first = next((l for l in cell.splitlines() if l.strip() and not l.startswith('#|')), '')[:80]
    with open(log, 'a') as f:
        for fig in figs:
            try: bad = legibility(fig, fig.dpi)
            except Exception as e: bad = [f"could not be measured: {type(e).__name__}: {e}"]
            f.write(json.dumps({'notebook': _notebook(), 'cell': first,
                                'problems': bad}) + '\n')


def _notebook() -> str:
    "The notebook nbdev-test is running in this process (it keeps it in nbdev.test), else the working folder."
    try:
        import nbdev.test
        return Path(nbdev.test._cur_nb[0]).name
    except Exception: return os.getcwd()


def hook(fig):
    "matplotlib's `figure.hooks`: note a new figure; on first use, measure at the end of each IPython cell."
    if not os.environ.get('DWLIT_FIGURE_LOG'): return
    _made.append(fig)
    try:
        from IPython import get_ipython
        ip = get_ipython()
    except ImportError: ip = None
    if ip is not None and all(h is not ip for h in _hooked):      # each notebook runs in a shell of its own
        ip.events.register('post_run_cell', _measure); _hooked.append(ip)


def run(paths) -> list:
    "Run notebooks as nbdev-test does and return the figures logged."
    import tempfile

    import matplotlib
    from nbdev.test import test_nb
    log = Path(tempfile.mkstemp(suffix='.jsonl')[1])
    os.environ.update(DWLIT_FIGURE_LOG=str(log), MPLBACKEND='Agg')
    matplotlib.rcParams['figure.hooks'] = ['figure_log:hook']
    for p in paths:
        ok, _ = test_nb(Path(p).resolve(), skip_flags=['notest', 'slow'])
        if not ok: print(f"{p} failed to run")
    return [json.loads(line) for line in log.read_text().splitlines()]


if __name__ == '__main__':
    rows = run(sys.argv[1:])
    for r in rows:
        print(f"{r['notebook']}: {r['cell']!r}: " + ('; '.join(r['problems']) if r['problems'] else 'legible'))
    print(f"{len(rows)} figures, {sum(bool(r['problems']) for r in rows)} with problems")
