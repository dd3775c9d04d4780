"""The docs website, built the Quarto-free way (scripts/build_docs.py) and read in headless Debian Chromium at
1400x1000, the window CONTRIBUTING.md's promises are made for.

Fails on: a page that does not load, a browser console error, a broken internal link (page or #anchor), an image
that does not render (naturalWidth 0), a chapter missing from the navigation, an exported function without API docs,
a saved figure or animation that is not on its page; a content column narrower than promised, a block (code,
output, table, formula) wider than its column without a scrollbar a reader can see, a subtitle that is not the
notebook's whole description, a figure shown smaller than it was drawn or drawn below dpi 100; an empty page, a
link to a repository pyproject.toml does not name, a missing copyright line, an llms.txt entry that does not
resolve, a folded cell that is not folded. Screenshots go to test-artifacts/site/.

DWLIT_DOCS=path runs the checks on a site already built there instead of building docs/ (e.g. an older build)."""
import ast
import base64
import functools
import http.server
import io
import json
import os
import re
import subprocess
import sys
import threading
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest
import tomllib

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / 'scripts'))
from browser import MISSING, Chromium, console_errors, have_chromium  # noqa: E402
from chapters import chapters, label, notebook  # noqa: E402

docs = Path(os.environ.get('DWLIT_DOCS') or root / 'docs')
WINDOW = (1400, 1000)            # CONTRIBUTING.md: a ~900 px content column at this window
COLUMN = 900                     # ... where figures up to 9 in at dpi 100 show 1:1
artifacts = root / 'test-artifacts' / 'site'
KERNEL_CHAPTERS = ['10_conv1d_kernels', '14_conv2d', '07_conv1d_dispatch', '08_virtual_im2col']


BUILD_OUTPUT = []               # what the site fixture's build printed


@pytest.fixture(scope='module')
def site():
    "Build the site into docs/ once for this module (or use DWLIT_DOCS as it is)."
    if os.environ.get('DWLIT_DOCS'): return docs
    r = subprocess.run([sys.executable, str(root / 'scripts' / 'build_docs.py')], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, f"scripts/build_docs.py failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert (docs / 'index.html').exists()
    BUILD_OUTPUT.append(r.stdout)
    return docs


@pytest.fixture(scope='module')
def server(site):
    "docs/ served on 127.0.0.1, a free port."
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(site)))
    t = threading.Thread(target=httpd.serve_forever, daemon=True); t.start()
    try: yield f'http://127.0.0.1:{httpd.server_address[1]}/'
    finally: httpd.shutdown(); httpd.server_close()


@pytest.fixture(scope='module')
def browser(server):
    if not have_chromium(): pytest.skip(MISSING)
    with Chromium() as d:
        d.set_window_size(*WINDOW)
        yield d


class _Ids(HTMLParser):
    "Every id and every link on a page."
    def __init__(self):
        super().__init__(); self.ids, self.links = set(), []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'id' in a: self.ids.add(a['id'])
        if tag == 'a' and a.get('href'): self.links.append(a['href'])


@functools.lru_cache(maxsize=None)
def fetch(url):
    "(status, parsed page) of a URL on the local server."
    try:
        with urllib.request.urlopen(url) as r: body, status = r.read().decode('utf-8', 'replace'), r.status
    except urllib.error.HTTPError as e: return e.code, None
    p = _Ids(); p.feed(body)
    return status, p


def crawl(start):
    "Every local HTML page reachable from `start` by links, with the broken links found on the way."
    seen, todo, broken = set(), [start], []
    host = urlparse(start).netloc
    while todo:
        url = todo.pop()
        if url in seen: continue
        seen.add(url)
        status, page = fetch(url)
        if status != 200: continue
        for href in page.links:
            target, frag = urldefrag(urljoin(url, href))
            if urlparse(target).netloc != host: continue
            st, tp = fetch(target)
            if st != 200: broken.append(f"{url}: {href} -> HTTP {st}"); continue
            if frag and tp is not None and frag not in tp.ids: broken.append(f"{url}: {href} -> no #{frag} there")
            if target.endswith('.html') or target.endswith('/'): todo.append(target)
    return sorted(u for u in seen if fetch(u)[0] == 200), broken


def test_no_broken_internal_links(server):
    pages, broken = crawl(server)
    assert not broken, "broken internal links:\n" + '\n'.join(broken)
    for c in chapters(): assert server + c['stem'] + '.html' in pages, f"{c['file']} has no page reachable from the home page"


def test_a_broken_link_is_caught(server):
    "The link check can fail: a page with a dangling link and a dangling anchor is reported."
    page = docs / '_planted_a_broken_link_is_caught.html'
    page.write_text('<a href="nowhere.html">x</a> <a href="index.html#no-such-anchor">y</a>')
    try:
        fetch.cache_clear()
        _, broken = crawl(server + '_planted_a_broken_link_is_caught.html')
        assert any('nowhere.html -> HTTP 404' in b for b in broken) and any('no #no-such-anchor' in b for b in broken)
    finally: page.unlink(); fetch.cache_clear()


def _wait_images(d):
    "Load every image eagerly and wait until each has loaded or failed."
    d.execute_async_script("""const done = arguments[arguments.length - 1];
        const imgs = Array.from(document.images); imgs.forEach(i => i.loading = 'eager');
        Promise.all(imgs.map(i => i.decode().catch(() => null))).then(() => done(null));""")


