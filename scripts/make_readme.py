"""Keep the reader's front doors in step with nbs/: the sidebar, the index's chapter list, and README.md.

1. `nbs/sidebar.yml` (Quarto's sidebar, also the Sphinx site's navigation) is written from the chapter file names
   (scripts/chapters.py), so a new `nbs/NN_name.ipynb` appears in the navigation on its own.
2. The chapter list in `nbs/index.ipynb`, between the `<!-- chapters -->` and `<!-- /chapters -->` markers, is
   rewritten from the same list (titles and descriptions from each notebook's first cell).
3. README.md is written from `nbs/index.ipynb`: its markdown cells, and its code cells as Python blocks (hidden
   cells and the home page's figure left out; links to notebooks made relative to the repository root). A markdown
   cell that starts with `<!-- readme-only` (the set-up and the test command) is README's alone: the website, whose
   readers need no test suite, leaves it out (scripts/build_docs.py).
   nbdev's own `nbdev-readme` does this through Quarto; this route needs no Quarto, so the README and the home
   page of the docs come from the same notebook everywhere.

4. `nbs/llms.txt` (https://llmstxt.org; the docs build serves it at the site's root): the project's description and
   one line per `dwlit` module, linking to the chapter page that documents it (relative links, right wherever the
   site is published). nbdev-export writes its own llms.txt only over a file carrying its marker, so it leaves this
   one alone: nbdev's lists only modules with long docstrings, under its own page names.

`python scripts/make_readme.py` writes all four; `--check` writes nothing and fails, naming the stale files."""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chapters import chapter_list_md, nbs, notebook, root, sidebar_yml, title_and_description  # noqa: E402

index = nbs / 'index.ipynb'
START, END = '<!-- chapters -->', '<!-- /chapters -->'
README_ONLY = '<!-- readme-only'      # a markdown cell of the index that starts so is README's alone (the site drops it)
_re_block = re.compile(re.escape(START) + r'.*?' + re.escape(END), re.S)
_re_nblink = re.compile(r'\]\(((?:\w+/)?\d\d[a-z]?_\w+\.ipynb|index\.ipynb)([#)])')


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
        if not src or re.match(r'#\|\s*(hide|echo:\s*false|include:\s*false)', src): continue   # the site's figure
        if src.startswith(README_ONLY): src = src.split('\n', 1)[1].strip()
        if cell['cell_type'] == 'markdown': parts.append(_re_nblink.sub(r'](nbs/\1\2', src))
        elif cell['cell_type'] == 'code': parts.append(f"```python\n{src}\n```")
    return '\n\n'.join(parts) + '\n'


_re_from_nb = re.compile(r'File to edit: (?:\.\./)+nbs/(?:\w+/)?(\w+)\.ipynb')


def modules() -> list:
    "(module, notebook stem) for every module of dwlit/ exported from a notebook, in chapter order."
    mods = []
    for py in sorted((root / 'dwlit').rglob('*.py')):
        m = _re_from_nb.search(py.read_text())
        if m and not py.name.startswith('_'):
            mods.append(('.'.join(py.relative_to(root).with_suffix('').parts), m.group(1)))
    return sorted(mods, key=lambda m: (m[1], m[0]))


def llms_txt() -> str:
    "nbs/llms.txt: the project in a few lines, then each module with the page that teaches it."
    desc = title_and_description(index)[1]
    lines = ["# dwlit", "", f"> {desc}", "",
             "A literate Python package (nbdev): each chapter is a notebook that states a claim about the depthwise "
             "convolution kernels of a Neuron compiler, draws it, runs it on a simulated NeuronCore and checks it. "
             "`pip install -e .` then `dwlit tour` runs every kernel against a NumPy reference; "
             "`from dwlit import nl, nisa, simulate_kernel` writes and runs your own kernel.", "",
             "- [Home: what the book teaches, the chapters, how to open the notebooks, a first kernel](index.html)", "", "## Modules", ""]
    for mod, stem in modules():
        title, d = title_and_description(notebook(stem))
        lines.append(f"- [{mod}]({stem}.html): {title.replace('`', '')}. {d}")
    return '\n'.join(lines) + '\n'


def wanted() -> dict:
    "Each generated file and the text it should have."
    nb = index_with_chapters(json.loads(index.read_text()))
    return {nbs / 'sidebar.yml': sidebar_yml(), index: nb_text(nb), root / 'README.md': readme_text(nb),
            nbs / 'llms.txt': llms_txt()}


def stale(files: dict) -> list:
    "The files whose text is not what it should be."
    return [p for p, t in files.items() if not p.exists() or p.read_text() != t]


if __name__ == '__main__':
    files = wanted()
    if '--check' in sys.argv:
        bad = [str(p.relative_to(root)) for p in stale(files)]
        if bad: sys.exit(f"stale: {', '.join(bad)}: run python scripts/make_readme.py")
        print("README.md, nbs/index.ipynb's chapter list, nbs/sidebar.yml and nbs/llms.txt match nbs/")
    else:
        for p, t in files.items():
            if not p.exists() or p.read_text() != t: p.write_text(t); print(f"wrote {p.relative_to(root)}")
