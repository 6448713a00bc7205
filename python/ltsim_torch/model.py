"""The former name of `ltsim.torch.model` (docs/python.md)."""

from ltsim.torch.model import *  # noqa: F401,F403