def test_every_page_loads_without_console_errors_and_every_image_renders(server, browser):
    pages, _ = crawl(server)
    assert len(pages) >= len(chapters()) + 1
    console_errors(browser)  # drop anything logged before
    problems = []
    for url in pages:
        browser.get(url)
        if browser.execute_script("return document.readyState") != 'complete': problems.append(f"{url}: did not finish loading")
        if not browser.find_elements('css selector', 'article, .body, main'): problems.append(f"{url}: no content")
        _wait_images(browser)
        bad = browser.execute_script("return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        problems += [f"{url}: image does not render: {b[:120]}" for b in bad]
        problems += [f"{url}: console error: {m}" for m in console_errors(browser)]
    assert not problems, '\n'.join(problems)


def test_a_console_error_and_a_broken_image_are_caught(server, browser):
    "The page checks can fail: a page with a missing image and a script error is reported."
    page = docs / '_planted_a_console_error_and_a_broken_image_are_caught.html'
    page.write_text('<html><body><img src="_images/missing.png"><script>undefined_function()</script></body></html>')
    try:
        console_errors(browser)
        browser.get(server + '_planted_a_console_error_and_a_broken_image_are_caught.html'); _wait_images(browser)
        bad = browser.execute_script("return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).length")
        errs = console_errors(browser)
        assert bad == 1
        assert any('missing.png' in e for e in errs) and any('undefined_function' in e for e in errs), errs
    finally: page.unlink()


def _nav(browser):
    "The sidebar's (section, link text, href) in page order."
    return browser.execute_script("""return Array.from(document.querySelectorAll('.sidebar-tree a.reference')).map(a => {
        const ul = a.closest('ul'); let cap = ul.previousElementSibling;
        return [cap ? cap.textContent.trim() : '', a.textContent.trim(), a.getAttribute('href')]; });""")


def test_navigation_lists_every_chapter_in_order(server, browser):
    chs = chapters()
    for page in ['index'] + [c['stem'] for c in chs]:
        browser.get(server + page + '.html')
        nav = _nav(browser)
        got = [(sec, text) for sec, text, _ in nav]
        assert got == [(c['section'], label(c).replace('`', '')) for c in chs], f"{page}.html: navigation {got}"
        hrefs = [h for *_, h in nav]
        for c, h in zip(chs, hrefs): assert h in (c['stem'] + '.html', '#'), (page, c['stem'], h)


def _exports():
    "{notebook stem: [exported functions and classes]} from each module's __all__ and its 'File to edit' header."
    out = {}
    for py in sorted((root / 'dwlit').rglob('*.py')):
        text = py.read_text()
        m = re.search(r'File to edit: (?:\.\./)+nbs/(?:\w+/)?(\w+)\.ipynb', text)
        if not m: continue
        tree = ast.parse(text)
        names = next((ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                      and any(getattr(t, 'id', '') == '__all__' for t in n.targets)), [])
        defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        out.setdefault(m.group(1), []).extend(n for n in names if n in defs)   # functions and classes; not constants
    return out


def test_api_docs_for_every_exported_function(server, browser):
    exports = _exports()
    assert exports, "no exported modules found"
    missing = []
    for stem, names in exports.items():
        browser.get(server + stem + '.html')
        docs_here = set(browser.execute_script(
            "return Array.from(document.querySelectorAll('.rubric, h2, h3, h4')).map(h => h.textContent.replace('¶','').trim())"))
        missing += [f"{stem}.html: {n}" for n in names if n not in docs_here]
    assert not missing, "exported but not documented on its page:\n" + '\n'.join(missing)


def _saved_outputs(stem):
    "Counts of what a notebook saved: PNG figures, HTML animations (jshtml), widgets."
    nb = json.loads(notebook(stem).read_text())
    n = dict(png=0, anim=0, widget=0)
    for c in nb['cells']:
        if c['cell_type'] != 'code' or re.match(r'#\|\s*(hide|include:\s*false)', ''.join(c['source'])): continue
        for o in c.get('outputs', []):
            d = o.get('data', {})
            n['png'] += 'image/png' in d
            n['anim'] += 'text/html' in d and 'class="animation"' in ''.join(d['text/html'])
            n['widget'] += 'application/vnd.jupyter.widget-view+json' in d
    return n


def test_every_figure_animation_and_widget_fallback_is_on_its_page(server, browser):
    for c in chapters() + [dict(stem='index')]:
        want = _saved_outputs(c['stem'])
        browser.get(server + c['stem'] + '.html'); _wait_images(browser)
        got = browser.execute_script("""const a = document.querySelector('article') || document.body; return {
            png: Array.from(a.querySelectorAll('img')).filter(i => i.naturalWidth > 0 && /\\.png$/.test(i.src)).length,
            anim: a.querySelectorAll('.animation').length,
            note: (a.textContent.match(/Interactive widget: it needs a live Python kernel/g) || []).length};""")
        assert got['png'] >= want['png'], f"{c['stem']}: {want['png']} PNG figures saved, {got['png']} shown"
        assert got['anim'] >= want['anim'], f"{c['stem']}: {want['anim']} animations saved, {got['anim']} shown"
        assert got['note'] == want['widget'], f"{c['stem']}: {want['widget']} widgets, {got['note']} notes"


def test_screenshots(server, browser):
    "The home page and one kernel chapter, saved for a human to look at."
    artifacts.mkdir(parents=True, exist_ok=True)
    stems = [c['stem'] for c in chapters()]
    kernel = next((k for k in KERNEL_CHAPTERS if k in stems), stems[-1])
    saved = []
    for name in ['index', kernel]:
        browser.get(server + name + '.html'); _wait_images(browser)
        path = artifacts / f'{name}.png'
        assert browser.save_screenshot(str(path)) and path.stat().st_size > 10_000
        saved.append(path)
    assert len(saved) == 2                  # scripts/test lists test-artifacts/ at the end of a run


# --- Nothing a reader needs is cut off ------------------------------------------------------------------------------

BLOCKS = ('div.highlight > pre, .cell_output pre, .cell_output .output, table, .table-wrapper, .math-wrapper, '
          '.math-display, math[display=block]')

_CLIPPED_JS = """const [sel] = arguments;
const art = document.querySelector('article[role=main]') || document.querySelector('article') || document.body;
const a = art.getBoundingClientRect(), st = getComputedStyle(art);
const L = a.left + parseFloat(st.paddingLeft), R = a.right - parseFloat(st.paddingRight);
const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
const out = [], reported = new Set(); let blocks = 0;
for (const e of art.querySelectorAll(sel)) {                             // document order: a block before its parts
  const r = e.getBoundingClientRect();
  if (!r.width) continue;                                                   // folded away, not shown
  const inner = e.parentElement.closest(sel);
  if (!inner || !art.contains(inner)) blocks++;                             // count each outermost block once
  if (inner && reported.has(inner)) continue;                               // its block is reported already
  const over = e.scrollWidth > e.clientWidth + 1, sticks = r.right > R + 1 || r.left < L - 1;
  if (!over && !sticks) continue;                                           // fits its column
  let s = e; while (s && s !== art && !scrolls(s)) s = s.parentElement;     // what would scroll it
  const what = (e.tagName.toLowerCase() + '.' + (e.className.baseVal ?? e.className)).slice(0, 60) + ': ' +
               e.textContent.trim().replace(/\\s+/g, ' ').slice(0, 70);
  reported.add(e);
  if (!s || s === art) { out.push({what, why: `${Math.round(Math.max(e.scrollWidth, r.width))} px wide in a ` +
                                    `${Math.round(R - L)} px column, nothing scrolls it`}); continue; }
  const sr = s.getBoundingClientRect(), ss = getComputedStyle(s);
  if (sr.right > R + 1 || sr.left < L - 1) { out.push({what, why: 'its scroll box is wider than the column'}); continue; }
  const bar = s.offsetHeight - s.clientHeight - parseFloat(ss.borderTopWidth) - parseFloat(ss.borderBottomWidth);
  out.push({what, scroller: true, bar, id: (s.dataset.dwlitScroller = s.dataset.dwlitScroller || String(out.length))});
}
return [Math.round(R - L), blocks, out];"""


def _luminance(rgb):
    "WCAG relative luminance of an array of (r, g, b) pixels, 0..255."
    import numpy as np
    c = np.asarray(rgb, float)[..., :3] / 255
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return c @ [0.2126, 0.7152, 0.0722]


def scrollbar_contrast(browser, el, bar) -> float:
    "Contrast (WCAG ratio) between the darkest and lightest pixel of `el`'s horizontal scrollbar, arrows left out."
    from PIL import Image
    browser.execute_script("arguments[0].scrollIntoView({block: 'end', behavior: 'instant'});", el)    # its scrollbar on screen
    r = browser.execute_script("""const r = arguments[0].getBoundingClientRect(), s = getComputedStyle(arguments[0]);
        return [r.left + parseFloat(s.borderLeftWidth), r.bottom - parseFloat(s.borderBottomWidth),
                r.right - parseFloat(s.borderRightWidth), devicePixelRatio];""", el)
    left, bottom, right, dpr = r
    img = Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert('RGB')
    box = [round(v * dpr) for v in (left + bar + 2, bottom - bar + 2, right - bar - 2, bottom - 2)]
    lum = _luminance(img.crop(box))
    return float((lum.max() + 0.05) / (lum.min() + 0.05)) if lum.size else 1.0


def cut_off(browser, url) -> tuple:
    "(content column width, number of blocks, [the blocks wider than the column without a scrollbar a reader can see])."
    browser.get(url); _wait_images(browser)
    col, blocks, found = browser.execute_script(_CLIPPED_JS, BLOCKS)
    problems, seen = [], {}
    for f in found:
        if not f.get('scroller'): problems.append(f"{f['what']}: {f['why']}"); continue
        if f['id'] not in seen:
            el = browser.find_element('css selector', f'[data-dwlit-scroller="{f["id"]}"]')
            seen[f['id']] = 0.0 if f['bar'] < 12 else scrollbar_contrast(browser, el, f['bar'])
        if f['bar'] < 12: problems.append(f"{f['what']}: scrolls, but its scrollbar is {f['bar']} px (thin or hidden)")
        elif seen[f['id']] < 3: problems.append(f"{f['what']}: scrolls, but its scrollbar is faint "
                                                f"(contrast {seen[f['id']]:.1f}:1, less than 3:1)")
    return col, blocks, problems


def test_nothing_is_cut_off(server, browser):
    "Every code block, output, table and formula fits its column, or scrolls with a scrollbar a reader can see."
    pages, _ = crawl(server)
    report, n, total = [], 0, 0
    for url in pages:
        if url.endswith('search.html'): continue
        col, blocks, problems = cut_off(browser, url)
        if col < COLUMN - 1: report.append(f"{url}: content column {col} px, CONTRIBUTING.md promises {COLUMN} px")
        n += len(problems); total += blocks
        report += [f"{url}: {p}" for p in problems[:8]] + ([f"{url}: ... {len(problems) - 8} more"] if len(problems) > 8 else [])
    print(f"{n} of {total} blocks cut off at {WINDOW[0]}x{WINDOW[1]}")
    assert not report, f"{n} of {total} blocks cut off at {WINDOW[0]}x{WINDOW[1]}:\n" + '\n'.join(report)


def test_a_cut_off_block_is_caught(server, browser):
    "The check can fail: a wide code line under a faint thin scrollbar (Furo's own), and a wide table, are reported."
    page = docs / '_planted_a_cut_off_block_is_caught.html'
    wide = 'x' * 400
    page.write_text(f"""<html><body><article role="main" style="width: 600px">
        <div class="highlight"><pre style="overflow: auto; scrollbar-width: thin; scrollbar-color: #6a6a6a5e transparent;
             background: #f8f8f8">{wide}</pre></div>
        <table><tr><td style="white-space: nowrap">{wide}</td></tr></table>
        <div class="highlight"><pre style="white-space: pre-wrap; overflow-wrap: anywhere">{wide}</pre></div>
        <div class="table-wrapper" style="overflow-x: auto; scrollbar-color: #5a5c63 #eeebee"><table><tr>
             <td style="white-space: nowrap">{wide}</td></tr></table></div></article></body></html>""")
    try:
        col, blocks, problems = cut_off(browser, server + '_planted_a_cut_off_block_is_caught.html')
        assert col == 600 and blocks == 4
        assert len(problems) == 2, problems         # the wrapped line and the visibly scrolling table pass
        assert 'thin or hidden' in problems[0] or 'faint' in problems[0], problems
        assert 'nothing scrolls it' in problems[1], problems
    finally: page.unlink()


# --- Subtitles, figures, chrome ---------------------------------------------------------------------------------------

def _plain(md: str) -> str:
    "What markdown shows as text: no backticks, emphasis or link targets; whitespace collapsed."
    md = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', md)
    md = re.sub(r'[`*]', '', md)
    return ' '.join(md.split())


def test_every_subtitle_is_the_whole_description(server, browser):
    from chapters import title_and_description
    bad = []
    for stem in ['index'] + [c['stem'] for c in chapters()]:
        want = _plain(title_and_description(notebook(stem))[1])
        browser.get(server + stem + '.html')
        got = browser.execute_script("const p = document.querySelector('article p.lead'); return p ? p.textContent : ''")
        got = got.translate(str.maketrans('’‘“”', "''\"\""))     # typographic quotes in prose are fine
        if ' '.join(got.split()) != want: bad.append(f"{stem}.html: subtitle {' '.join(got.split())!r}\n  notebook: {want!r}")
    assert not bad, "subtitles that are not the notebook's description:\n" + '\n'.join(bad)


def _png_dpi(data: bytes) -> float:
    "The dots per inch a PNG says it was drawn at (matplotlib writes them), 0 if it does not say."
    from PIL import Image
    return float((Image.open(io.BytesIO(data)).info.get('dpi') or (0,))[0])


_FIGS_JS = """const a = document.querySelector('article[role=main]') || document.body;
return Array.from(a.querySelectorAll('img')).filter(i => i.naturalWidth > 0).map(i => ({
    src: i.currentSrc || i.src, natural: i.naturalWidth, shown: i.getBoundingClientRect().width,
    anim: !!i.closest('.animation'), alt: (i.closest('.cell') ? 'cell ' : '') + (i.getAttribute('alt') || '')}));"""


def figures_too_small(browser, url) -> list:
    "Figures on a page shown smaller than drawn (downscaled), or drawn below dpi 100 (text under ~9.7 px at 7 pt)."
    browser.get(url); _wait_images(browser)
    bad = []
    for f in browser.execute_script(_FIGS_JS):
        if f['src'].startswith('data:'): data = base64.b64decode(f['src'].split(',', 1)[1])
        elif f['src'].endswith('.svg') or '/_static/' in f['src']: continue     # icons, the favicon
        else: data = urllib.request.urlopen(f['src']).read()
        name = ('animation frame' if f['anim'] else 'figure') + ' ' + (f['src'][-40:] if not f['src'].startswith('data:') else '')
        if f['shown'] < f['natural'] - 1:
            bad.append(f"{name}: drawn {f['natural']} px wide, shown at {f['shown']:.0f} px "
                       f"({f['shown'] / f['natural']:.0%}; more than {COLUMN} px cannot show 1:1)")
        dpi = _png_dpi(data) if data[:4] == b'\x89PNG' else 0
        if 0 < dpi < 99: bad.append(f"{name}: drawn at dpi {dpi:.0f} (7 pt text is {7 * dpi / 72:.1f} px; dpi 100 needed)")
    return bad


def test_figures_shown_at_the_size_they_were_drawn(server, browser):
    "CONTRIBUTING.md: figures at most 9 in wide at dpi 100 show 1:1; animations at dpi 100. Fails on each that does not."
    report = []
    for stem in ['index'] + [c['stem'] for c in chapters()]:
        report += [f"{stem}.html: {b}" for b in figures_too_small(browser, server + stem + '.html')]
    assert not report, "figures shown below the size CONTRIBUTING.md promises:\n" + '\n'.join(report)


def test_a_downscaled_figure_is_caught(server, browser):
    "The figure check can fail: a 1200-px PNG in a 600-px column, and a dpi-60 frame."
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    page = docs / '_planted_a_downscaled_figure_is_caught.html'
    pngs = []
    for w, dpi in [(12, 100), (3, 60)]:
        fig = plt.figure(figsize=(w, 2), dpi=dpi); buf = io.BytesIO(); fig.savefig(buf, format='png', dpi=dpi); plt.close(fig)
        pngs.append(base64.b64encode(buf.getvalue()).decode())
    page.write_text(f"""<html><head><style>img {{ max-width: 100%; }}</style></head><body>
        <article role="main" style="width: 600px"><img src="data:image/png;base64,{pngs[0]}">
        <div class="animation"><img src="data:image/png;base64,{pngs[1]}"></div></article></body></html>""")
    try:
        bad = figures_too_small(browser, server + '_planted_a_downscaled_figure_is_caught.html')
        assert len(bad) == 2 and 'shown at 600 px' in bad[0] and 'dpi 60' in bad[1], bad
    finally: page.unlink()


def test_no_empty_pages(server, browser):
    "Every page the site has shows something to read (Sphinx's general index, empty here, is not built)."
    assert not (docs / 'genindex.html').exists(), "docs/genindex.html: the general index page is built (and empty)"
    empty = []
    for url in crawl(server)[0]:
        if url.endswith('search.html'): continue
        browser.get(url)
        text = browser.execute_script("const a = document.querySelector('article') || document.body; return a.innerText")
        if len(text.split()) < 30: empty.append(f"{url}: {len(text.split())} words")
    assert not empty, "pages with next to nothing on them:\n" + '\n'.join(empty)


def test_repository_links_and_copyright_come_from_pyproject(server, browser):
    "Links to a repository only where pyproject.toml names one; the footer names the authors and the licence."
    proj = tomllib.loads((root / 'pyproject.toml').read_text())['project']
    repo = (proj.get('urls') or {}).get('Repository', '').rstrip('/')
    authors = ', '.join(a['name'] for a in proj['authors'])
    bad = []
    for stem in ['index'] + [c['stem'] for c in chapters()]:
        browser.get(server + stem + '.html')
        links, foot = browser.execute_script("""return [Array.from(document.querySelectorAll('a[href]')).map(a =>
                [a.href, a.textContent.trim().toLowerCase(), !!a.closest('article') && !a.closest('.cell_output')]),
            (document.querySelector('.bottom-of-page .copyright') || {textContent: ''}).textContent];""")
        hrefs = [h for h, _, _ in links]
        # links to this project's own code: the page chrome (view/edit this page) and show_doc's "source" links;
        # a chapter citing another project's repository in its prose (the sources chapter) is not one of them
        code_links = [h for h, text, in_prose in links
                      if (re.match(r'https?://(github|gitlab|codeberg)\.\w+/(?!pradyunsg/furo)', h) or '/blob/' in h or '/edit/' in h)
                      and (not in_prose or text in ('source', 'edit', 'view source', 'edit this page'))]
        stray = [h for h in code_links if not (repo and h.startswith(repo + '/'))]
        bad += [f"{stem}.html: links to {h}, but pyproject.toml names {'no repository' if not repo else repo}" for h in stray[:3]]
        if authors not in foot or proj['license'] not in foot:
            bad.append(f"{stem}.html: footer {' '.join(foot.split())!r} does not name {authors!r} and {proj['license']}")
        if repo and not any(h.startswith(repo + '/') for h in hrefs):
            bad.append(f"{stem}.html: pyproject.toml names {repo}, but the page never links to it")
    assert not bad, '\n'.join(bad)


def test_llms_txt_lists_every_module_and_every_link_resolves(server):
    "llms.txt (nbs/llms.txt, served at the site's root): one entry per dwlit module, each linking to its page."
    text = (docs / 'llms.txt').read_text()
    mods = sorted(p.stem for p in (root / 'dwlit').glob('*.py') if not p.name.startswith('_'))
    listed = re.findall(r'^- \[dwlit\.(\w+)\]\(([^)]+)\)', text, re.M)
    assert sorted(m for m, _ in listed) == mods, f"llms.txt lists {sorted(m for m, _ in listed)}, dwlit has {mods}"
    for m, link in listed:
        target, frag = urldefrag(urljoin(server + 'llms.txt', link))
        assert urlparse(target).netloc == urlparse(server).netloc, f"dwlit.{m}: {link} is not a page of this site"
        status, page = fetch(target)
        assert status == 200, f"dwlit.{m}: {link} -> HTTP {status}"
        assert not frag or frag in page.ids, f"dwlit.{m}: {link} -> no #{frag} there"


def _folded_cells(stem):
    "The code of each cell of a notebook marked `#| code-fold: true` (not `#| export` ones: the site shows API docs;"
    " `#| exporti` ones are kept on the page, folded, by scripts/build_docs.py)."
    nb = json.loads(notebook(stem).read_text())
    return [''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'code'
            and re.search(r'^#\|\s*code-fold:\s*true\s*$', ''.join(c['source']), re.M)
            and not re.search(r'^#\|\s*(export|hide)\b', ''.join(c['source']), re.M)]


FOLDS_JS = """
const shown = e => e.checkVisibility();            // false inside a closed <details>, as for a reader
return [...document.querySelectorAll('article .cell:not(.tag_dwlit-checks) details.above-input')].map(d => {
  const pre = d.querySelector('pre'), summary = d.querySelector('summary');
  const before = [d.open, shown(pre), summary.textContent];
  summary.click();                                   // what a reader's click does: the <details> opens
  return before.concat([d.open, shown(pre), pre.textContent]);
});"""


def test_folded_code_is_folded_and_opens_on_a_click(server, browser):
    "A `#| code-fold: true` cell: its code hidden under 'Show the code', shown on a click; its output always shown."
    found = 0
    for stem in ['index'] + [c['stem'] for c in chapters()]:
        folded = _folded_cells(stem)
        if not folded: continue
        browser.get(server + stem + '.html')
        details = browser.execute_script(FOLDS_JS)                  # one round trip per page: open, shown, text
        assert len(details) == len(folded), f"{stem}: {len(folded)} folded cells, {len(details)} folded blocks"
        for (was_open, was_shown, summary, is_open, is_shown, text), code in zip(details, folded):
            first = next(l for l in code.splitlines() if l.strip() and not l.startswith('#|')).strip()
            assert not was_open and not was_shown, f"{stem}: {first!r} is not folded"
            assert 'Show the code' in summary, summary
            assert is_open and is_shown and first in text, f"{stem}: a click does not show {first!r}"
            found += 1
    assert found >= 1, "no notebook folds a cell with `#| code-fold: true`: nothing shows that folding works"


def test_the_site_never_shows_facts_md_or_the_seed(site):
    "Issue 9: the site cites its sources chapter; it never names a notes file or 'the seed'."
    phrases = re.compile(r'facts\.md|\bthe\s+seed\b', re.I)
    bad = []
    for page in sorted(site.glob('*.html')):
        text = re.sub(r'<script.*?</script>|<style.*?</style>|<[^>]+>', ' ', page.read_text(), flags=re.S)
        hits = [' '.join(m.group(0).split()) for m in phrases.finditer(text)]
        if hits: bad.append(f"{page.name}: {len(hits)} x {sorted(set(hits))}")
    assert not bad, '"facts.md" or "the seed" on the site:\n' + '\n'.join(bad)


def test_the_solutions_are_on_the_site_folded_and_without_an_api_entry(site):
    "Issue 18: every exercise's solution is on its page inside a fold (\"Show the code\"), and has no API entry."
    import importlib

    from dwlit.exercises import EXERCISES
    bad = []
    for n, e in EXERCISES.items():                       # each part's checks and solutions: an appendix page of 35
        src = importlib.import_module(e.check.__module__).__file__
        stem = re.search(r'File to edit: .*?/(\w+)\.ipynb', open(src).read()).group(1)
        page = (site / f'{stem}.html').read_text()
        name = e.solution.__name__
        at = re.search(rf'def\s*(?:</?span[^>]*>\s*)*{name}\b', page)
        if not at: bad.append(f"{stem}: exercise {n}'s {name} is not on the page"); continue
        fold = page.rfind('<details', 0, at.start())
        if fold == -1 or page.rfind('</details>', 0, at.start()) > fold or 'Show the code' not in page[fold:at.start()]:
            bad.append(f"{stem}: {name} is on the page but not inside a fold")
        if f'id="{name}"' in page: bad.append(f"{stem}: {name} has an API entry")
    assert not bad, '\n'.join(bad)


def test_the_kernels_bodies_are_on_their_pages(site):
    "Issue 9/10: a reader holds dwlit's kernels beside the original's, so the site shows their code, not just signatures."
    import html
    wanted = {'10_conv1d_kernels': ['for c_tile in', 'nisa.tensor_reduce(', 'def conv1d_depthwise_f_packing('],
              '14_conv2d': ['for c_tile in range(C_NUM_TILES):', 'for t in plan.tiles:', 'nisa.tensor_reduce('],
              '18_implicit_gemm': ['def conv1d_depthwise_implicit_gemm(', 'nisa.nc_matmul(']}
    missing = []
    for stem, lines in wanted.items():
        blocks = re.findall(r'<pre[^>]*>(.*?)</pre>', (site / f'{stem}.html').read_text(), flags=re.S)
        code = html.unescape('\n'.join(re.sub(r'<[^>]+>', '', b) for b in blocks))
        missing += [f"{stem}.html: {l!r}" for l in lines if l not in code]
    assert not missing, "kernel code the lessons walk through is not on the site:\n" + '\n'.join(missing)


# --- The site reads like a book: tables, code, navigation, notebooks, phone ------------------------------------------

MAX_PAGE_DESKTOP = 20_000        # px at 1400x1000 with every fold open: a chapter longer than this is cut (CONTRIBUTING.md)
MAX_PAGE_PHONE = 30_000          # px at 390 px wide, as the page loads
MAX_FOLD_RUN = 2                 # folded cells in a row with no text between
MIN_CODE_PX = 13                 # code blocks at least this (styles.css sets 13 px)
PHONE = (390, 844)               # a phone's CSS viewport

_ART = "const art = document.querySelector('article[role=main]') || document.querySelector('article') || document.body;"

_SPLIT_CELLS_JS = _ART + """
const rows = node => {            // the lines a node's text is laid out on: groups of vertically overlapping rects
  const rs = [], w = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
  for (let t = w.nextNode(); t; t = w.nextNode()) {
    const r = document.createRange(); r.selectNodeContents(t);
    rs.push(...Array.from(r.getClientRects()).filter(x => x.width > 0));
  }
  rs.sort((a, b) => a.top - b.top);
  let n = 0, bottom = -Infinity;
  for (const x of rs) { if (x.top >= bottom - 1) { n++; bottom = x.bottom; } else bottom = Math.max(bottom, x.bottom); }
  return n;
};
let cells = 0; const split = [];
for (const td of art.querySelectorAll('td, th')) {
  const text = td.textContent.trim();
  if (!text || /\\s/.test(text) || !td.getBoundingClientRect().width) continue;   // a single word or number
  cells++;
  const n = rows(td);
  if (n > 1) split.push(`${text.slice(0, 40)} (${n} lines)`);
}
return [cells, split];"""


def split_cells(browser, url) -> tuple:
    "(table cells holding a single word or number, [those laid out on more than one line]) on a page."
    browser.get(url)
    return tuple(browser.execute_script(_SPLIT_CELLS_JS))


_CODE_JS = _ART + """
const out = {blocks: 0, small: [], lines: 0, wrapped: 0, lost: []};
for (const pre of art.querySelectorAll('pre')) {
  if (!pre.getBoundingClientRect().width) continue;                       // folded away
  out.blocks++;
  const px = parseFloat(getComputedStyle(pre).fontSize);
  if (px < arguments[0]) out.small.push(`${px} px: ${pre.textContent.trim().slice(0, 50)}`);
  // the source lines of the block, each as its text pieces (a line may span several highlighted spans)
  const lines = [[]], w = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  for (let t = w.nextNode(); t; t = w.nextNode()) {
    let start = 0;
    for (let i = 0; i <= t.data.length; i++) {
      if (i === t.data.length || t.data[i] === '\\n') {
        if (i > start) lines[lines.length - 1].push([t, start, i]);
        if (i < t.data.length) lines.push([]);
        start = i + 1;
      }
    }
  }
  for (const pieces of lines) {
    const text = pieces.map(([t, a, b]) => t.data.slice(a, b)).join('');
    if (!text.trim()) continue;
    out.lines++;
    const rects = [];
    let first = null;
    for (const [t, a, b] of pieces) {
      const r = document.createRange(); r.setStart(t, a); r.setEnd(t, b);
      rects.push(...Array.from(r.getClientRects()).filter(x => x.width > 0));
      if (!first) {
        const k = t.data.slice(a, b).search(/\\S/);
        if (k >= 0) { const c = document.createRange(); c.setStart(t, a + k); c.setEnd(t, a + k + 1); first = c.getBoundingClientRect(); }
      }
    }
    if (!first || !rects.length) continue;
    const later = rects.filter(x => x.top >= first.bottom - 1);            // rows below the line's first row
    if (!later.length) continue;
    out.wrapped++;
    const left = Math.min(...later.map(x => x.left));
    if (left <= first.left + 1) out.lost.push(text.trim().slice(0, 60));   // continuation not indented past the text
  }
}
return out;"""


def code_layout(browser, url) -> dict:
    "Code blocks on a page, folded ones opened: how many, those under MIN_CODE_PX, lines, wrapped lines, wrapped lines"
    " that lose their indentation."
    browser.get(url)
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    return browser.execute_script(_CODE_JS, MIN_CODE_PX)


def page_verdict(pages: dict) -> list:
    "What breaks the page goals in `pages` ({stem: measure_pages.measure's dict}): length with every fold open at"
    " 1400 px, length as loaded at 390 px, the longest run of folded cells with no text between."
    bad = []
    for k, m in pages.items():
        if m['desktop'] > MAX_PAGE_DESKTOP: bad.append(f"{k}: {m['desktop']:,} px at 1400 with every fold open, more than {MAX_PAGE_DESKTOP:,}")
        if m['phone_closed'] > MAX_PAGE_PHONE: bad.append(f"{k}: {m['phone_closed']:,} px at 390 as loaded, more than {MAX_PAGE_PHONE:,}")
        if m['run'] > MAX_FOLD_RUN: bad.append(f"{k}: {m['run']} folded cells in a row with no text between, more than {MAX_FOLD_RUN}")
    return bad


def misplaced_api_entries(begin=None) -> list:
    "API entries that do not head their own code, in every chapter, as the build (or nbdev's `begin`) orders them."
    sys.path.insert(0, str(root / 'scripts'))
    import build_docs
    import nbdev.processors as P
    from nbdev.process import NBProcessor
    build_docs.fix_mv_exports()
    fixed = P.mv_exports.begin
    if begin: P.mv_exports.begin = begin
    bad = []
    try:
        for c in chapters():
            p = NBProcessor(str(root / 'nbs' / c['file']), [P.populate_language, P.add_show_docs, P.mv_exports]); p.process()
            cells = p.nb.cells
            for i, cell in enumerate(cells):
                m = re.match(r'show_doc\((\w+)\)', cell.source)
                if not m: continue
                j = next((k for k in range(i + 1, len(cells)) if not cells[k].source.startswith('show_doc(')), None)
                if j is None or 'exports' not in getattr(cells[j], 'directives_', {}): continue
                names = [a or b for a, b in re.findall(r'^(?:def|class) (\w+)|^(\w+)\s*=', cells[j].source, re.M)]
                if m.group(1) not in names: bad.append(f"{c['stem']}: the entry of {m.group(1)} heads the code of {names[:3]}")
    finally: P.mv_exports.begin = fixed
    return bad


def test_every_api_entry_heads_its_own_code():
    "On the site an exported function's API entry sits right above its code, never above a neighbour's constants."
    assert misplaced_api_entries() == []
    import build_docs
    assert misplaced_api_entries(build_docs.fix_mv_exports.nbdev_begin)      # shown failing: nbdev's own ordering


def test_page_verdict_catches_a_long_page_a_long_phone_page_and_a_run_of_folds():
    ok = dict(desktop=12_000, phone_closed=20_000, run=2)
    assert page_verdict({'07_definition': ok}) == []
    assert page_verdict({'07_definition': {**ok, 'desktop': 20_001}}) == \
        ['07_definition: 20,001 px at 1400 with every fold open, more than 20,000']
    assert page_verdict({'x': {**ok, 'phone_closed': 30_001}}) == ['x: 30,001 px at 390 as loaded, more than 30,000']
    assert page_verdict({'x': {**ok, 'run': 3}}) == ['x: 3 folded cells in a row with no text between, more than 2']


def test_every_chapter_page_is_short_on_a_desktop_and_a_phone_with_few_folds(site):
    "A chapter reads in one sitting: cut, not folded (issue 28's goals, measured by scripts/measure_pages.py)."
    if not have_chromium(): pytest.skip(MISSING)
    from measure_pages import measure
    pages = measure([c['stem'] for c in chapters()], site)
    print('pages:', ', '.join(f"{k} {m['desktop']:,}/{m['phone_closed']:,} run {m['run']}" for k, m in pages.items()))
    bad = page_verdict(pages)
    assert not bad, "chapter pages that do not read in one sitting:\n" + '\n'.join(bad)


def test_no_table_cell_splits_a_word_or_number(server, browser):
    "A cell holding one word or number (`org_image_index`, `199.2`) is laid out on one line, at 1400 px and on a phone."
    report, total, n = [], 0, 0
    for width in (WINDOW, PHONE):
        _emulate(browser, width)
        try:
            for c in [dict(stem='index')] + chapters():
                cells, split = split_cells(browser, server + c['stem'] + '.html')
                total += cells; n += len(split)
                report += [f"{c['stem']}.html at {width[0]} px: {', '.join(split[:6])}" + (' ...' if len(split) > 6 else '')] if split else []
        finally: _emulate(browser, None)
    print(f"{n} of {total} single-word table cells split over lines")
    assert not report, f"{n} of {total} single-word or single-number table cells split over lines:\n" + '\n'.join(report)


def test_a_split_cell_is_caught(server, browser):
    "The cell check can fail: a word in a narrow cell that may break anywhere is reported, one that may not is not."
    page = docs / '_planted_a_split_cell_is_caught.html'
    page.write_text("""<html><body><article role="main"><table style="width: 150px">
        <tr><td style="width: 40px; max-width: 40px; overflow-wrap: anywhere">org_image_index</td>
            <td style="white-space: nowrap">h_tile_count</td><td>two words</td></tr></table></article></body></html>""")
    try:
        cells, split = split_cells(browser, server + '_planted_a_split_cell_is_caught.html')
        assert cells == 2 and len(split) == 1 and split[0].startswith('org_image_index'), (cells, split)
    finally: page.unlink()


def _emulate(browser, size):
    "Lay pages out as a phone of `size` (CSS px, touch), or as the desktop window again (None)."
    if size is None or tuple(size) == WINDOW: browser.execute_cdp_cmd('Emulation.clearDeviceMetricsOverride', {}); return
    browser.execute_cdp_cmd('Emulation.setDeviceMetricsOverride',
                            {'width': size[0], 'height': size[1], 'deviceScaleFactor': 1, 'mobile': True})


def test_code_is_at_least_13_px_and_keeps_its_indentation(server, browser):
    "Every code block (cells, outputs, API signatures) is at least 13 px, and a line that wraps continues indented."
    report, lines, wrapped = [], 0, 0
    for c in [dict(stem='index')] + chapters():
        got = code_layout(browser, server + c['stem'] + '.html')
        lines += got['lines']; wrapped += got['wrapped']
        if got['small']: report.append(f"{c['stem']}.html: {len(got['small'])} of {got['blocks']} code blocks below "
                                       f"{MIN_CODE_PX} px, e.g. {got['small'][0]}")
        if got['lost']: report.append(f"{c['stem']}.html: {len(got['lost'])} wrapped lines continue at or left of their "
                                      f"own indentation, e.g. {got['lost'][0]!r}")
    print(f"{lines} code lines, {wrapped} wrapped")
    assert not report, '\n'.join(report)


def test_small_code_and_a_wrap_to_column_0_are_caught(server, browser):
    "The code check can fail: 12 px code, and a long indented line wrapping back to the block's left edge."
    page = docs / '_planted_small_code_and_a_wrap_to_column_0_are_caught.html'
    page.write_text(f"""<html><body><article role="main" style="width: 500px"><pre style="font-size: 12px;
        white-space: pre-wrap; overflow-wrap: anywhere">def f():\n    return {'x + ' * 60}1\n</pre></article></body></html>""")
    try:
        got = code_layout(browser, server + '_planted_small_code_and_a_wrap_to_column_0_are_caught.html')
        assert len(got['small']) == 1 and got['lines'] == 2 and got['wrapped'] == 1 and len(got['lost']) == 1, got
    finally: page.unlink()


def _sidebar_next(stem):
    "Where the sidebar's reading order goes after a chapter: the next chapter's page, or the home page after the last."
    chs = chapters()
    i = [c['stem'] for c in chs].index(stem)
    return (chs[i + 1]['stem'] if i + 1 < len(chs) else 'index') + '.html'


def test_chapters_are_numbered_in_sidebar_titles_and_previous_next(server, browser):
    "Chapter N is 'N. Title' in the sidebar, the page's title and heading, and the Previous/Next buttons."
    chs, bad = chapters(), []
    names = {c['stem'] + '.html': label(c).replace('`', '') for c in chs}
    for c in chs:
        browser.get(server + c['stem'] + '.html')
        side = [t for _, t, _ in _nav(browser)]
        if side != [label(x).replace('`', '') for x in chs]: bad.append(f"{c['stem']}.html: sidebar {side[:3]} ...")
        title, h1, rel = browser.execute_script("""return [document.title,
            (document.querySelector('article h1') || {textContent: ''}).textContent.replace('¶', '').trim(),
            Array.from(document.querySelectorAll('.related-pages a')).map(a => [a.getAttribute('href'),
                a.querySelector('.title').textContent.trim()])];""")
        want = label(c).replace('`', '')
        if not title.startswith(want): bad.append(f"{c['stem']}.html: page title {title!r}, not {want!r}")
        if h1 != want: bad.append(f"{c['stem']}.html: heading {h1!r}, not {want!r}")
        for href, text in rel:
            if href in names and text != names[href]: bad.append(f"{c['stem']}.html: Previous/Next {text!r}, not {names[href]!r}")
    assert not bad, '\n'.join(bad)


_LAST_JS = _ART + """
const vis = e => e.getBoundingClientRect().width > 0;
const all = Array.from(art.querySelectorAll('p, pre, table, img, li, h1, h2, h3, h4, .cell, .animation, details')).filter(vis);
const last = all[all.length - 1];
return last ? [last.tagName, !!last.closest('.cell'), last.textContent.trim().replace(/\\s+/g, ' ').slice(0, 200),
               Array.from(last.querySelectorAll('a')).map(a => a.getAttribute('href'))] : ['', false, '', []];"""


def test_every_chapter_ends_with_a_next_link_that_follows_the_sidebar(server, browser):
    "The last thing on a chapter page is a 'Next:' paragraph linking the chapter after it in the sidebar."
    bad = []
    for c in chapters():
        browser.get(server + c['stem'] + '.html')
        tag, in_cell, text, hrefs = browser.execute_script(_LAST_JS)
        want = _sidebar_next(c['stem'])
        if tag != 'P' or in_cell or not text.startswith('Next:'):
            bad.append(f"{c['stem']}.html ends on a {tag.lower()}{' in a cell' if in_cell else ''}: {text[:80]!r}")
        elif want not in [h.split('#')[0] for h in hrefs]:
            bad.append(f"{c['stem']}.html: 'Next:' links {hrefs}, the sidebar's next is {want}")
    assert not bad, f"{len(bad)} chapters do not end with the sidebar's 'Next:':\n" + '\n'.join(bad)


def _only_checks(code: str) -> bool:
    "Whether a code cell is nothing but checks: test_eq/test_fail/... calls and asserts (written apart from the build's)."
    try: body = ast.parse(code).body
    except SyntaxError: return False
    return bool(body) and all(isinstance(s, ast.Assert) or (isinstance(s, ast.Expr) and re.match(r'test_\w+\(', ast.unparse(s)))
                              for s in body)


def test_no_visible_cell_is_a_bare_test(server, browser):
    "A cell of nothing but test_eq/test_fail calls is folded under 'Show the checks', not shown as a lesson's code."
    bad = []
    for c in [dict(stem='index')] + chapters():
        browser.get(server + c['stem'] + '.html')
        codes = browser.execute_script(_ART + """return Array.from(art.querySelectorAll('.cell_input pre'))
            .filter(p => !p.closest('details:not([open])')).map(p => p.textContent);""")
        bare = [code for code in codes if _only_checks(code)]
        if bare: bad.append(f"{c['stem']}.html: {len(bare)} visible cells are bare checks, e.g. {bare[0].strip()[:70]!r}")
    assert not bad, '\n'.join(bad)


def test_the_bare_check_test_can_fail():
    assert _only_checks("test_eq(f(1), 2)\nassert g()\ntest_fail(lambda: h(), contains='x')")
    assert not _only_checks("y = f(1)\ntest_eq(y, 2)") and not _only_checks("print(1)") and not _only_checks("")


def test_every_page_links_its_notebook_download_and_repository(server, browser):
    "Each chapter links its notebook twice: a download from this site (the real .ipynb) and the file in the repository."
    repo = (tomllib.loads((root / 'pyproject.toml').read_text())['project'].get('urls') or {}).get('Repository', '').rstrip('/')
    assert repo, "pyproject.toml's [project.urls] names no Repository"
    bad = []
    for c in chapters():
        url = server + c['stem'] + '.html'
        browser.get(url)
        hrefs = browser.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
        local = [h for h in hrefs if urlparse(h).path.endswith(c['stem'] + '.ipynb') and not urlparse(h).netloc]
        if not local: bad.append(f"{c['stem']}.html: no link to download {c['file']}"); continue
        try:
            with urllib.request.urlopen(urljoin(url, local[0])) as r: nb = json.loads(r.read())
        except Exception as e: bad.append(f"{c['stem']}.html: {local[0]} does not download a notebook ({e})"); continue
        if nb != json.loads((root / 'nbs' / c['file']).read_text()): bad.append(f"{c['stem']}.html: {local[0]} is not nbs/{c['file']}")
        if f"{repo}/blob/main/nbs/{c['file']}" not in hrefs: bad.append(f"{c['stem']}.html: no link to {repo}/blob/main/nbs/{c['file']}")
    assert not bad, '\n'.join(bad)


def test_the_home_page_has_a_figure_and_the_chapters(server, browser):
    "The home page is for readers: a figure, every chapter linked, how to open the notebooks."
    browser.get(server + 'index.html'); _wait_images(browser)
    figs, links, text = browser.execute_script(_ART + """return [
        Array.from(art.querySelectorAll('.cell_output img')).filter(i => i.naturalWidth > 0).length,
        Array.from(art.querySelectorAll('a[href]')).map(a => a.getAttribute('href')), art.innerText];""")
    assert figs >= 1, "the home page shows no figure"
    missing = [c['stem'] for c in chapters() if c['stem'] + '.html' not in links]
    assert not missing, f"the home page does not link {missing}"
    assert 'JupyterLab' in text and 'pytest' not in text and 'Chromium' not in text, \
        "the home page should say how to open the notebooks, and leave the test suite and the browser to CONTRIBUTING.md"


def test_on_a_phone_figures_open_full_size_and_tables_scroll(server, browser):
    "At 390 px a figure shown smaller than drawn is a link to itself (a tap shows it full size); a wide table scrolls."
    bad = []
    _emulate(browser, PHONE)
    try:
        for c in [dict(stem='index')] + chapters():
            browser.get(server + c['stem'] + '.html'); _wait_images(browser)
            figs, tables = browser.execute_script(_ART + """return [
                Array.from(art.querySelectorAll('.cell_output img')).filter(i => i.naturalWidth > 0 && !i.closest('.animation')
                    && i.getBoundingClientRect().width < i.naturalWidth - 1).map(i => {
                    const a = i.closest('a[href]'); return [i.currentSrc || i.src, a ? a.href : '']; }),
                Array.from(art.querySelectorAll('table')).filter(t => t.getBoundingClientRect().width > art.clientWidth + 1).map(t => {
                    let s = t.parentElement; while (s && s !== art && !['auto', 'scroll'].includes(getComputedStyle(s).overflowX)) s = s.parentElement;
                    return s && s !== art ? '' : t.textContent.trim().slice(0, 50); }).filter(x => x)];""")
            bad += [f"{c['stem']}.html: figure {src[-30:]} is shrunk and {'links ' + href[-30:] if href else 'not a link'}"
                    for src, href in figs if href != src]
            bad += [f"{c['stem']}.html: a table wider than the phone does not scroll: {t!r}" for t in tables]
    finally: _emulate(browser, None)
    assert not bad, f"{len(bad)} problems on a {PHONE[0]} px phone:\n" + '\n'.join(bad[:30])


def test_no_link_shows_as_raw_markdown(site):
    "A link is a link: no page shows markdown link syntax (`[dma_copy](https://...)`) as text outside code."
    import html
    bad = []
    for page in sorted(site.glob('*.html')):
        text = re.sub(r'<pre.*?</pre>|<code.*?</code>|<script.*?</script>|<style.*?</style>', ' ', page.read_text(), flags=re.S)
        text = html.unescape(re.sub(r'<[^>]+>', '', text))
        bad += [f"{page.name}: ...{m.group(0)}" for m in re.finditer(r'\S{0,30}\]\((?:https?:|[\w.-]+\.html)[^)\s]{0,60}\)?', text)]
    assert not bad, "markdown shown as text:\n" + '\n'.join(bad)


def _classes():
    "The names of dwlit's classes."
    return {n.name for py in (root / 'dwlit').glob('*.py') for n in ast.parse(py.read_text()).body if isinstance(n, ast.ClassDef)}


def test_api_signatures_show_classes_as_classes_and_short_defaults(site):
    "show_doc's signatures: a class reads `class X(...)`, not `def X(...) -> None`; no default is longer than 80 characters."
    import html
    classes, bad = _classes(), []
    for page in sorted(site.glob('*.html')):
        for block in re.findall(r'<p class="rubric"[^>]*>(?:(?!</p>).)*</p>\s*<div class="highlight-python[^"]*"><div class="highlight">'
                                r'<pre>(.*?)</pre>', page.read_text(), flags=re.S):
            sig = html.unescape(re.sub(r'<[^>]+>', '', block)).strip()
            m = re.match(r'(def|class) (\w+)', sig)
            if not m: continue
            if m.group(1) == 'def' and m.group(2) in classes: bad.append(f"{page.name}: class {m.group(2)} shown as {sig.splitlines()[0]!r}")
            py = re.sub(r'^class ', 'def ', re.sub(r'^class (\w+):$', r'class \1():', sig))     # `class Trace:`
            py = re.sub(r', \.\.\.([}\])])', r'\1', py).replace('<factory>', 'factory')   # what the build elided
            try: fn = ast.parse(py.rstrip(':') + ': pass').body[0]
            except SyntaxError: bad.append(f"{page.name}: {m.group(2)}: signature does not parse: {sig[:80]!r}"); continue
            for d in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
                seg = ast.unparse(d)
                if len(seg) > 80: bad.append(f"{page.name}: {m.group(2)}: a default of {len(seg)} characters: {seg[:50]!r}...")
    assert not bad, '\n'.join(bad)


def test_a_missing_extra_is_explained_in_one_line(tmp_path):
    "build_docs.py without nbdev installed says what is missing and how to install it, in one line, no traceback."
    code = ("import sys, runpy; sys.modules['nbdev'] = None; sys.argv = ['build_docs.py']; "
            f"runpy.run_path({str(root / 'scripts' / 'build_docs.py')!r}, run_name='__main__')")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=tmp_path)
    lines = (r.stdout + r.stderr).strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and 'Traceback' not in r.stderr, r.stdout + r.stderr
    assert 'nbdev' in lines[0] and '.[dev]' in lines[0], lines[0]


def test_a_good_build_says_where_to_open_the_site(site):
    "The build's one line ends by naming the page to open."
    if not BUILD_OUTPUT: pytest.skip("DWLIT_DOCS: the site was built elsewhere")
    lines = BUILD_OUTPUT[0].strip().splitlines()
    assert len(lines) == 1 and 'open docs/index.html' in lines[0], BUILD_OUTPUT[0]


def test_a_function_shown_in_full_is_not_signed_twice(site):
    "An API entry whose code is on the page keeps its anchor (links land on it) but not a second copy of its signature."
    import html
    page = (site / '13_dilation.html').read_text()
    code = html.unescape(re.sub(r'<[^>]+>', '', '\n'.join(re.findall(r'<pre[^>]*>(.*?)</pre>', page, flags=re.S))))
    assert 'id="h_window_plan"' in page
    assert code.count('def h_window_plan(') == 1, code.count('def h_window_plan(')
