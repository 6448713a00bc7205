"""The former name of `ltsim.safetensors` (docs/python.md)."""

from ltsim.safetensors import *  # noqa: F401,F403
from ltsim.safetensors import SafetensorsError, read, write  # noqa: F401
