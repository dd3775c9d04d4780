"""Write README.md from nbs/index.ipynb: its markdown cells, and its code cells as Python blocks.

nbdev's own `nbdev-readme` does this through Quarto; this route needs no Quarto, so the README and the
home page of the docs come from the same notebook everywhere. `--check` fails if README.md is stale."""
import json, sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent


def readme_text() -> str:
    nb = json.loads((root / 'nbs' / 'index.ipynb').read_text())
    parts = []
    for cell in nb['cells']:
        src = ''.join(cell['source']).strip()
        if not src or src.startswith('#| hide'): continue
        parts.append(src if cell['cell_type'] == 'markdown' else f"```python\n{src}\n```")
    return '\n\n'.join(parts) + '\n'


if __name__ == '__main__':
    text, readme = readme_text(), root / 'README.md'
    if '--check' in sys.argv:
        if readme.read_text() != text: sys.exit("README.md differs from nbs/index.ipynb: run python scripts/make_readme.py")
        print("README.md matches nbs/index.ipynb")
    else:
        readme.write_text(text); print(f"wrote {readme}")
