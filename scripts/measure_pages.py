"""Measure the built website as a reader meets it: each chapter page's length with every fold open, at 1400 px and on
a 390 px phone, and its longest run of folded cells with no text between. tests/test_site.py holds the goals
(MAX_PAGE_DESKTOP, MAX_PAGE_PHONE, MAX_FOLD_RUN); this script prints the numbers while a chapter is being cut.

    python scripts/measure_pages.py                 # every chapter of docs/ (build it first: python scripts/build_docs.py)
    python scripts/measure_pages.py --build 10_conv1d_kernels 13_dilation     # build, then measure these pages

Needs Debian's chromium and chromium-driver (see scripts/browser.py)."""
import functools
import http.server
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser import Chromium  # noqa: E402
from chapters import chapters  # noqa: E402

root = Path(__file__).resolve().parent.parent
DESKTOP, PHONE = (1400, 1000), (390, 844)

# The page's full height as it loads (folds closed), then with every fold opened.
HEIGHT_JS = """const closed = document.documentElement.scrollHeight;
document.querySelectorAll('details').forEach(d => d.open = true);
return [closed, document.documentElement.scrollHeight];"""

# The page as a sequence of blocks in reading order: 'F' a cell whose code is folded, 'C' a cell shown whole, 'T' text
# (a paragraph, heading, list, table or API entry outside any cell). A run is consecutive 'F's.
BLOCKS_JS = """
const art = document.querySelector('article[role=main]') || document.querySelector('article');
const sel = 'div.cell, p, h1, h2, h3, h4, ul, ol, table, dl, blockquote, div.admonition';
const out = [];
for (const e of art.querySelectorAll(sel)) {
  const cell = e.closest('div.cell');
  if (cell && cell !== e) continue;                       // inside a cell: part of that cell
  if (!cell && e.parentElement.closest(sel.replace('div.cell, ', ''))) continue;   // nested text: counted once
  if (cell) out.push(e.querySelector(':scope > details, :scope > .cell_input details, details.above-input') ? 'F' : 'C');
  else if (e.textContent.trim()) out.push('T');
}
return out.join('');"""


def longest_run(blocks: str) -> int:
    "The longest run of folded cells ('F') in a page's block string."
    return max((len(r) for r in blocks.replace('C', 'T').split('T')), default=0)


@contextmanager
def serve(folder: Path):
    "`folder` served on 127.0.0.1 at a free port; yields the base URL."
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try: yield f'http://127.0.0.1:{httpd.server_address[1]}/'
    finally: httpd.shutdown(); httpd.server_close()


def measure(stems, docs=root / 'docs') -> dict:
    "{stem: dict(desktop=px, phone=px, run=longest fold run, folds=count)}: heights with every fold open, and as loaded"
    " (desktop_closed, phone_closed)."
    out = {s: {} for s in stems}
    with serve(docs) as url, Chromium() as d:
        for size, key in ((DESKTOP, 'desktop'), (PHONE, 'phone')):
            d.set_window_size(*size)
            for s in stems:
                d.get(url + s + '.html')
                out[s][key + '_closed'], out[s][key] = d.execute_script(HEIGHT_JS)
                if key == 'desktop':
                    blocks = d.execute_script(BLOCKS_JS)
                    out[s].update(run=longest_run(blocks), folds=blocks.count('F'))
    return out


def main(argv):
    if '--build' in argv:
        import subprocess
        subprocess.run([sys.executable, str(root / 'scripts' / 'build_docs.py')], check=True)
    stems = [a for a in argv if not a.startswith('--')] or [c['stem'] for c in chapters()]
    print("page heights in px, every fold open (as loaded, folds closed, in brackets)")
    print(f"{'chapter':28s} {'1400 px':>18s} {'390 px':>18s} {'folds':>6s} {'longest run':>12s}")
    for s, m in measure(stems).items():
        print(f"{s:28s} {m['desktop']:8,d} ({m['desktop_closed']:7,d}) {m['phone']:8,d} ({m['phone_closed']:7,d}) "
              f"{m['folds']:6d} {m['run']:12d}")


if __name__ == '__main__': main(sys.argv[1:])
