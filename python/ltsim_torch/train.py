"""The former name of `ltsim.torch.train` (docs/python.md)."""

from ltsim.torch.train import *  # noqa: F401,F403
from ltsim.torch.train import main

if __name__ == "__main__":
    raise SystemExit(main())
