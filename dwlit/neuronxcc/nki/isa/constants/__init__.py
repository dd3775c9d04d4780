"""`neuronxcc.nki.isa.constants` (NKI's first generation) under dwlit: `dwlit.nki.isa.constants`."""
from .....nki.isa.constants import *  # noqa: F401,F403
from .....nki.isa.constants import __all__, __getattr__  # noqa: F401
