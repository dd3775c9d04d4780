"""A reader in JupyterLab: open a chapter, run all cells, move a widget slider, see the figure under it change.

JupyterLab runs on 127.0.0.1 on a free port with a token and opens no browser of its own; headless Debian Chromium
drives it. The notebook is a copy in a temporary folder (running it must not rewrite nbs/), and the server and its
kernels are stopped whatever happens. The chapter and widget are the first entry of LAB that exists.
The figure must change and must not come back blank (the share of drawn pixels is compared with the first figure)."""
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / 'scripts'))
from browser import MISSING, Chromium, have_chromium  # noqa: E402
from chapters import notebook  # noqa: E402

# chapter:widget, the first whose notebook exists and has slider widgets. Default: chapter 9's dispatch explorer,
# which once redrew a blank figure in a live JupyterLab (a print before the figure in one ipywidgets Output); every
# widget now keeps its text in a separate HTML widget. DWLIT_LAB=02_memory:0 (etc.) drives another widget.
LAB = [(c, int(w)) for c, w in (e.split(':') for e in
       os.environ.get('DWLIT_LAB', '07_conv1d_dispatch:0,08_virtual_im2col:0,03_access_patterns:0').split(','))]
WIDGET_MIME = 'application/vnd.jupyter.widget-view+json'
artifacts = root / 'test-artifacts' / 'jupyterlab'


def _has_widget(path):
    nb = json.loads(path.read_text())
    return any(WIDGET_MIME in o.get('data', {}) for c in nb['cells'] for o in c.get('outputs', []))


def chapter():
    "(notebook stem, index of its slider widget) to drive."
    def found(n):
        try: return notebook(n)
        except FileNotFoundError: return None
    return next(((n, w) for n, w in LAB if found(n) and _has_widget(found(n))), (None, 0))


CHAPTER, WIDGET = chapter()


def _free_port():
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    "A JupyterLab server on 127.0.0.1 serving a copy of the chapter; yields (url, token, notebook name)."
    if not have_chromium(): pytest.skip(MISSING)
    if CHAPTER is None: pytest.fail(f"none of the chapters {LAB} exists with a slider widget")
    name = CHAPTER + '.ipynb'
    work = tmp_path / 'nbs'; work.mkdir()
    (work / name).write_text(notebook(CHAPTER).read_text())
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, 'JUPYTER_CONFIG_DIR': str(tmp_path / 'config'), 'JUPYTER_RUNTIME_DIR': str(tmp_path / 'runtime'),
           'JUPYTERLAB_SETTINGS_DIR': str(tmp_path / 'settings'), 'JUPYTERLAB_WORKSPACES_DIR': str(tmp_path / 'ws'),
           'MPLBACKEND': 'module://matplotlib_inline.backend_inline'}
    cmd = [sys.executable, '-m', 'jupyterlab', '--no-browser', '--ServerApp.ip=127.0.0.1', f'--ServerApp.port={port}',
           '--ServerApp.port_retries=0', f'--IdentityProvider.token={token}', f'--ServerApp.root_dir={work}',
           '--LabApp.expose_app_in_browser=True', '--LabApp.news_url=', '--ContentsManager.allow_hidden=False',
           '--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate', '--LabApp.extension_manager=readonly']
    if hasattr(os, 'geteuid') and os.geteuid() == 0: cmd.append('--allow-root')   # CI runs as root
    # every cell in the page, not only those scrolled into view (JupyterLab 4 can window long notebooks)
    tracker = tmp_path / 'settings' / '@jupyterlab' / 'notebook-extension' / 'tracker.jupyterlab-settings'
    tracker.parent.mkdir(parents=True); tracker.write_text(json.dumps({'windowingMode': 'none'}))
    news = tmp_path / 'settings' / '@jupyterlab' / 'apputils-extension' / 'notification.jupyterlab-settings'
    news.parent.mkdir(parents=True); news.write_text(json.dumps({'fetchNews': 'false'}))   # no news pop-up
    log = open(tmp_path / 'jupyterlab.log', 'w')
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f'http://127.0.0.1:{port}'
    try:
        deadline = time.time() + 90
        while True:
            try:
                with urllib.request.urlopen(f'{url}/api/status?token={token}', timeout=2) as r:
                    if r.status == 200: break
            except OSError: pass
            assert proc.poll() is None, f"JupyterLab exited: {(tmp_path / 'jupyterlab.log').read_text()[-2000:]}"
            assert time.time() < deadline, "JupyterLab did not answer within 90 s"
            time.sleep(0.5)
        yield url, token, name
    finally:
        proc.terminate()                                      # the server shuts its kernels down on SIGTERM
        try: proc.wait(20)
        except subprocess.TimeoutExpired: pass
        try: os.killpg(proc.pid, signal.SIGKILL)              # anything of this server's left (its session only)
        except ProcessLookupError: pass
        proc.wait(); log.close()


