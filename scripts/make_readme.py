"""Keep the reader's front doors in step with nbs/: the sidebar, the index's chapter list, and README.md.

1. `nbs/sidebar.yml` (Quarto's sidebar, also the Sphinx site's navigation) is written from the chapter file names
   (scripts/chapters.py), so a new `nbs/NN_name.ipynb` appears in the navigation on its own.
2. The chapter list in `nbs/index.ipynb`, between the `<!-- chapters -->` and `<!-- /chapters -->` markers, is
   rewritten from the same list (titles and descriptions from each notebook's first cell).
3. README.md is written from `nbs/index.ipynb`: its markdown cells, and its code cells as Python blocks (hidden
   cells left out; links to notebooks made relative to the repository root).
   nbdev's own `nbdev-readme` does this through Quarto; this route needs no Quarto, so the README and the home
   page of the docs come from the same notebook everywhere.

`python scripts/make_readme.py` writes all three; `--check` writes nothing and fails, naming the stale files."""
import json, re, sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chapters import root, nbs, sidebar_yml, chapter_list_md  # noqa: E402

index = nbs / 'index.ipynb'
START, END = '<!-- chapters -->', '<!-- /chapters -->'
_re_block = re.compile(re.escape(START) + r'.*?' + re.escape(END), re.S)
_re_nblink = re.compile(r'\]\((\d\d_\w+\.ipynb|index\.ipynb)([#)])')


def _src(cell) -> str: return ''.join(cell['source'])


def index_with_chapters(nb: dict) -> dict:
    "A copy of the index notebook whose marked chapter list is regenerated."
    nb = json.loads(json.dumps(nb))
    block = f"{START}\n{chapter_list_md()}\n{END}"
    hits = [c for c in nb['cells'] if c['cell_type'] == 'markdown' and START in _src(c)]
    if len(hits) != 1: sys.exit(f"nbs/index.ipynb needs exactly one markdown cell with {START} ... {END}, found {len(hits)}")
    new = _re_block.sub(lambda m: block, _src(hits[0]))
    hits[0]['source'] = new.splitlines(keepends=True)
    return nb


def nb_text(nb: dict) -> str:
    "A notebook as nbdev-clean writes it."
    return json.dumps(nb, indent=1, ensure_ascii=False) + '\n'


def readme_text(nb: dict) -> str:
    "README.md from the index notebook."
    parts = []
    for cell in nb['cells']:
        src = _src(cell).strip()
        if not src or src.startswith('#| hide'): continue
        if cell['cell_type'] == 'markdown': parts.append(_re_nblink.sub(r'](nbs/\1\2', src))
        elif cell['cell_type'] == 'code': parts.append(f"```python\n{src}\n```")
    return '\n\n'.join(parts) + '\n'


def wanted() -> dict:
    "Each generated file and the text it should have."
    nb = index_with_chapters(json.loads(index.read_text()))
    return {nbs / 'sidebar.yml': sidebar_yml(), index: nb_text(nb), root / 'README.md': readme_text(nb)}


def stale(files: dict) -> list:
    "The files whose text is not what it should be."
    return [p for p, t in files.items() if not p.exists() or p.read_text() != t]


if __name__ == '__main__':
    files = wanted()
    if '--check' in sys.argv:
        bad = [str(p.relative_to(root)) for p in stale(files)]
        if bad: sys.exit(f"stale: {', '.join(bad)}: run python scripts/make_readme.py")
        print("README.md, nbs/index.ipynb's chapter list and nbs/sidebar.yml match nbs/")
    else:
        for p, t in files.items():
            if not p.exists() or p.read_text() != t: p.write_text(t); print(f"wrote {p.relative_to(root)}")
