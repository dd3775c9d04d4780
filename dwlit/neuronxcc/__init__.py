"""The first generation's package name: `import dwlit.neuronxcc.nki as nki` (for `import neuronxcc.nki as nki`) gives the
same front end as `dwlit.nki`, which serves both generations."""
from . import nki

__all__ = ['nki']
