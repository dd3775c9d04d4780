"""The repository stands on its own (issue 9): a reader has only this repository and the public web.

- nbs/, dwlit/, README.md and scripts/ point to no file outside the repository: no absolute path (/work/..., /tmp/...,
  /home/..., ~/...), no relative path that climbs out of it, no link to a local file that does not exist;
- they never say "facts.md" or "the seed" (in any case, across line breaks);
- no error message carries a line number ("L717"): a static scan of the message of every `raise` in dwlit/*.py, and
  a sample of bad calls whose messages are read.
tests/test_site.py checks that the built site never shows either phrase."""
import ast
import json
import re
from pathlib import Path

import numpy as np
import pytest

root = Path(__file__).resolve().parent.parent
PHRASES = re.compile(r'facts\.md|\bthe\s+seed\b', re.I)
# a reader's or a maintainer's own files (system programs such as /usr/bin/chromium are not pointers to a file)
ABSOLUTE = re.compile(r'(?<![\w.:/\\-])(?:~|/(?:work|tmp|home|root|mnt|private|Users|shared))/[\w./-]*')
RELATIVE = re.compile(r'(?<![\w./-])((?:\.\./)+[\w./-]+)')
MDLINK = re.compile(r'\]\(([^)#\s]+)(?:#[^)\s]*)?\)')
LINE_NO = re.compile(r'\bL\d{2,4}\b')


def sources() -> list:
    "The files a reader gets: README.md, dwlit/*.py, and what git tracks (or would) in nbs/, scripts/ and bench/."
    import subprocess
    r = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard', 'nbs', 'scripts', 'bench'],
                       cwd=root, capture_output=True, text=True)
    listed = [root / l for l in r.stdout.splitlines()] if r.returncode == 0 else [
        p for d in ('nbs', 'scripts', 'bench') for p in (root / d).rglob('*')
        if not any(q.startswith('.') for q in p.parts)]
    files = [root / 'README.md'] + sorted((root / 'dwlit').glob('*.py'))
    return files + sorted(p for p in listed if p.is_file() and '__pycache__' not in p.parts
                          and p.suffix in ('', '.py', '.ipynb', '.md', '.yml', '.css', '.txt', '.svg'))


def texts(path: Path) -> list:
    "(where, text, is markdown) pieces of a file: a notebook's cell sources and outputs, or the whole file."
    if path.suffix != '.ipynb': return [(str(path.relative_to(root)), path.read_text(), path.suffix == '.md')]
    out = []
    for i, c in enumerate(json.loads(path.read_text())['cells']):
        where = f"{path.relative_to(root)} cell {i} ({c.get('id', '?')})"
        out.append((where, ''.join(c['source']), c['cell_type'] == 'markdown'))
        for o in c.get('outputs', []):
            t = o.get('text') or ''.join(''.join(v) for k, v in o.get('data', {}).items() if k.startswith('text/'))
            out.append((where + ' output', ''.join(t) if isinstance(t, list) else t, False))
    return out


_re_code = re.compile(r'```.*?```|`[^`\n]*`', re.S)


def outside_pointers(path: Path, text: str, markdown=True) -> list:
    "What in `text` (from `path`) names a file outside the repository, or (markdown) links a local file not there."
    bad = [f"absolute path {m.group(0)!r}" for m in ABSOLUTE.finditer(text)]
    for m in RELATIVE.finditer(text):
        target = (path.parent / m.group(1)).resolve()
        if not target.is_relative_to(root): bad.append(f"path {m.group(1)!r} leaves the repository")
    if markdown:
        for m in MDLINK.finditer(_re_code.sub('', text)):              # links, not code that looks like one
            link = m.group(1)
            if re.match(r'\w+:', link) or link.startswith('/'): continue          # https:, mailto:; absolute: above
            target = (path.parent / link).resolve()
            if not target.is_relative_to(root): bad.append(f"link {link!r} leaves the repository")
            elif not target.exists(): bad.append(f"link {link!r}: no such file in the repository")
    return bad


def test_nothing_points_outside_the_repository():
    bad = [f"{where}: {b}" for f in sources() for where, t, md in texts(f) for b in outside_pointers(f, t, md)]
    assert not bad, f"{len(bad)} pointers outside the repository:\n" + '\n'.join(bad[:60])


def test_never_says_facts_md_or_the_seed():
    bad = []
    for f in sources():
        for where, t, _ in texts(f):
            hits = [' '.join(m.group(0).split()) for m in PHRASES.finditer(t)]
            if hits: bad.append(f"{where}: {len(hits)} x {sorted(set(hits))}")
    n = sum(int(b.rsplit(': ', 1)[1].split(' x ')[0]) for b in bad)
    assert not bad, f'{n} times "facts.md" or "the seed", in {len(bad)} places:\n' + '\n'.join(bad[:80])


