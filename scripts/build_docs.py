"""Build the docs website into docs/ without Quarto: nbdev processes the notebooks, Sphinx + MyST-NB renders them.

    python scripts/build_docs.py            # -> docs/index.html, one page per chapter; prints one line
    python scripts/build_docs.py --verbose  # also what it adjusted on the way (the notes below), and Sphinx's output

Where Quarto is installed, `nbdev-docs` builds the same pages the standard nbdev way; this is the route for machines
(CI here included) where it is not. Steps:

1. Stage a copy of nbs/ in _docs_build/nbs (the sources are never touched), flat: the site has one page per
   chapter at its root (`10_conv1d_kernels.html`), whichever part's folder keeps the notebook.
2. `nbdev.serve.proc_nbs` on it: nbdev's own processing, exactly what `nbdev-proc-nbs` does (show_doc for every
   exported function, hidden cells removed, front matter from the title cell), minus its attempt to install Quarto.
3. Turn nbdev's Quarto cell options into MyST-NB cell tags (`#| echo: false` -> remove-input, `#| code-fold: true`
   -> hide-input: the code folded under "Show the code"), the title cell into the page title and its whole
   description (all its `>` lines) into the subtitle, and widget outputs (which need a live kernel) into a one-line
   note: every widget has a static figure next to it. The navigation comes from nbs/sidebar.yml (itself generated
   from the file names). API entries link to their code only when pyproject.toml names a repository.
4. `sphinx-build` with MyST-NB, execution off: the saved outputs (PNG figures, HTML animations, markdown API docs)
   are shown as they are. nbs/llms.txt is copied to the site's root.

Notes (printed with --verbose): cells that mix imports with other code are staged with their imports split off
(nbdev-proc-nbs runs such cells whole); backticked names nbdev linked to an API entry that does not exist (a private
helper, a method) are linked to their page instead."""
import ast
import importlib
import json
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chapters import chapters, label, neighbours, notebook, title_and_description  # noqa: E402

# What the build imports, all from the dev extra of pyproject.toml (`main` checks them first and names what is missing)
NEEDS = ['yaml', 'nbdev', 'sphinx', 'myst_nb', 'furo', 'latex2mathml']


def missing_extras() -> list:
    "The modules of NEEDS that cannot be imported."
    missing = []
    for m in NEEDS:
        try: importlib.import_module(m)
        except ImportError: missing.append(m)
    return missing

root = Path(__file__).resolve().parent.parent
nbs, work, out = root / 'nbs', root / '_docs_build', root / 'docs'
stage, src, proc = work / 'nbs', work / 'src', root / '_proc'
conf_dir = Path(__file__).resolve().parent / 'sphinx'

WIDGET_MIME = 'application/vnd.jupyter.widget-view+json'
WIDGET_NOTE = ("*Interactive widget: it needs a live Python kernel, so open this notebook in JupyterLab to move its "
               "sliders ([how](index.ipynb#open-the-notebooks)). The static figure next to it shows the same thing.*")


NOTES = []      # what the build adjusted; printed with --verbose


def note(msg): NOTES.append(msg)


def repository() -> str:
    "The project's repository URL (`[project.urls] Repository` in pyproject.toml), or '' when it names none."
    import tomllib
    urls = tomllib.loads((root / 'pyproject.toml').read_text())['project'].get('urls') or {}
    return urls.get('Repository', '').rstrip('/')


def _yaml(text):
    import yaml
    return yaml.safe_load(text)


def _src(cell): return ''.join(cell['source'])
def _new_id(): return uuid.uuid4().hex[:8]
def _md(text): return {'cell_type': 'markdown', 'id': _new_id(), 'metadata': {}, 'source': text}


def _split_mixed_imports(cell):
    "nbdev runs any cell that has an import; give such a cell's imports a hidden cell of their own (nbdev's FAQ fix)."
    if cell['cell_type'] != 'code': return None
    s = _src(cell)
    try: tree = ast.parse('\n'.join(l for l in s.splitlines() if not l.lstrip().startswith('%')))
    except SyntaxError: return None
    if re.match(r'\s*#\|\s*(export|hide|eval)', s): return None         # nbdev's own business
    imps = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    if not imps or len(imps) == len(tree.body): return None
    lines = s.splitlines()
    imp_src = '\n'.join(ast.get_source_segment(s, n) or lines[n.lineno - 1] for n in imps)
    dirs = [l for l in lines if l.startswith('#|')]                       # keep `#| code-fold` and the like first
    cell['source'] = '\n'.join(dirs + ['#| eval: false'] + [l for l in lines if not l.startswith('#|')])
    return {'cell_type': 'code', 'id': _new_id(), 'metadata': {}, 'outputs': [], 'execution_count': None,
            'source': '#| include: false\n' + imp_src}


