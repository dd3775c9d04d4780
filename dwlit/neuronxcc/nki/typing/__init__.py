"""`neuronxcc.nki.typing` (NKI's first generation) under dwlit: `dwlit.nki.typing`."""
from ....nki.typing import *  # noqa: F401,F403
from ....nki.typing import __all__, __getattr__  # noqa: F401
