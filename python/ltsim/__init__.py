"""ltsim from Python: limit transformers evaluated exactly on strings of any length, short
strings z that simulate long strings x, exact first disagreements of model pairs, the
paper's constants and bounds (docs/python.md).

The package binds ltsim's C++ libraries directly (the module ltsim._ltsim, built by CMake
from the same libraries as the `ltsim` command line). Bad input raises `ltsim.InputError`
(a ValueError) with the command line's one-line message.

>>> import ltsim
>>> f = ltsim.load_model("corpus/models/pair/f.json")
>>> g = ltsim.load_model("corpus/models/pair/g.json")
>>> ltsim.threshold(f, g, eps=0.1, max_length=12).first_disagreement
2
"""

from ._ltsim import InputError, __version__
from ._results import (Bound, CertifyResult, Constants, Family, FamilyMember, FamilyParameter,
                       FuzzCase, FuzzResult, LayerInfo, ModelInfo, ModelSide, ProfileResult,
                       SandwichResult, Simulation, ThresholdResult)
from .analyses import (certify, fuzz, methods, profile, sandwich, simulate, simulation,
                       threshold)
from .models import Model, constants, construct, families, family, load_model

InputError.__module__ = "ltsim"
InputError.__doc__ = ("Bad input (a file, an argument, a string that does not fit a model): "
                      "the message is one line naming the file and the key or position, as "
                      "the command line prints it. A subclass of ValueError.")

__all__ = ["InputError", "Model", "load_model", "construct", "family", "families", "constants",
           "threshold", "certify", "profile", "simulate", "simulation", "sandwich", "fuzz", "methods",
           "ThresholdResult", "CertifyResult", "ProfileResult", "Simulation", "SandwichResult", "ModelSide", "ModelInfo",
           "LayerInfo", "Constants", "Bound", "FuzzResult", "FuzzCase", "Family",
           "FamilyParameter", "FamilyMember", "__version__"]


def __getattr__(name):
    # ltsim.torch (PyTorch) is imported on first use: `import ltsim` stays light.
    if name == "torch":
        import importlib
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'ltsim' has no attribute {name!r}")