def _show_folded_internal(cell) -> int:
    """An `#| exporti` cell that asks to be folded (`#| code-fold: true`) keeps its code on the page, folded: nbdev
    deletes the source of every exported cell and documents `exporti` ones not at all, which would leave an exercise's
    solution nowhere on the site. In the staged copy only, its `exporti` becomes `exec_doc`: nbdev still runs it (later
    cells use what it defines) and keeps its source. 1 if `cell` was changed, else 0."""
    src = ''.join(cell['source']) if isinstance(cell.get('source'), list) else cell.get('source', '')
    lines = src.splitlines()
    dirs = [l.replace(' ', '') for l in lines if l.startswith('#|')]
    if cell.get('cell_type') != 'code' or '#|exporti' not in dirs or '#|code-fold:true' not in dirs: return 0
    cell['source'] = '\n'.join('#| exec_doc' if l.replace(' ', '') == '#|exporti' else l for l in lines)
    return 1


def stage_nbs():
    "Copy nbs/ into the staging folder; report (and work around) cells nbdev-proc-nbs would fail on."
    if work.exists(): shutil.rmtree(work)
    shutil.copytree(nbs, stage, ignore=shutil.ignore_patterns('.ipynb_checkpoints', '_*.ipynb'))
    for c in chapters():                                   # the parts' folders flattened: one page per chapter
        (stage / c['file']).rename(stage / Path(c['file']).name)
    for d in {c['part'] for c in chapters()}: shutil.rmtree(stage / d)
    for f in sorted(stage.glob('*.ipynb')):
        nb = json.loads(f.read_text())
        cells, fixed, shown = [], 0, 0
        for c in nb['cells']:
            extra = _split_mixed_imports(c)
            if extra: cells.append(extra); fixed += 1
            cells.append(c)
            if _show_folded_internal(c):                 # and no API entry for it: the folded code is the whole story
                shown += 1
                cells += [{'cell_type': 'code', 'id': _new_id(), 'metadata': {}, 'outputs': [], 'execution_count': None,
                           'source': f"#| hide\nshow_doc({n})"} for n in re.findall(r'^(?:def|class) (\w+)', ''.join(c['source']), re.M)]
        if shown: note(f"{f.name}: {shown} folded `#| exporti` cell(s) (the exercises' solutions) kept on the page, folded")
        if fixed or shown:
            note(f"{f.name}: {fixed} cell(s) mix imports with other code; nbdev-proc-nbs (and nbdev-docs) runs such "
                 f"cells whole and stops if one fails, so they are staged with their imports split off (nbdev FAQ)")
            nb['cells'] = cells
            f.write_text(json.dumps(nb, indent=1))


def docs_before_code(cells: list) -> list:
    """`cells` with the API entries (show_doc cells) that follow an `#| exports` cell moved above it, so that each
    entry heads its own code. nbdev's `mv_exports` does this by the cells' original indices, which the inserted entries
    have made stale: an exported cell without an entry (constants) then takes the next cell's entry."""
    out, i = [], 0
    while i < len(cells):
        j = i + 1
        while j < len(cells) and getattr(cells[j], 'has_sd', 0): j += 1
        exported = cells[i].cell_type == 'code' and 'exports' in getattr(cells[i], 'directives_', {})
        out += cells[i + 1:j] + [cells[i]] if exported else cells[i:j]
        i = j
    return out


def fix_mv_exports():
    "Make nbdev's `mv_exports` processor put each API entry above its own code (see docs_before_code)."
    import nbdev.processors as P
    def begin(self): self.nb.cells[:] = docs_before_code(list(self.nb.cells))
    if not hasattr(fix_mv_exports, 'nbdev_begin'): fix_mv_exports.nbdev_begin = P.mv_exports.begin   # for the test
    P.mv_exports.begin = begin