def test_the_pointer_checks_can_fail(tmp_path):
    "An absolute path, a climb out of the repository, a missing local link and both phrases are each caught."
    nb = root / 'nbs' / 'sim' / 'x.ipynb'
    text = ("see /work/shared/notes/facts.md and ../../../shared/x.txt, [a](no_such.ipynb), [b](02_memory.ipynb#x), "
            "[c](https://example.org/a.md), ~/notes.txt, `t.ap([[1, 2], ...])`; The\nSeed says")
    bad = outside_pointers(nb, text)
    assert len(bad) == 4, bad                      # /work/..., ~/..., ../../../shared/x.txt, no_such.ipynb
    assert len(outside_pointers(nb, text, markdown=False)) == 3
    assert any('no such file' in b for b in bad) and any('leaves the repository' in b for b in bad)
    assert [m.group(0) for m in PHRASES.finditer(text)] == ['facts.md', 'The\nSeed']


# --- No error message carries a line number -----------------------------------------------------------------------

def _message_strings(node) -> list:
    "The string constants a `raise` builds its message from (f-string parts included)."
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def raise_messages_with_line_numbers(source: str, name='<src>') -> list:
    "Every `raise` in `source` whose message text holds 'L' and a line number, with where it is."
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for s in _message_strings(node.exc):
                for m in LINE_NO.finditer(s): bad.append(f"{name}:{node.lineno}: {m.group(0)} in {s.strip()[:80]!r}")
    return bad


def test_no_raise_in_dwlit_puts_a_line_number_in_its_message():
    bad = [b for py in sorted((root / 'dwlit').glob('*.py'))
           for b in raise_messages_with_line_numbers(py.read_text(), f"dwlit/{py.name}")]
    assert not bad, f"{len(bad)} error messages with a line number:\n" + '\n'.join(bad)


def test_the_static_scan_can_fail():
    src = ('def f(W_f):\n    if W_f > 511: raise ValueError(f"W_f must be < 512 (L717), got {W_f}")\n'
           '    raise ValueError("no line here, only a Level-1 cache and L1")\n')
    assert raise_messages_with_line_numbers(src) == ["<src>:2: L717 in 'W_f must be < 512 (L717), got'"]


def _bad_calls():
    "Bad calls across the library, each expected to raise a SimulatorError (or TypeError) whose message we read."
    import dwlit
    from dwlit import nisa, nl
    from dwlit.kernels.conv1d import conv1d_depthwise_bf01_oi01_bf01 as conv1d
    from dwlit.kernels.conv1d_plan import conv1d_plan
    from dwlit.kernels.conv2d import conv2d_depthwise_f01b_o01i_bf01 as conv2d
    from dwlit.kernels.conv2d import conv2d_plan
    from dwlit.kernels.tiling import dispatch_decision, spmd_tile_table
    x1, f1 = np.zeros((1, 8, 1, 100), np.float32), np.zeros((8, 1, 1, 3), np.float32)
    x2, f2 = np.zeros((8, 5, 6, 1), np.float32), np.zeros((8, 3, 3, 1), np.float32)
    pad1, pad2 = ((0, 0), (1, 1)), ((1, 1), (1, 1))
    s = lambda k, *a, **kw: lambda: dwlit.simulate_kernel(k, *a, **kw)
    return {
        'conv1d W_f 600': s(conv1d, x1, np.zeros((8, 1, 1, 600), np.float32), pad1, out_shape=(1, 8, 1, 1)),
        'conv1d lhs_dilation 2': s(conv1d, x1, f1, pad1, out_shape=(1, 8, 1, 100), lhs_dilation=2),
        'conv1d stride 2': s(conv1d, x1, f1, pad1, out_shape=(1, 8, 1, 100), stride=2),
        'conv1d negative padding': s(conv1d, x1, f1, ((0, 0), (-1, 1)), out_shape=(1, 8, 1, 98)),
        'conv1d wrong out_shape': s(conv1d, x1, f1, pad1, out_shape=(1, 8, 1, 7)),
        'conv1d channels differ': s(conv1d, x1, np.zeros((9, 1, 1, 3), np.float32), pad1, out_shape=(1, 8, 1, 100)),
        'conv1d dtypes differ': s(conv1d, x1, f1.astype(np.float16), pad1, out_shape=(1, 8, 1, 100)),
        'conv1d too wide for SBUF': s(conv1d, np.zeros((1, 128, 1, 60_000), np.float32), np.zeros((128, 1, 1, 3), np.float32),
                                      pad1, out_shape=(1, 128, 1, 60_000)),
        'conv1d a list': lambda: conv1d.func([[1.0]], f1, pad1) if hasattr(conv1d, 'func') else conv1d([[1.0]], f1, pad1),
        'conv2d kernel larger than image': s(conv2d, x2, np.zeros((8, 9, 9, 1), np.float32), pad2),
        'conv2d lhs_dilation 0': s(conv2d, x2, f2, pad2, lhs_dilation=(0, 1)),
        'conv2d bad in_perm': s(conv2d, x2, f2, pad2, in_perm=(0, 1, 2, 3)),
        'conv2d_plan image too wide': lambda: conv2d_plan((8, 4, 20_000, 1), (8, 3, 3, 1), pad2, lhs_dilation=(4, 4)),
        'conv1d_plan W_f 600': lambda: conv1d_plan((1, 8, 1, 100), (8, 1, 1, 600), pad1),
        'dispatch_decision W_f 0': lambda: dispatch_decision(10, 0),
        'spmd_tile_table 0 programs': lambda: spmd_tile_table(8, 0),
        'ndarray bad shape': lambda: nl.ndarray((0, 4), nl.float32),
        'ndarray 129 partitions': lambda: nl.ndarray((129, 4), nl.float32),
        'ap out of bounds': lambda: nl.ndarray((4, 12), nl.float32).ap([[12, 4], [1, 13]]),
        'tensor_tensor partitions differ': lambda: nisa.tensor_tensor(nl.ndarray((4, 3), nl.float32), nl.ndarray((4, 3), nl.float32),
                                                                      nl.ndarray((5, 3), nl.float32), nl.multiply),
        'tensor_reduce axis 0': lambda: nisa.tensor_reduce(nl.ndarray((4, 1), nl.float32), nl.add, nl.ndarray((4, 3), nl.float32), 0),
        'dma_copy sizes differ': lambda: nisa.dma_copy(nl.ndarray((4, 3), nl.float32), nl.ndarray((4, 2), nl.float32)),
        'unknown target': lambda: dwlit.set_target('trn9'),
        'a layer too long for the kernels': lambda: dwlit.run_layer('long-conv'),
        'a stride-2 layer': lambda: dwlit.run_layer('mobilenetv2-96x112-s2'),
    }


