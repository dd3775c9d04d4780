"""Sphinx settings for the Quarto-free docs build (scripts/build_docs.py). Sources: nbdev-processed notebooks."""
import sys, tomllib
from pathlib import Path

here = Path(__file__).resolve().parent
sys.path.insert(0, str(here))
_project = tomllib.loads((here.parent.parent / 'pyproject.toml').read_text())['project']

project = 'dwlit'
html_title = 'dwlit'
author = 'dwlit developers'
extensions = ['myst_nb', 'mathml']          # mathml: formulas become MathML at build time, no MathJax download

# MyST-NB: show the outputs saved in the notebooks, never execute
nb_execution_mode = 'off'
nb_render_markdown_format = 'myst'          # show_doc's markdown output, parsed like the prose
nb_ipywidgets_js = {}                        # widget outputs are replaced by a note; load no widget JavaScript
nb_merge_streams = True
myst_enable_extensions = ['dollarmath', 'amsmath', 'attrs_inline', 'attrs_block', 'colon_fence']
myst_heading_anchors = 3
myst_all_links_external = True              # build_docs.py already made them plain .html links
suppress_warnings = ['myst.header', 'myst.xref_missing', 'mystnb.unknown_mime_type', 'misc.highlighting_failure']

exclude_patterns = ['_build', '**.ipynb_checkpoints']
html_theme = 'furo'
html_static_path = [str(here.parent.parent / '_docs_build' / 'src' / '_static')]  # written by build_docs.py
html_css_files = ['styles.css']
html_favicon = str(here / 'favicon.svg')
html_theme_options = {'source_repository': _project['urls']['Repository'], 'source_branch': 'main',
                      'source_directory': 'nbs/'}
html_show_sourcelink = False
html_copy_source = False
