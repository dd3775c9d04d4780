"""The docs website, built the Quarto-free way (scripts/build_docs.py) and read in headless Debian Chromium.

Fails on: a page that does not load, a browser console error, a broken internal link (page or #anchor), an image
that does not render (naturalWidth 0), a chapter missing from the navigation, an exported function without API docs,
a saved figure or animation that is not on its page. Screenshots go to test-artifacts/site/."""
import ast, functools, http.server, json, re, subprocess, sys, threading, urllib.request
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urldefrag, urlparse

import pytest

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / 'scripts'))
from chapters import chapters  # noqa: E402
from browser import Chromium, console_errors, have_chromium, MISSING  # noqa: E402

docs = root / 'docs'
artifacts = root / 'test-artifacts' / 'site'
KERNEL_CHAPTERS = ['05_conv1d_kernels', '09_conv2d', '06_conv1d_dispatch', '04_virtual_im2col']


@pytest.fixture(scope='module')
def site():
    "Build the site into docs/ once for this module."
    r = subprocess.run([sys.executable, str(root / 'scripts' / 'build_docs.py')], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, f"scripts/build_docs.py failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert (docs / 'index.html').exists()
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
    with Chromium() as d: yield d


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
    page = docs / '_broken_check.html'
    page.write_text('<a href="nowhere.html">x</a> <a href="index.html#no-such-anchor">y</a>')
    try:
        fetch.cache_clear()
        _, broken = crawl(server + '_broken_check.html')
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
    page = docs / '_broken_check.html'
    page.write_text('<html><body><img src="_images/missing.png"><script>undefined_function()</script></body></html>')
    try:
        console_errors(browser)
        browser.get(server + '_broken_check.html'); _wait_images(browser)
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
        assert got == [(c['section'], c['title'].replace('`', '')) for c in chs], f"{page}.html: navigation {got}"
        hrefs = [h for *_, h in nav]
        for c, h in zip(chs, hrefs): assert h in (c['stem'] + '.html', '#'), (page, c['stem'], h)


def _exports():
    "{notebook stem: [exported functions and classes]} from each module's __all__ and its 'File to edit' header."
    out = {}
    for py in sorted((root / 'dwlit').glob('*.py')):
        text = py.read_text()
        m = re.search(r'File to edit: \.\./nbs/(\w+)\.ipynb', text)
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
    nb = json.loads((root / 'nbs' / f'{stem}.ipynb').read_text())
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