def run_proc_nbs():
    "nbdev's processing of the staged notebooks into _proc/."
    from nbdev.serve import proc_nbs
    fix_mv_exports()                       # the worker processes are forked from this one, so they see the fix
    if proc.exists(): shutil.rmtree(proc)
    proc_nbs(path=str(stage), force=True, n_workers=2)


_re_cdn_css = re.compile(r'<link[^>]+href="https?://[^"]*font-awesome[^"]*"[^>]*>\s*')
_re_dir = re.compile(r'^#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$')


def only_checks(code: str) -> bool:
    "Whether a cell's code is nothing but checks (test_eq, test_fail, ... calls and asserts): the site folds it."
    try: body = ast.parse(code).body
    except SyntaxError: return False
    def check(st):
        if isinstance(st, ast.Assert): return True
        f = st.value.func if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) else None
        return f is not None and getattr(f, 'id', getattr(f, 'attr', '')).startswith('test_')
    return bool(body) and all(check(st) for st in body)


def cell_for_sphinx(cell):
    "A processed code cell with its `#|` options turned into MyST-NB tags; None to drop it."
    lines, opts = _src(cell).splitlines(), {}
    while lines and lines[0].startswith('#|'):
        m = _re_dir.match(lines.pop(0))
        if m: opts[m.group(1)] = m.group(2).lower()
    tags = set(cell.get('metadata', {}).get('tags', []))
    if opts.get('include') == 'false': return None
    if opts.get('echo') == 'false': tags.add('remove-input')
    if opts.get('output') == 'false': tags.add('remove-output')
    if opts.get('code-fold') == 'true': tags.add('hide-input')       # Quarto's folded code; 'show' stays open
    cell['source'] = '\n'.join(lines)
    if 'remove-input' not in tags and not cell.get('outputs') and only_checks(cell['source']):
        tags |= {'hide-input', CHECKS_TAG}                             # folded under "Show the checks" (fold_checks)
    outs = []
    for o in cell.get('outputs', []):
        data = o.get('data', {})
        if WIDGET_MIME in data:
            o = {'output_type': 'display_data', 'metadata': {}, 'data': {'text/markdown': WIDGET_NOTE}}
        elif 'text/html' in data:       # matplotlib's jshtml links Font Awesome from a CDN: styles.css draws its icons
            data['text/html'] = _re_cdn_css.sub('', ''.join(data['text/html']))
        elif 'text/markdown' in data:   # show_doc starts with a rule, which docutils allows only between sections
            data['text/markdown'] = signature_md(_source_links(re.sub(r'^\s*---\s*\n', '', ''.join(data['text/markdown']))))
        outs.append(o)
    cell['outputs'] = outs
    cell['metadata'] = {'tags': sorted(tags)} if tags else {}
    return _std(cell)


_re_source = re.compile(r'\[source\]\(([^)]*)\)\{[^}]*\}\s*')


def _source_links(md: str) -> str:
    "show_doc's `[source](...)` link kept only when it points into the project's repository (none is named: dropped)."
    repo = repository()
    return _re_source.sub(lambda m: m.group(0) if repo and m.group(1).startswith(repo + '/') else '', md)


CHECKS_TAG = 'dwlit-checks'
LONG_DEFAULT = 60               # a default argument longer than this is shortened in a signature


def _classes() -> dict:
    "{name: [its bases]} of every class defined at the top of a dwlit module."
    out = {}
    for py in sorted((root / 'dwlit').glob('*.py')):
        for n in ast.parse(py.read_text()).body:
            if isinstance(n, ast.ClassDef): out[n.name] = [ast.unparse(b) for b in n.bases]
    return out


def _short_default(node, seg: str) -> str:
    "A long default argument shortened: a string's first characters, a container's first items, else `...`."
    if isinstance(node, ast.Constant) and isinstance(node.value, str): return repr(node.value[:30] + ' …')
    items = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else None
    if isinstance(node, ast.Dict): items = [f"{ast.unparse(k)}: {ast.unparse(v)}" for k, v in zip(node.keys, node.values)]
    elif items is not None: items = [ast.unparse(e) for e in items]
    if not items: return '...'
    o, c = {'List': '[]', 'Tuple': '()', 'Set': '{}', 'Dict': '{}'}[type(node).__name__]
    kept = []
    for it in items:
        if kept and len(', '.join(kept + [it])) > LONG_DEFAULT - 10: break
        kept.append(it)
    return o + ', '.join(kept) + (', ...' if len(kept) < len(items) else '') + c


