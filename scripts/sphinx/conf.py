"""Sphinx settings for the Quarto-free docs build (scripts/build_docs.py). Sources: nbdev-processed notebooks.

Everything about the project comes from pyproject.toml: the name, the authors and the licence (the footer), and the
repository (`[project.urls] Repository`): when it is set, each page links to its notebook there ("view source",
"edit") and each API entry to its code; when it is not, as now, the site links to no repository at all."""
import sys
from pathlib import Path

import tomllib

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
_project = tomllib.loads((here.parent.parent / 'pyproject.toml').read_text())['project']
_authors = ', '.join(a['name'] for a in _project.get('authors', []))
REPOSITORY = (_project.get('urls') or {}).get('Repository', '').rstrip('/')

project = _project['name']
html_title = _project['name']
author = _authors
copyright = f"2026, {_authors}; licensed under {_project['license']}"
extensions = ['myst_nb', 'mathml']          # mathml: formulas become MathML at build time, no MathJax download

# MyST-NB: show the outputs saved in the notebooks, never execute
nb_execution_mode = 'off'
nb_render_markdown_format = 'myst'          # show_doc's markdown output, parsed like the prose
nb_ipywidgets_js = {}                        # widget outputs are replaced by a note; load no widget JavaScript
nb_merge_streams = True
nb_code_prompt_show = 'Show the code'        # a `#| code-fold: true` cell (build_docs.py tags it hide-input)
nb_code_prompt_hide = 'Hide the code'
myst_enable_extensions = ['dollarmath', 'amsmath', 'attrs_inline', 'attrs_block', 'colon_fence']
myst_heading_anchors = 3
myst_all_links_external = True              # build_docs.py already made them plain .html links
suppress_warnings = ['myst.header', 'myst.xref_missing', 'mystnb.unknown_mime_type', 'misc.highlighting_failure']

exclude_patterns = ['_build', '**.ipynb_checkpoints']
html_theme = 'furo'
html_static_path = [str(here.parent.parent / '_docs_build' / 'src' / '_static')]  # written by build_docs.py
html_css_files = ['styles.css']
html_favicon = str(here / 'favicon.svg')
html_theme_options = ({'source_repository': REPOSITORY + '/', 'source_branch': 'main', 'source_directory': 'nbs/'}
                      if REPOSITORY else {})
html_show_sourcelink = False
html_copy_source = False
html_use_index = False                       # no general index page: the API docs are on each chapter's page
html_domain_indices = False