def _wait(driver, js, timeout, what):
    "Poll a JavaScript expression until it is truthy; return its value."
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = driver.execute_script(js)
        if v: return v
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


NB = "const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
IDLE = NB + " return !!(w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel && " \
            "w.sessionContext.session.kernel.status === 'idle');"
KERNEL_OR_DIALOG = IDLE.replace('return', "if (document.querySelector('.jp-Dialog .jp-mod-accept')) return true; return", 1)
ERRORS = NB + """ const cells = w.content.model.cells, errs = [];
    for (let i = 0; i < cells.length; i++) { const c = cells.get(i); if (c.type !== 'code') continue;
        for (let j = 0; j < c.outputs.length; j++) { const o = c.outputs.get(j);
            if (o.type === 'error') errs.push(`cell ${i}: ${o.toJSON().ename}: ${o.toJSON().evalue}`); } }
    return errs;"""
INK = """const img = new Image(); const done = arguments[arguments.length - 1];
    img.onload = () => { const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
        const g = c.getContext('2d'); g.drawImage(img, 0, 0); const d = g.getImageData(0, 0, c.width, c.height).data;
        let ink = 0; for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < 600) ink++;
        done(ink / (c.width * c.height)); };
    img.onerror = () => done(-1); img.src = arguments[0];"""   # share of pixels that are not (nearly) white

# the first widget (a slider with a figure under it) in the outputs: its image and its sliders
BOX = """Array.from(new Set(Array.from(document.querySelectorAll('.jp-OutputArea-output .widget-slider'))
        .map(s => s.closest('.jp-OutputArea-output'))))[""" + str(WIDGET) + "]"
FIGURE = """const box = """ + BOX + """;
    if (!box) return null; const img = box.querySelector('img'); return img ? img.src : null;"""


def test_slider_moves_the_figure(lab):
    url, token, name = lab
    with Chromium() as d:
        d.set_window_size(1400, 1000)
        d.get(f'{url}/lab/tree/{name}?token={token}')
        # nbdev-clean leaves no kernelspec in the notebook, so JupyterLab asks which kernel: accept its default
        _wait(d, KERNEL_OR_DIALOG, 120, "the notebook to open")
        d.execute_script("const b = document.querySelector('.jp-Dialog .jp-mod-accept'); if (b) b.click();")
        _wait(d, IDLE, 120, "the notebook's kernel to start")
        d.set_script_timeout(300)
        ok = d.execute_async_script("""const done = arguments[arguments.length - 1];
            window.jupyterapp.commands.execute('notebook:run-all-cells').then(r => done(r), e => done(String(e)));""")
        assert ok is True, f"run all cells: {ok}"
        _wait(d, IDLE, 60, "the kernel to be idle after running all cells")
        errors = d.execute_script(ERRORS)
        assert not errors, f"{name}: cells raised: {errors}"
        before = _wait(d, FIGURE, 30, "a slider widget with a figure")
        artifacts.mkdir(parents=True, exist_ok=True)
        handle = d.execute_script("""const box = """ + BOX + """; box.scrollIntoView();
            return box.querySelector('.noUi-handle');""")
        label = d.execute_script("return arguments[0].closest('.widget-slider').querySelector('.widget-label').textContent", handle)
        lo, now = (float(handle.get_attribute(a)) for a in ('aria-valuemin', 'aria-valuenow'))
        d.save_screenshot(str(artifacts / f'{Path(name).stem}_before_slider.png'))
        handle.click()
        handle.send_keys('\ue012' if now > lo else '\ue014')   # ArrowLeft, or ArrowRight at the minimum: one step
        moved = float(handle.get_attribute('aria-valuenow'))
        assert moved != now, f"slider '{label}' did not move (still {now})"
        after = _wait(d, f"const src = (() => {{ {FIGURE} }})(); return src && src !== {json.dumps(before)} ? src : null;",
                      60, f"the figure to change after slider '{label}' moved {now} -> {moved}")
        assert after != before
        ink_before, ink_after = d.execute_async_script(INK, before), d.execute_async_script(INK, after)
        assert ink_after > 0.25 * ink_before, (f"the figure after moving '{label}' is nearly blank: {ink_after:.1%} of "
                                               f"its pixels drawn, against {ink_before:.1%} before")
        # the new figure has rendered (decoded, non-zero size), then a screenshot for a human
        _wait(d, FIGURE.replace('return img ? img.src : null;', 'return img && img.complete && img.naturalWidth > 0;'),
              30, "the new figure to render")
        d.execute_script(BOX + ".scrollIntoView();")
        d.execute_async_script("const done = arguments[arguments.length - 1]; "
                               "requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 500)));")
        d.save_screenshot(str(artifacts / f'{Path(name).stem}_after_slider.png'))
