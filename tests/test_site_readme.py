"""README.md, the index's chapter list and the sidebar are generated from nbs/ (scripts/make_readme.py)."""
import json
import re
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(root / 'scripts'))
import make_readme  # noqa: E402
from chapters import chapters, label, sidebar_yml  # noqa: E402


def test_readme_index_and_sidebar_match_nbs():
    r = subprocess.run([sys.executable, 'scripts/make_readme.py', '--check'], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr + r.stdout


def test_the_check_fails_on_a_stale_readme(tmp_path):
    "The check can fail: a README edited by hand is reported stale."
    want = make_readme.wanted()[root / 'README.md']
    fake = tmp_path / 'README.md'
    fake.write_text(want.replace('bash scripts/test', 'pytest', 1))
    assert make_readme.stale({fake: want}) == [fake]
    fake.write_text(want)
    assert make_readme.stale({fake: want}) == []


MAIN_JOB = 'python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/dwlit tour'
TESTS = 'bash scripts/test'


def test_readme_starts_with_the_two_commands():
    "The main job installs dwlit alone (no extra); the test command is one command that sets up what it needs."
    blocks = re.findall(r'```sh\n(.*?)\n```', (root / 'README.md').read_text(), re.S)
    assert blocks[:2] == [MAIN_JOB, TESTS]


def test_the_test_command_sets_up_the_extras_ci_uses():
    "scripts/test installs the dev and xla extras into .venv when needed; .ci/run sets up through it, then calls it."
    script, ci = (root / 'scripts' / 'test').read_text(), (root / '.ci' / 'run').read_text()
    extras = re.search(r'^EXTRAS=([\w,]+)$', script, re.M).group(1).split(',')
    assert sorted(extras) == ['dev', 'xla']
    import tomllib
    assert set(extras) <= set(tomllib.loads((root / 'pyproject.toml').read_text())['project']['optional-dependencies'])
    assert 'python3 -m venv .venv' in script and 'pip install -q -e ".[$EXTRAS]"' in script
    assert 'bash scripts/test --setup-only' in ci and re.search(r'^bash scripts/test$', ci, re.M)
    assert 'pip install' not in ci                                  # one place decides what the tests install


def test_every_chapter_is_in_sidebar_and_index_in_order():
    chs = chapters()
    side = (root / 'nbs' / 'sidebar.yml').read_text()
    assert [l.strip()[2:] for l in side.splitlines() if re.match(r'\s+- \w+/\d\d[a-z]?_', l)] == [c['file'] for c in chs]
    idx = ''.join(''.join(c['source']) for c in json.loads((root / 'nbs' / 'index.ipynb').read_text())['cells'])
    idx = idx[idx.index(make_readme.START):idx.index(make_readme.END)]          # the chapter list
    assert re.findall(r'\]\((\w+/\d\d[a-z]?_\w+\.ipynb)\)', idx) == [c['file'] for c in chs]
    assert sidebar_yml() == side


def test_a_new_chapter_joins_the_sidebar(tmp_path):
    "Chapters come from the file names: a new notebook appears in its section, in order."
    for name, title in [('one/01_a.ipynb', 'A'), ('two/07_b.ipynb', 'B'), ('one/04_c.ipynb', 'C'), ('one/04b_d.ipynb', 'D')]:
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(json.dumps({'cells': [{'cell_type': 'markdown', 'source': f'# {title}\n\n> about\n> {title}'}]}))
    (tmp_path / 'index.ipynb').write_text('{}'); (tmp_path / '_private.ipynb').write_text('{}')
    chs = chapters(tmp_path)
    assert [(c['file'], c['title'], c['description']) for c in chs] == [
        ('one/01_a.ipynb', 'A', 'about A'), ('one/04_c.ipynb', 'C', 'about C'), ('one/04b_d.ipynb', 'D', 'about D'),
        ('two/07_b.ipynb', 'B', 'about B')]
    assert [label(c) for c in chs] == ['1. A', '4. C', '4b. D', '7. B']           # a part just cut off shows its letter
    yml = sidebar_yml(chs)
    assert yml.index('01_a') < yml.index('04_c') < yml.index('04b_d') < yml.index('Depthwise convolution in 1D') < yml.index('07_b')
