"""`neuronxcc.nki` (NKI's first generation) under dwlit: the modules of `dwlit.nki`, which take both generations' forms."""
from ...nki import *  # noqa: F401,F403
from ...nki import __all__, __getattr__  # noqa: F401
from . import language, isa, typing, compiler
