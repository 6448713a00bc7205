"""The former name of `ltsim.torch.experiment` (docs/python.md)."""

from ltsim.torch.experiment import *  # noqa: F401,F403
from ltsim.torch.experiment import main

if __name__ == "__main__":
    raise SystemExit(main())
