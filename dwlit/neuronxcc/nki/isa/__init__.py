"""`neuronxcc.nki.isa` (NKI's first generation) under dwlit: `dwlit.nki.isa`."""
from ....nki.isa import *  # noqa: F401,F403
from ....nki.isa import __all__, __getattr__  # noqa: F401
from . import constants
