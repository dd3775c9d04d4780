"""`neuronxcc.nki.language` (NKI's first generation) under dwlit: `dwlit.nki.language`."""
from ....nki.language import *  # noqa: F401,F403
from ....nki.language import __all__, __getattr__  # noqa: F401