@pytest.mark.parametrize('what', sorted(_bad_calls()))
def test_error_messages_carry_no_line_number(what):
    try: _bad_calls()[what]()
    except (ValueError, TypeError) as e: msg = str(e)
    else: pytest.fail(f"{what}: no error raised")
    assert not LINE_NO.search(msg), f"{what}: {msg}"
    assert not PHRASES.search(msg), f"{what}: {msg}"


def test_cells_that_draw_are_saved_with_their_figure():
    """The site shows saved outputs only: a cell that draws at top level (plt.subplots/plt.show, not inside a def) must
    be saved with an image. Run the notebooks with the inline backend (not MPLBACKEND=Agg, which draws nothing)."""
    missing = []
    for nb in sorted((root / 'nbs').rglob('*.ipynb')):
        for c in json.loads(nb.read_text())['cells']:
            src = ''.join(c['source'])
            if c['cell_type'] != 'code' or src.lstrip().startswith(('#| export', '#| hide')): continue
            draws = re.search(r'^(?:\S.*)?\bplt\.(?:subplots|show|figure)\(', src, re.M)
            saved = [(k, str(v)) for o in c.get('outputs', []) for k, v in o.get('data', {}).items()]
            pictured = any(k.startswith('image/') or (k == 'text/html' and 'data:image/png;base64' in v) for k, v in saved)
            if draws and not pictured:                        # text/html with PNG frames: an animation (to_jshtml)
                missing.append(f"{nb.name} cell {c.get('id')}: {src.splitlines()[0][:60]!r}")
    assert not missing, f"{len(missing)} drawing cells saved without their figure:\n" + '\n'.join(missing)


def test_a_link_labelled_with_a_chapter_number_links_that_chapter():
    "A label like [25](25_real_layers.ipynb) outlived a renumbering: the number a reader sees must be the chapter's."
    bad = []
    for nb in sorted((root / 'nbs').rglob('*.ipynb')):
        for c in json.loads(nb.read_text())['cells']:
            if c['cell_type'] != 'markdown': continue
            for m in re.finditer(r'\[(?:[Cc]hapter )?(\d{1,2}[a-z]?)\]\((\d\d[a-z]?)_\w+\.ipynb', ''.join(c['source'])):
                if m.group(1).lstrip('0') != m.group(2).lstrip('0'): bad.append(f"{nb.name}: {m.group(0)}")
    assert not bad, "links whose chapter number is not the chapter's:\n" + '\n'.join(bad)
