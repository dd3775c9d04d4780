"""A reader in JupyterLab completes exercise 1.1 at the end of chapter 1 and runs the notebook on: open it, run all cells
(no cell raises, and the stub's check says 'not done yet'), type the answer into the stub in the editor, run the stub
and its check with Shift+Enter, see the check pass, and run all cells again with it solved (still nothing raises).

The JupyterLab server, the browser and the JavaScript helpers are those of tests/test_jupyterlab.py (Debian's headless
Chromium; skipped with a reason when it is missing, an error when DWLIT_REQUIRE_BROWSER is set)."""
import json
import sys
import time
from pathlib import Path

import pytest

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / 'scripts')); sys.path.insert(0, str(root / 'tests'))
import test_jupyterlab as tl  # noqa: E402  (its `lab` fixture serves a copy of the notebook named by tl.CHAPTER)
from browser import Chromium  # noqa: E402

lab = tl.lab
CHAPTER = '01_one_kernel'
STUB, CHECK = 'from dwlit.exercises import check_window_view', 'check_window_view(window_view)'   # the stub cell imports its check first
ANSWER = 'return img_full.ap([[T * image_size, P], [1, W_out], [1, W_f]], offset=c_tile * image_size)'

# the index of the first code cell whose source starts with `prefix`, and the text of a cell's outputs
CELL = tl.NB + """ const cells = w.content.model.cells;
    for (let i = 0; i < cells.length; i++) { const c = cells.get(i);
        if (c.type === 'code' && c.sharedModel.getSource().startsWith(arguments[0])) return i; }
    return -1;"""
OUTPUT = tl.NB + """ const c = w.content.model.cells.get(arguments[0]); let text = '';
    for (let j = 0; j < c.outputs.length; j++) { const o = c.outputs.get(j).toJSON();
        text += o.text ? [].concat(o.text).join('') : (o.data && o.data['text/plain'] ? [].concat(o.data['text/plain']).join('') : ''); }
    return text;"""
SOURCE = tl.NB + " return w.content.model.cells.get(arguments[0]).sharedModel.getSource();"


@pytest.fixture
def exercises_lab(monkeypatch, request):
    "JupyterLab serving a copy of the chapter whose exercise this is."
    try: tl.notebook(CHAPTER)
    except FileNotFoundError: pytest.fail(f"nbs/*/{CHAPTER}.ipynb is missing")
    monkeypatch.setattr(tl, 'CHAPTER', CHAPTER)
    return request.getfixturevalue('lab')


def _output_with(d, cell, text, timeout, what):
    "Wait until cell `cell`'s outputs contain `text`; return them."
    return tl._wait(d, f"const t = (() => {{ {OUTPUT} }})({cell}); return t.includes({json.dumps(text)}) ? t : null;"
                    .replace('arguments[0]', str(cell)), timeout, what)


def test_a_reader_completes_exercise_1_1(exercises_lab):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys
    url, token, name = exercises_lab
    artifacts = tl.artifacts
    with Chromium() as d:
        d.set_window_size(1400, 1000)
        d.get(f'{url}/lab/tree/{name}?token={token}')
        tl._wait(d, tl.KERNEL_OR_DIALOG, 120, "the notebook to open")
        d.execute_script("const b = document.querySelector('.jp-Dialog .jp-mod-accept'); if (b) b.click();")
        tl._wait(d, tl.IDLE, 120, "the notebook's kernel to start")
        d.set_script_timeout(300)
        ok = d.execute_async_script("""const done = arguments[arguments.length - 1];
            window.jupyterapp.commands.execute('notebook:run-all-cells').then(r => done(r), e => done(String(e)));""")
        assert ok is True, f"run all cells: {ok}"
        tl._wait(d, tl.IDLE, 120, "the kernel to be idle after running all cells")
        errors = d.execute_script(tl.ERRORS)
        assert not errors, f"{name}: cells raised: {errors}"     # the stubs say 'not done yet'; they do not raise

        stub, check = d.execute_script(CELL, STUB), d.execute_script(CELL, CHECK)
        assert stub >= 0 and check == stub + 1, f"the stub (cell {stub}) must sit right above its check (cell {check})"
        before = d.execute_script(OUTPUT, check)
        assert 'Exercise 1.1 (the sliding window) is not done yet' in before, before

        # the reader's edit: click the stub's last line, select it (after its indentation) and type the answer over it
        artifacts.mkdir(parents=True, exist_ok=True)
        line = d.execute_script(f"""const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[{stub}];
            cell.scrollIntoView({{block: 'center'}}); const lines = cell.querySelectorAll('.cm-content .cm-line');
            return lines[lines.length - 1];""")
        assert 'raise NotDone' in line.text, line.text
        line.click()
        ActionChains(d).send_keys(Keys.END).key_down(Keys.SHIFT).send_keys(Keys.HOME).key_up(Keys.SHIFT).send_keys(ANSWER).perform()
        src = tl._wait(d, f"const s = (() => {{ {SOURCE} }})(); return s.includes({json.dumps(ANSWER)}) ? s : null;"
                       .replace('arguments[0]', str(stub)), 30, "the typed answer to reach the cell")
        assert 'raise NotDone' not in src and src.rstrip().endswith(ANSWER), src
        d.save_screenshot(str(artifacts / f'{CHAPTER}_stub_edited.png'))

        # Shift+Enter runs the stub and moves to the check; Shift+Enter again runs the check
        ActionChains(d).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
        time.sleep(0.5)
        tl._wait(d, tl.IDLE, 60, "the stub cell to run")
        ActionChains(d).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
        after = _output_with(d, check, 'Exercise 1.1 (the sliding window) passed', 120, "the check to say 'passed'")
        assert 'not done yet' not in after and 'not right yet' not in after, after
        assert not d.execute_script(tl.ERRORS)
        d.execute_script(f"document.querySelectorAll('.jp-Notebook .jp-Cell')[{check}].scrollIntoView({{block: 'center'}});")
        d.save_screenshot(str(artifacts / f'{CHAPTER}_check_passed.png'))

        # the reader runs the notebook on with exercise 1.1 solved: no later cell depends on the stub staying unsolved
        ok = d.execute_async_script("""const done = arguments[arguments.length - 1];
            window.jupyterapp.commands.execute('notebook:run-all-cells').then(r => done(r), e => done(String(e)));""")
        assert ok is True, f"run all cells again: {ok}"
        tl._wait(d, tl.IDLE, 120, "the kernel to be idle after running all cells again")
        errors = d.execute_script(tl.ERRORS)
        assert not errors, f"{name} with exercise 1.1 solved: cells raised: {errors}"
