"""The book as a reader meets it (issue 28), checked on the notebooks themselves:

- chapter 1 is the idea: a working kernel, its picture and its check on the first page, and the home page starts there;
- every chapter ends in its answer: a `## What we found` section whose result a cell prints (numbers computed, not
  typed); every chapter of the book proper (1-29) then has its exercises, each with a check;
- every figure the notebooks draw is legible at the size the site shows it (text >= 10 px): scripts/figure_log.py
  measures each figure while nbdev-test runs the notebooks (scripts/test), and this reads its log."""
import json
import re
import sys
from pathlib import Path

import pytest

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / 'scripts'))
from chapters import chapters  # noqa: E402

BOOK = 29                        # chapters 1-29 are the book proper; the appendices and the reference come after


def cells(c):
    return json.loads((root / 'nbs' / c['file']).read_text())['cells']


def src(cell): return ''.join(cell['source'])


def text_out(cell) -> str:
    "What a code cell printed or returned, as text."
    out = []
    for o in cell.get('outputs', []):
        out.append(''.join(o.get('text', '')) + ''.join(''.join(v) for k, v in o.get('data', {}).items()
                                                      if k in ('text/plain', 'text/markdown')))
    return ''.join(out)


def sections(c) -> dict:
    "{'## heading': [cells under it]} of a chapter, in order."
    out, cur = {}, None
    for cell in cells(c):
        if cell['cell_type'] == 'markdown':
            m = re.match(r'\s*(##\s+[^\n]+)', src(cell))
            if m: cur = m.group(1).strip(); out[cur] = []
        if cur: out[cur].append(cell)
    return out


def ending_problems(c) -> list:
    "What is missing at the end of chapter `c`: its answer, said by a cell, and (in the book proper) its exercises."
    s = sections(c)
    heads = list(s)
    bad = []
    if '## What we found' not in s: return [f"{c['stem']}: no '## What we found' section"]
    found = s['## What we found']
    if not any(cell['cell_type'] == 'code' and re.search(r'\d', text_out(cell)) for cell in found):
        bad.append(f"{c['stem']}: its What we found has no cell printing its numbers")
    if c['num'] <= BOOK:
        ex = [h for h in heads if h.startswith('## Exercise')]
        if not ex: bad.append(f"{c['stem']}: no '## Exercises' section")
        elif heads.index(ex[0]) < heads.index('## What we found'): bad.append(f"{c['stem']}: exercises before What we found")
        elif not any(cell['cell_type'] == 'code' and re.search(r'\bcheck_\w+\(', src(cell)) for h in ex for cell in s[h]):
            bad.append(f"{c['stem']}: its exercises have no check")
    return bad


def test_every_chapter_ends_in_its_answer_and_its_exercises():
    bad = [p for c in chapters() if c['num'] <= BOOK for p in ending_problems(c)]
    assert not bad, '\n'.join(bad)


def test_the_ending_check_can_fail(tmp_path, monkeypatch):
    "A chapter whose answer is typed, not printed, and one with no exercises, are each caught."
    nb = {'cells': [{'cell_type': 'markdown', 'source': ['## What we found\n\nIt is 3x faster.']},
                    {'cell_type': 'markdown', 'source': ['## Exercises']}]}
    (tmp_path / 'x').mkdir(); (tmp_path / 'x' / '05_x.ipynb').write_text(json.dumps(nb))
    monkeypatch.setattr(sys.modules[__name__], 'root', tmp_path.parent)
    c = dict(stem='05_x', file=f'{tmp_path.name}/x/05_x.ipynb', num=5, part='x')
    monkeypatch.setattr(sys.modules[__name__], 'cells', lambda c: nb['cells'])
    assert ending_problems(c) == ['05_x: its What we found has no cell printing its numbers', '05_x: its exercises have no check']


def test_chapter_1_is_the_idea_on_one_page():
    "The first chapter holds a kernel, its picture and its check; the home page sends a reader there first."
    first = chapters()[0]
    assert first['num'] == 1 and first['part'] == 'start', first
    cs = cells(first)
    code = [src(c) for c in cs if c['cell_type'] == 'code']
    assert any('@kernel' in s and 'tensor_tensor' in s and 'tensor_reduce' in s for s in code), "no kernel"
    assert any('image/png' in o.get('data', {}) for c in cs for o in c.get('outputs', [])), "no picture"
    assert any(re.search(r'^assert .*err', s, re.M) for s in code), "no check of the result"
    index = ''.join(src(c) for c in json.loads((root / 'nbs' / 'index.ipynb').read_text())['cells'])
    assert index.index('start/01_one_kernel.ipynb') < index.index('sim/02_memory.ipynb')


@pytest.mark.site
def test_every_figure_the_notebooks_draw_is_legible():
    "scripts/figure_log.py measured each figure while nbdev-test ran the notebooks (scripts/test does both, in order)."
    log = root / 'test-artifacts' / 'figures.jsonl'
    if not log.exists(): pytest.fail("no figure log: run the notebooks with bash scripts/test (it runs nbdev-test with "
                                     "scripts/figure_log.py's hook before pytest)")
    rows = [json.loads(l) for l in log.read_text().splitlines()]
    assert len(rows) >= 40, f"only {len(rows)} figures measured: the hook did not run in every notebook"
    bad = [f"{r['notebook']}: {r['cell']!r}: {'; '.join(r['problems'])}" for r in rows if r['problems']]
    assert not bad, f"{len(bad)} figures break the rules for pictures:\n" + '\n'.join(bad)
