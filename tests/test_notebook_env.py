"""The notebooks run as the README says: the README's notebook line, run as it is written (into a fresh folder instead
of `.venv`), makes an environment in which every notebook runs top to bottom (its own nbdev-test). This builds an
environment and runs every notebook: it is in the slow lane (`--lane all`, which scripts/test and CI run)."""
import re
import subprocess
from pathlib import Path

import pytest

root = Path(__file__).resolve().parent.parent


def notebook_line(readme: str) -> str:
    "The README's command that installs what the notebooks need: the line that makes a venv and pip-installs an extra."
    lines = [l for l in readme.splitlines() if l.startswith('python3 -m venv .venv')]
    assert len(lines) == 2, f"the README should have the main job's line and the notebooks' line, found {lines}"
    main, nb = sorted(lines, key=lambda l: 'tour' in l)[::-1]           # the main job ends by running the tour
    assert 'tour' in main and 'tour' not in nb, lines
    return nb


def test_the_notebook_line_is_found():
    line = notebook_line((root / 'README.md').read_text())
    assert re.search(r'pip install -e "\.\[\w+\]"', line), line


@pytest.mark.slow
def test_every_notebook_runs_in_the_environment_the_readme_makes(tmp_path):
    line = notebook_line((root / 'README.md').read_text())
    env = tmp_path / 'nbenv'
    cmd = line.replace('.venv', str(env))
    r = subprocess.run(['bash', '-c', cmd + ' -q'], cwd=root, capture_output=True, text=True)
    assert r.returncode == 0, f"{cmd}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    missing = subprocess.run([str(env / 'bin' / 'python'), '-c', 'import pytest'], capture_output=True)
    assert missing.returncode != 0, "the notebooks' environment has pytest: it is not the README's line alone"
    r = subprocess.run([str(env / 'bin' / 'nbdev-test'), '--n-workers', '2'], cwd=root, capture_output=True, text=True,
                       env={'PATH': f"{env / 'bin'}:/usr/bin:/bin", 'MPLBACKEND': 'Agg', 'HOME': str(tmp_path)})
    assert r.returncode == 0, f"a notebook failed in the README's environment:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
