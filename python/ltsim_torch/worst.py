"""The former name of `ltsim.torch.worst` (docs/python.md)."""

from ltsim.torch.worst import *  # noqa: F401,F403
from ltsim.torch.worst import main

if __name__ == "__main__":
    raise SystemExit(main())
