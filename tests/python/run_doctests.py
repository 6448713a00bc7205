"""Runs the examples in the docstrings of the package `ltsim` (docs/python.md: every public
function has one) from the repository root, so that they cannot rot.

Run by CTest as `/usr/bin/python3 run_doctests.py` with PYTHONPATH=<build>/python.
"""

import doctest
import sys

import numpy as np

import ltsim
import ltsim.analyses
import ltsim.models

failures = 0
for module in (ltsim, ltsim.models, ltsim.analyses):
    result = doctest.testmod(module, extraglobs={"ltsim": ltsim, "np": np},
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    print(f"{module.__name__}: {result.attempted} examples, {result.failed} failed")
    failures += result.failed
# Every public function and class of the package has an example.
missing = [name for name in ltsim.__all__ if name != "__version__" and callable(getattr(ltsim, name))
           and not name.endswith(("Result", "Info", "Side", "Case", "Parameter", "Member", "Bound",
                                  "Constants", "Simulation", "Family", "InputError"))
           and ">>>" not in (getattr(ltsim, name).__doc__ or "")]
missing += [f"Model.{name}" for name, value in vars(ltsim.Model).items()
            if not name.startswith("_") and callable(getattr(value, "__func__", value))
            and ">>>" not in (getattr(value, "__doc__", "") or "")]
if missing:
    print("no example in the docstring of:", ", ".join(missing))
sys.exit(1 if failures or missing else 0)
