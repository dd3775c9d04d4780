"""Build the docs website into docs/ without Quarto: nbdev processes the notebooks, Sphinx + MyST-NB renders them.

    python scripts/build_docs.py            # -> docs/index.html, one page per chapter; prints one line
    python scripts/build_docs.py --verbose  # also what it adjusted on the way (the notes below), and Sphinx's output

Where Quarto is installed, `nbdev-docs` builds the same pages the standard nbdev way; this is the route for machines
(CI here included) where it is not. Steps:

1. Stage a copy of nbs/ in _docs_build/nbs (the sources are never touched).
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
import ast, json, re, shutil, subprocess, sys, time, uuid
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chapters import title_and_description  # noqa: E402

root = Path(__file__).resolve().parent.parent
nbs, work, out = root / 'nbs', root / '_docs_build', root / 'docs'
stage, src, proc = work / 'nbs', work / 'src', root / '_proc'
conf_dir = Path(__file__).resolve().parent / 'sphinx'

WIDGET_MIME = 'application/vnd.jupyter.widget-view+json'
WIDGET_NOTE = ("*Interactive widget: it needs a live Python kernel, so open this notebook in JupyterLab to move its "
               "sliders. The static figure next to it shows the same thing.*")


NOTES = []      # what the build adjusted; printed with --verbose


def note(msg): NOTES.append(msg)


def repository() -> str:
    "The project's repository URL (`[project.urls] Repository` in pyproject.toml), or '' when it names none."
    import tomllib
    urls = tomllib.loads((root / 'pyproject.toml').read_text())['project'].get('urls') or {}
    return urls.get('Repository', '').rstrip('/')


def _src(cell): return ''.join(cell['source'])
def _new_id(): return uuid.uuid4().hex[:8]
def _md(text): return {'cell_type': 'markdown', 'id': _new_id(), 'metadata': {}, 'source': text}


def _split_mixed_imports(cell):
    "nbdev runs any cell that has an import; give such a cell's imports a hidden cell of their own (nbdev's FAQ fix)."
    if cell['cell_type'] != 'code': return None
    s = _src(cell)
    try: tree = ast.parse('\n'.join(l for l in s.splitlines() if not l.lstrip().startswith('%')))
    except SyntaxError: return None
    if any(l.startswith('#|') for l in s.splitlines()): return None
    imps = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    if not imps or len(imps) == len(tree.body): return None
    lines = s.splitlines()
    imp_src = '\n'.join(ast.get_source_segment(s, n) or lines[n.lineno - 1] for n in imps)
    cell['source'] = '#| eval: false\n' + s
    return {'cell_type': 'code', 'id': _new_id(), 'metadata': {}, 'outputs': [], 'execution_count': None,
            'source': '#| include: false\n' + imp_src}


def stage_nbs():
    "Copy nbs/ into the staging folder; report (and work around) cells nbdev-proc-nbs would fail on."
    if work.exists(): shutil.rmtree(work)
    shutil.copytree(nbs, stage, ignore=shutil.ignore_patterns('.ipynb_checkpoints', '_*.ipynb'))
    for f in sorted(stage.glob('*.ipynb')):
        nb = json.loads(f.read_text())
        cells, fixed = [], 0
        for c in nb['cells']:
            extra = _split_mixed_imports(c)
            if extra: cells.append(extra); fixed += 1
            cells.append(c)
        if fixed:
            note(f"{f.name}: {fixed} cell(s) mix imports with other code; nbdev-proc-nbs (and nbdev-docs) runs such "
                 f"cells whole and stops if one fails, so they are staged with their imports split off (nbdev FAQ)")
            nb['cells'] = cells
            f.write_text(json.dumps(nb, indent=1))


def run_proc_nbs():
    "nbdev's processing of the staged notebooks into _proc/."
    from nbdev.serve import proc_nbs
    if proc.exists(): shutil.rmtree(proc)
    proc_nbs(path=str(stage), force=True, n_workers=2)


_re_cdn_css = re.compile(r'<link[^>]+href="https?://[^"]*font-awesome[^"]*"[^>]*>\s*')
_re_dir = re.compile(r'^#\|\s*([\w-]+)\s*:?\s*(.*?)\s*$')


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
    outs = []
    for o in cell.get('outputs', []):
        data = o.get('data', {})
        if WIDGET_MIME in data:
            o = {'output_type': 'display_data', 'metadata': {}, 'data': {'text/markdown': WIDGET_NOTE}}
        elif 'text/html' in data:       # matplotlib's jshtml links Font Awesome from a CDN: styles.css draws its icons
            data['text/html'] = _re_cdn_css.sub('', ''.join(data['text/html']))
        elif 'text/markdown' in data:   # show_doc starts with a rule, which docutils allows only between sections
            data['text/markdown'] = _source_links(re.sub(r'^\s*---\s*\n', '', ''.join(data['text/markdown'])))
        outs.append(o)
    cell['outputs'] = outs
    cell['metadata'] = {'tags': sorted(tags)} if tags else {}
    return _std(cell)


_re_source = re.compile(r'\[source\]\(([^)]*)\)\{[^}]*\}\s*')


def _source_links(md: str) -> str:
    "show_doc's `[source](...)` link kept only when it points into the project's repository (none is named: dropped)."
    repo = repository()
    return _re_source.sub(lambda m: m.group(0) if repo and m.group(1).startswith(repo + '/') else '', md)


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


def nb_for_sphinx(nb: dict, is_index: bool, sidebar: dict, description: str = None) -> dict:
    "A processed notebook as MyST-NB should render it; `description`: the subtitle (default: nbdev's front matter)."
    cells = []
    for c in nb['cells']:
        if c['cell_type'] == 'raw' and _src(c).startswith('---'):
            fm = yaml.safe_load(_src(c).strip().strip('-')) or {}
            md = f"# {fm.get('title', 'dwlit')}"
            desc = description if description is not None else fm.get('description')
            if desc: md += f"\n\n{{.lead}}\n{desc}"
            cells.append(_md(md))
        elif c['cell_type'] == 'code':
            c = cell_for_sphinx(c)
            if c is not None: cells.append({'id': _new_id(), **c})
        elif c['cell_type'] == 'markdown':
            if '<!-- WARNING: THIS FILE WAS AUTOGENERATED' in _src(c): continue
            c['metadata'] = {}
            cells.append({'id': _new_id(), **_std(c)})
    if is_index: cells.append(_md(toctree_md(sidebar)))
    meta = {k: v for k, v in nb['metadata'].items() if k in ('kernelspec', 'language_info')}
    meta.setdefault('kernelspec', {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'})
    return {**nb, 'cells': cells, 'metadata': meta}


def _front_matter(nb: dict) -> dict:
    c = nb['cells'][0] if nb['cells'] else {}
    return (yaml.safe_load(_src(c).strip().strip('-')) or {}) if c.get('cell_type') == 'raw' else {}


def local_links(nb_text: str, pages: dict) -> str:
    "Links made local to this site: nbdev's to the Quarto site (`{site-url}/access_patterns.html#make_view`), notebooks'."
    site = yaml.safe_load((nbs / 'nbdev.yml').read_text())['website']['site-url'].rstrip('/')
    nb_text = re.sub(re.escape(site) + r'/([\w.-]+\.html)', lambda m: pages.get(m.group(1), m.group(0)), nb_text)
    return re.sub(r'\]\((\w+)\.ipynb([#)])', r'](\1.html\2', nb_text)     # [Memory](01_memory.ipynb)


def write_sources():
    "The Sphinx source folder: every processed notebook, converted."
    sidebar = yaml.safe_load((nbs / 'sidebar.yml').read_text())
    src.mkdir(parents=True, exist_ok=True)
    nbs_in = {f: json.loads(f.read_text()) for f in sorted(proc.glob('*.ipynb'))}
    pages = {_front_matter(nb).get('output-file', f.stem + '.html'): f.stem + '.html' for f, nb in nbs_in.items()}
    for f, nb in nbs_in.items():
        # nbdev's front matter keeps only the first lines of a description that wraps over several `>` lines
        desc = title_and_description(nbs / f.name)[1] if (nbs / f.name).exists() else None
        nb = nb_for_sphinx(nb, f.name == 'index.ipynb', sidebar, desc)
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


def main(argv=None):
    verbose = bool({'-v', '--verbose'} & set(sys.argv[1:] if argv is None else argv))
    t0 = time.time()
    stage_nbs(); run_proc_nbs(); write_sources(); sphinx_build(verbose); unanchor_api_links()
    pages = sorted(p.name for p in out.glob('*.html') if p.name != 'search.html')
    if verbose: print('\n'.join(f"note {n}" for n in NOTES))
    print(f"built {out.relative_to(root)}/ in {time.time() - t0:.0f} s: {len(pages)} pages" +
          (f" ({len(NOTES)} notes: --verbose shows them)" if NOTES and not verbose else ''))


if __name__ == '__main__': main()
