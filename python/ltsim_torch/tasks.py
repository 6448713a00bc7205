"""The former name of `ltsim.torch.tasks` (docs/python.md)."""

from ltsim.torch.tasks import *  # noqa: F401,F403