def signature(sig: str, classes: dict) -> str:
    "show_doc's `def Name(...) -> None:` for a class made `class Name(...):`; defaults over LONG_DEFAULT shortened."
    m = re.match(r'def (\w+)\(', sig)
    if not m: return sig
    try: fn = ast.parse(sig.replace('<factory>', '_factory_').rstrip() + '\n    pass').body[0]    # same length
    except SyntaxError: return sig
    starts = [0]
    for line in sig.splitlines(keepends=True): starts.append(starts[-1] + len(line))
    def at(lineno, col): return starts[lineno - 1] + len(sig.splitlines(keepends=True)[lineno - 1].encode()[:col].decode())
    cuts = []
    for d in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
        a, b = at(d.lineno, d.col_offset), at(d.end_lineno, d.end_col_offset)
        if b - a > LONG_DEFAULT: cuts.append((a, b, _short_default(d, sig[a:b])))
    for a, b, new in sorted(cuts, reverse=True): sig = sig[:a] + new + sig[b:]
    name = m.group(1)
    if name in classes:
        if classes[name] and re.fullmatch(r'def \w+\(\s*\*args, \*\*kwargs\s*\):?\s*', sig):
            return f"class {name}({', '.join(classes[name])}):"          # an exception: its bases say what it is
        sig = re.sub(r'\)\s*->\s*None\s*:', '):', 'class' + sig[3:])
        sig = re.sub(r'^class (\w+)\(\):', r'class \1:', sig)
    return sig


def signature_md(md: str) -> str:
    "show_doc's markdown with its signature block fixed by `signature`."
    classes = _classes()
    return re.sub(r'(```python\n)(.*?)(\n```)', lambda m: m.group(1) + signature(m.group(2), classes) + m.group(3),
                  md, count=1, flags=re.S)


_CELL_KEYS = {'code': {'cell_type', 'id', 'metadata', 'source', 'outputs', 'execution_count'},
              'markdown': {'cell_type', 'id', 'metadata', 'source', 'attachments'}}


def _std(cell):
    "The cell without the keys nbdev adds while processing (e.g. has_sd), which nbformat rejects."
    return {k: v for k, v in cell.items() if k in _CELL_KEYS[cell['cell_type']]}


def toctree_md(sidebar: dict) -> str:
    "Sphinx's hidden toctrees (the site navigation), one per sidebar section."
    blocks = []
    for item in sidebar['website']['sidebar']['contents']:
        if isinstance(item, dict):
            pages = '\n'.join(Path(p).stem for p in item['contents'])
            blocks.append(f"```{{toctree}}\n:caption: {item['section']}\n:hidden:\n\n{pages}\n```")
    return '\n\n'.join(blocks)


def _drop_written_next(cells: list) -> list:
    "A chapter's own closing 'Next: ...' paragraph left out: the build writes one from the chapter order (`next_md`)."
    for c in reversed(cells):
        if c['cell_type'] == 'raw' or not _src(c).strip(): continue
        if c['cell_type'] != 'markdown': break
        paras = re.split(r'\n\s*\n', _src(c).strip())
        keep = [p for p in paras if not p.lstrip().startswith(('Next:', '**Next:**', '**Next**:'))]
        if len(keep) < len(paras):
            note(f"{NB_NAME[0]}: its closing 'Next:' paragraph is left out; the site writes one from the chapter order")
            if keep: c['source'] = '\n\n'.join(keep) + '\n'
            else: cells.remove(c)
        break
    return cells


NB_NAME = ['']                 # the notebook being converted, for notes


def notebook_md(chapter: dict) -> str:
    "The line under a chapter's subtitle: download its notebook from this site, see it in the repository."
    repo, f = repository(), chapter['file']
    there = f' or <a href="{repo}/blob/main/nbs/{f}">see it in the repository</a>' if repo else ''
    name = Path(f).name                                    # the site keeps its copy beside the page
    return (f'<p class="dwlit-notebook">This chapter is a notebook: <a href="{name}" download>download {name}</a> '
            f'and open it in JupyterLab (<a href="index.html#open-the-notebooks">how</a>){there}.</p>')


