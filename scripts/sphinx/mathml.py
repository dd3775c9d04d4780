"""A Sphinx HTML math renderer that writes MathML (via latex2mathml) at build time: no MathJax from the network."""
from docutils import nodes
from latex2mathml.converter import convert


def _inline(self, node):
    self.body.append(convert(node.astext()))
    raise nodes.SkipNode


def _block(self, node):
    self.body.append(f'<div class="math-display">{convert(node.astext(), display="block")}</div>')
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer('mathml', (_inline, None), (_block, None))
    app.config.html_math_renderer = 'mathml'
    return {'parallel_read_safe': True, 'parallel_write_safe': True}
