"""`neuronxcc.nki.compiler` (NKI's first generation) under dwlit: `dwlit.nki.compiler`."""
from ....nki.compiler import *  # noqa: F401,F403
from ....nki.compiler import __all__, __getattr__  # noqa: F401