def next_md(chapter: dict) -> str:
    "The paragraph that ends a chapter: the next chapter in the sidebar's order, or back to the list after the last."
    nxt = neighbours()[chapter['stem']]
    if nxt is None: return "{.dwlit-next}\n**Next:** that was the last chapter; [the list of chapters](index.ipynb#the-chapters)."
    desc = f": {nxt['description']}" if nxt['description'] else ''
    return f"{{.dwlit-next}}\n**Next:** [{label(nxt)}]({nxt['stem']}.ipynb){desc}"


_re_nested_link = re.compile(r'\[\[(`[^`\]]+`)\]\([^)\s]*\)\]\(')


def nb_for_sphinx(nb: dict, is_index: bool, sidebar: dict, description: str = None, chapter: dict = None) -> dict:
    "A processed notebook as MyST-NB should render it; `description`: the subtitle (default: nbdev's front matter);"
    " `chapter` (from scripts/chapters.py): numbers the title, links the notebook, ends the page with 'Next:'."
    cells = []
    for c in nb['cells']:
        if c['cell_type'] == 'raw' and _src(c).startswith('---'):
            fm = _yaml(_src(c).strip().strip('-')) or {}
            md = f"# {label(chapter) if chapter else fm.get('title', 'dwlit')}"
            desc = description if description is not None else fm.get('description')
            if desc: md += f"\n\n{{.lead}}\n{desc}"
            if chapter: md += '\n\n' + notebook_md(chapter)
            cells.append(_md(md))
        elif c['cell_type'] == 'code':
            c = cell_for_sphinx(c)
            if c is not None: cells.append({'id': _new_id(), **c})
        elif c['cell_type'] == 'markdown':
            if '<!-- WARNING: THIS FILE WAS AUTOGENERATED' in _src(c): continue
            if _src(c).lstrip().startswith('<!-- readme-only'): continue     # README's alone (scripts/make_readme.py)
            c['metadata'] = {}
            # nbdev links a backticked name even inside a link the author wrote: `[[`x`](api)](url)` keeps the author's
            c['source'] = _re_nested_link.sub(r'[\1](', _src(c))
            cells.append({'id': _new_id(), **_std(c)})
    if chapter: cells = _drop_written_next(cells) + [_md(next_md(chapter))]
    if is_index: cells.append(_md(toctree_md(sidebar)))
    meta = {k: v for k, v in nb['metadata'].items() if k in ('kernelspec', 'language_info')}
    meta.setdefault('kernelspec', {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'})
    return {**nb, 'cells': cells, 'metadata': meta}


def _front_matter(nb: dict) -> dict:
    c = nb['cells'][0] if nb['cells'] else {}
    return (_yaml(_src(c).strip().strip('-')) or {}) if c.get('cell_type') == 'raw' else {}


def local_links(nb_text: str, pages: dict) -> str:
    "Links made local to this site: nbdev's to the Quarto site (`{site-url}/access_patterns.html#make_view`), notebooks'."
    site = _yaml((nbs / 'nbdev.yml').read_text())['website']['site-url'].rstrip('/')
    nb_text = re.sub(re.escape(site) + r'/([\w.-]+\.html)', lambda m: pages.get(m.group(1), m.group(0)), nb_text)
    # [Memory](../sim/02_memory.ipynb), [Memory](sim/02_memory.ipynb) from the index: the site's pages are flat
    return re.sub(r'\]\((?:\.\./)?(?:\w+/)?(\w+)\.ipynb([#)])', r'](\1.html\2', nb_text)


def write_sources():
    "The Sphinx source folder: every processed notebook, converted."
    sidebar = _yaml((nbs / 'sidebar.yml').read_text())
    src.mkdir(parents=True, exist_ok=True)
    nbs_in = {f: json.loads(f.read_text()) for f in sorted(proc.glob('*.ipynb'))}
    pages = {_front_matter(nb).get('output-file', f.stem + '.html'): f.stem + '.html' for f, nb in nbs_in.items()}
    chs = {Path(c['file']).name: c for c in chapters()}
    for f, nb in nbs_in.items():
        # nbdev's front matter keeps only the first lines of a description that wraps over several `>` lines
        desc = title_and_description(notebook(f.stem))[1] if f.name in chs or f.stem == 'index' else None
        NB_NAME[0] = f.name
        nb = nb_for_sphinx(nb, f.name == 'index.ipynb', sidebar, desc, chs.get(f.name))
        (src / f.name).write_text(local_links(json.dumps(nb, indent=1), pages))
    (src / '_static').mkdir(exist_ok=True)
    shutil.copy(nbs / 'styles.css', src / '_static' / 'styles.css')


def sphinx_build(verbose=False):
    "Render the Sphinx source folder, then move the HTML to docs/ (MyST-NB keeps its scratch beside the output)."
    html = work / 'html'
    cmd = [sys.executable, '-m', 'sphinx', '-b', 'html', '-c', str(conf_dir), '-d', str(work / 'doctrees'),
           str(src), str(html)] + ([] if verbose else ['-q'])      # -q: warnings and errors only
    subprocess.run(cmd, check=True)
    if out.exists(): shutil.rmtree(out)
    shutil.copytree(html, out)
    (out / '.nojekyll').touch()
    if (nbs / 'llms.txt').exists(): shutil.copy(nbs / 'llms.txt', out / 'llms.txt')
    for f in [nbs / 'index.ipynb'] + [nbs / c['file'] for c in chapters()]:    # each page's "download" link
        if f.exists(): shutil.copy(f, out / f.name)


_re_codelink = re.compile(r'(<a class="reference external" href=")([\w.-]+\.html)#([^"]+)("><code)')


def unanchor_api_links():
    "nbdev links every backticked name it knows; where the name has no API docs on its page (a private helper, a"
    " method), point at the page itself rather than at a missing anchor. Prints each one."
    ids = {p.name: set(re.findall(r'\bid="([^"]+)"', p.read_text())) for p in out.glob('*.html')}
    for p in sorted(out.glob('*.html')):
        dropped = []
        def fix(m):
            page, frag = m.group(2), m.group(3)
            if page not in ids or frag in ids[page]: return m.group(0)
            dropped.append(f"{page}#{frag}"); return m.group(1) + page + m.group(4)
        text = _re_codelink.sub(fix, p.read_text())
        if dropped:
            p.write_text(text)
            note(f"{p.name}: no API docs for {', '.join(sorted(set(dropped)))}: linked to the page instead")


# --- The HTML, adjusted for reading (styles.css styles what these mark) ----------------------------------------------

_re_tag = re.compile(r'(<[^>]+>)|([^<]+)')


def hanging_lines(inner: str) -> str:
    "A <pre>'s HTML with each source line in a `span.dwlit-line` that knows its indentation (`--i`, in characters):"
    " styles.css wraps a long line with a hanging indent, so it continues to the right of where it started."
    import html
    out, line, opened = [], [], []          # opened: the tags open at this point (Pygments spans may hold newlines)
    def flush():
        text = html.unescape(re.sub(r'<[^>]+>', '', ''.join(line)))
        i = len(text) - len(text.lstrip(' '))
        out.append(f'<span class="dwlit-line" style="--i:{i}">' + ''.join(line) + '</span>')
    for m in _re_tag.finditer(inner):
        tag, text = m.groups()
        if tag:
            line.append(tag)
            if tag.startswith('</'): opened and opened.pop()
            elif not tag.endswith('/>'): opened.append(tag)
            continue
        parts = text.split('\n')
        for k, part in enumerate(parts):
            if part: line.append(part)
            if k < len(parts) - 1:                                   # a newline: close what is open, reopen after
                line.append('</span>' * len(opened) + '\n'); flush(); line = list(opened)
    if re.sub(r'<[^>]+>', '', ''.join(line)): flush()
    else: out.append(''.join(line))
    return ''.join(out)


_re_pre = re.compile(r'(<pre[^>]*>)(.*?)(</pre>)', re.S)
_re_td = re.compile(r'<(td|th)(?: class="([^"]*)")?>(.*?)</\1>', re.S)
_re_img = re.compile(r'(<a class="dwlit-figure"[^>]*>)?<img ([^>]*?)src="(_images/[^"]+)"([^>]*?)/?>')
_re_checks = re.compile(r'(<div class="cell [^"]*tag_' + CHECKS_TAG + r'[^"]*">\s*<details[^>]*>\s*<summary[^>]*>\s*'
                        r'<p class="collapsed[^"]*">)Show the code(</p>\s*<p class="expanded[^"]*">)Hide the code')


_re_data_img = re.compile(r'<img (?![^>]*_anim_img)([^>]*?)src="data:image/png;base64,([^"]+)"')


def _image_file(m) -> str:
    "An inline PNG (a cell's HTML output) written to _images/, so that a link can open it (a data: URL cannot)."
    import base64
    import hashlib
    data = base64.b64decode(m.group(2))
    name = f"_images/{hashlib.sha256(data).hexdigest()}.png"
    (out / name).parent.mkdir(exist_ok=True)
    (out / name).write_bytes(data)
    return f'<img {m.group(1)}src="{name}"'


_re_shown_sig = re.compile(r'(<p class="rubric" id="[^"]*"><span id="([\w.]+)"></span>[^<]*</p>\s*)'
                           r'<div class="highlight-python notranslate"><div class="highlight"><pre>.*?</pre></div>\s*</div>', re.S)
_re_visible_input = re.compile(r'<div class="cell (?![^"]*(?:hide|remove)-input)[^"]*">\s*<div class="cell_input.*?</pre>', re.S)
_re_defined = re.compile(r'<span class="k">(?:def|class)</span><span class="w"> </span><span class="n[fc]">(\w+)</span>')


def drop_shown_signatures(page: str) -> str:
    "An API entry whose code is shown, unfolded, on the same page keeps its anchor, link and docstring, not a second signature."
    shown = {n for m in _re_visible_input.finditer(page) for n in _re_defined.findall(m.group(0))}
    return _re_shown_sig.sub(lambda m: m.group(1) if m.group(2).split('.')[-1] in shown else m.group(0), page)


def for_reading(page: str) -> str:
    "A built page adjusted: no signature twice; code lines wrap with a hanging indent; a table cell of one word or number never breaks;"
    " each figure is a link to itself (a tap on a phone shows it full size); cells of checks say so."
    page = drop_shown_signatures(page)
    page = _re_pre.sub(lambda m: m.group(1) + hanging_lines(m.group(2)) + m.group(3), page)
    page = _re_data_img.sub(_image_file, page)
    def cell(m):
        text = re.sub(r'<[^>]+>', '', m.group(3)).strip()
        if not text or re.search(r'\s', text): return m.group(0)
        return f'<{m.group(1)} class="{((m.group(2) or "") + " dwlit-word").strip()}">{m.group(3)}</{m.group(1)}>'
    page = _re_td.sub(cell, page)
    page = _re_img.sub(lambda m: m.group(0) if m.group(1) else   # linked already
                       f'<a class="dwlit-figure" href="{m.group(3)}" title="the figure at full size">'
                       f'<img {m.group(2)}src="{m.group(3)}"{m.group(4)}/></a>', page)
    return _re_checks.sub(r'\1Show the checks\2Hide the checks', page)


def source_paths(page: str) -> str:
    "The theme's 'view'/'edit' links point at `nbs/NN_x.ipynb` (the flat page's name): make them the part's folder's."
    for c in chapters(): page = re.sub(rf'(/(?:blob|edit)/main/nbs/){c["stem"]}\.ipynb', rf'\g<1>{c["file"]}', page)
    return page


def adjust_pages():
    "`for_reading` on every page of the site."
    for p in sorted(out.glob('*.html')):
        if p.name != 'search.html': p.write_text(source_paths(for_reading(p.read_text())))


def main(argv=None):
    verbose = bool({'-v', '--verbose'} & set(sys.argv[1:] if argv is None else argv))
    missing = missing_extras()
    if missing:
        sys.exit(f"scripts/build_docs.py: {', '.join(missing)} not installed; the site needs the dev extra: "
                 f"pip install -e \".[dev]\" (or bash scripts/test --setup-only, then . .venv/bin/activate)")
    t0 = time.time()
    stage_nbs(); run_proc_nbs(); write_sources(); sphinx_build(verbose); unanchor_api_links(); adjust_pages()
    pages = sorted(p.name for p in out.glob('*.html') if p.name != 'search.html')
    if verbose: print('\n'.join(f"note {n}" for n in NOTES))
    print(f"built {out.relative_to(root)}/ in {time.time() - t0:.0f} s: {len(pages)} pages" +
          (f" ({len(NOTES)} notes: --verbose shows them)" if NOTES and not verbose else '') +
          f"; open {out.relative_to(root)}/index.html ({(out / 'index.html').as_uri()})")


if __name__ == '__main__': main()
