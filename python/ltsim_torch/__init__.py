"""The former name of `ltsim.torch` (docs/python.md): kept so that existing scripts and
`python3 -m ltsim_torch.train …` still work; new code imports `ltsim.torch`."""

from ltsim.torch import *  # noqa: F401,F403
from ltsim.torch import __all__  # noqa: F401
