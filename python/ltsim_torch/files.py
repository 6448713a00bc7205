"""The former name of `ltsim.torch.files` (docs/python.md)."""

from ltsim.torch.files import *  # noqa: F401,F403
