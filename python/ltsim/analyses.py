"""The long computations: the exact first disagreement, agreement at every length, the length
profile, simulations, the sandwich and fuzz
campaigns over a user's pair. Each releases the GIL, takes `threads=` where it is parallel,
reports to `progress(done, total)` and stops on Ctrl-C (KeyboardInterrupt)."""

from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from . import _ltsim
from ._errors import call
from ._results import (CertifyResult, FuzzCase, FuzzResult, ModelSide, ProfileResult,
                       SandwichResult, Simulation, ThresholdResult)
from .models import Model

_THRESHOLD_NAMES = {"epsilon": "eps", "samples_per_length": "samples"}
_METHOD_NAMES = {"length": "z_length"}


def methods() -> list:
    """The simulators' names, in registry order (the `method=` of simulate and sandwich).

    >>> ltsim.methods()[:3]
    ['frequency', 'frequency-agnostic', 'truncate']
    """
    return list(_ltsim.simulator_names())


def threshold(f: Model, g: Model, eps: float, max_length: int, seed: int = 1,
              samples: int = 100, prune: bool = True, threads: int = 0,
              max_evaluations: int = 4_000_000_000, progress=None) -> ThresholdResult:
    """The first disagreement of f and g: the smallest length T ≤ max_length with a string x,
    |x| = T, where ‖f(x) − g(x)‖_∞ > eps, as `ltsim threshold` computes it
    (docs/theory.md §7.2, §11). One-layer pairs: exact over every string, through the
    sufficient statistics (`exhaustive` True); two-layer pairs: every string up to a length,
    then `samples` seeded random strings a length. `threads` 0 uses every core; the result
    is the same for any number. `progress(done, total)` is called after each window of
    lengths.

    >>> f = ltsim.load_model("corpus/families/bump_s2.71_period2/f.json")
    >>> g = ltsim.load_model("corpus/families/bump_s2.71_period2/g.json")
    >>> r = ltsim.threshold(f, g, eps=0.05, max_length=40)
    >>> r.first_disagreement, r.exhaustive, len(r.witness)
    (38, True, 38)
    >>> ltsim.threshold(f, g, eps=-1, max_length=40)
    Traceback (most recent call last):
    ...
    ltsim.InputError: eps: must be finite and ≥ 0, not -1
    """
    d = call(_ltsim.threshold, _THRESHOLD_NAMES, f._native, g._native, float(eps),
             _count(max_length, "max_length"), _count(seed, "seed"), _count(samples, "samples"),
             bool(prune), int(threads), _count(max_evaluations, "max_evaluations"), progress)
    return ThresholdResult(eps=float(eps), max_length=int(max_length), seed=int(seed), **d)


def certify(f: Model, g: Model, eps: float, seed: int = 1, threads: int = 0,
            initial_length: int = 1000, max_exact_length: int = 10_000_000,
            tolerance: float = 1e-6, max_boxes: int = 2_000_000, progress=None) -> CertifyResult:
    """Whether a one-layer pair agrees within eps at every length (certified), or its exact
    first disagreement T*, as `ltsim certify` decides it (docs/theory.md §12): lengths up to
    T0 (`initial_length`, raised ×8 up to `max_exact_length` while needed) by the exact
    threshold, every longer length by a branch and bound whose certified bound covers them
    all. "undecided" when the supremum's bracket holds eps and is narrower than `tolerance`,
    or `max_boxes` were spent. `seed` is recorded; the decision uses no randomness.
    `progress(boxes, 0)` is called now and then.

    >>> f = ltsim.load_model("corpus/families/bump_s2.71_period2/f.json")
    >>> g = ltsim.load_model("corpus/families/bump_s2.71_period2/g.json")
    >>> r = ltsim.certify(f, g, eps=0.05)
    >>> r.verdict, r.first_disagreement, len(r.witness)
    ('disagrees', 38, 38)
    >>> same = ltsim.certify(f, f, eps=1e-6)
    >>> same.verdict, same.sup_gap_upper <= 1e-6
    ('agrees-at-every-length', True)
    """
    d = call(_ltsim.certify, {"epsilon": "eps"}, f._native, g._native, float(eps),
             _count(seed, "seed"), int(threads), _count(initial_length, "initial_length"),
             _count(max_exact_length, "max_exact_length"), float(tolerance),
             _count(max_boxes, "max_boxes"), progress)
    return CertifyResult(eps=float(eps), seed=int(seed), **d)


def profile(f: Model, g: Model, train_length: int = 0, max_length: int = 10_000, points: int = 30,
            tolerance: float = 1e-3, max_certify_runs: int = 40, max_boxes: int = 200_000,
            certify_evaluations: int = 200_000, seed: int = 1, threads: int = 0,
            progress=None) -> ProfileResult:
    """The length profile of a one-layer pair, as `ltsim profile` computes it
    (docs/theory.md §14): the largest gap at every length 1 … `train_length` and on `points`
    lengths up to `max_length` (log grid), ε_train(n), the supremum over every length (by
    bisection with certify) and their ratio, each a certified bracket. `seed` is recorded;
    nothing is random. `progress(done, total)` is called per length.

    >>> f = ltsim.load_model("corpus/families/bump_s2.71_period2/f.json")
    >>> g = ltsim.load_model("corpus/families/bump_s2.71_period2/g.json")
    >>> p = ltsim.profile(f, g, train_length=16, max_length=1000, points=5)
    >>> p.train_gap_upper <= p.sup_gap_upper, int(p.lengths[-1])
    (True, 1000)
    """
    d = call(_ltsim.profile, {}, f._native, g._native, _count(train_length, "train_length"),
             _count(max_length, "max_length"), int(points), float(tolerance),
             int(max_certify_runs), _count(max_boxes, "max_boxes"),
             _count(certify_evaluations, "certify_evaluations"), _count(seed, "seed"),
             int(threads), progress)
    return ProfileResult(train_length=int(train_length), max_length=int(max_length),
                         seed=int(seed), **d)


def simulation(f, x, z_length: int, method: str = "frequency", seed: int = 1,
               block_length: int = 0, progress=None) -> Simulation:
    """Builds a short z from a long x for a model or a pair `f` = (f, g) with a simulator
    (`methods()`), with what the construction claims: its certified η (NaN when the method
    claims none) and Θ. `x` is an integer array, (tokens, counts) runs, or a string spec
    ("iid:length=10000000,alphabet=3,seed=1", a path). `block_length` is ℓ of markov and
    blocks (0: ⌈n^(1/3)⌉).

    >>> f = ltsim.load_model("corpus/models/pair/f.json")
    >>> s = ltsim.simulation(f, "corpus/strings/default.txt", z_length=2000)
    >>> s.length <= 2000, s.eta < 0.01
    (True, True)
    """
    models = list(f) if isinstance(f, (tuple, list)) else [f]
    d = call(_ltsim.simulate, _METHOD_NAMES, [m._native for m in models], x, str(method),
             _count(z_length, "z_length"), _count(seed, "seed"),
             _count(block_length, "block_length"), progress)
    return Simulation(method=str(method), seed=int(seed), **d)


def simulate(f, x, z_length: int, method: str = "frequency", seed: int = 1,
             block_length: int = 0, progress=None) -> np.ndarray:
    """z as a numpy array of tokens: `simulation(...).z` (see `simulation` for the arguments
    and for η).

    >>> f = ltsim.load_model("corpus/models/pair/f.json")
    >>> z = ltsim.simulate(f, np.array([0, 1] * 5000 + [2] * 10), z_length=100, method="truncate")
    >>> len(z), z[-3:]
    (100, array([2, 2, 2], dtype=uint16))
    """
    return simulation(f, x, z_length, method, seed, block_length, progress).z


def sandwich(f: Model, g: Model, x, z_length: int, method: str = "frequency", seed: int = 1,
             block_length: int = 0, progress=None) -> SandwichResult:
    """Builds z from x and measures every term of |f(x) − g(x)| ≤ sim_f + gap_z + sim_g
    (docs/theory.md §1), as `ltsim sandwich` does: both models on x and z, the Lipschitz
    constants, γ, the measured and certified η, and whether the sandwich and the rate
    sim ≤ L·η held.

    >>> f = ltsim.load_model("corpus/models/pair/f.json")
    >>> g = ltsim.load_model("corpus/models/pair/g.json")
    >>> r = ltsim.sandwich(f, g, "corpus/strings/default.txt", z_length=2000)
    >>> r.holds, r.rate_holds, r.z_length
    (True, True, 1999)
    """
    d = call(_ltsim.sandwich, _METHOD_NAMES, f._native, g._native, x, str(method),
             _count(z_length, "z_length"), _count(seed, "seed"),
             _count(block_length, "block_length"), progress)
    d["f"], d["g"] = ModelSide(**d["f"]), ModelSide(**d["g"])
    d["simulation"] = Simulation(method=str(method), seed=int(seed), **d["simulation"])
    return SandwichResult(seed=int(seed), **d)


def fuzz(f: Model, g: Model, cases: int = 100, seed: int = 1,
         inputs: Sequence[str] = ("uniform", "dirichlet", "sparse", "markov", "periodic",
                                  "stress"),
         methods: Optional[Sequence[str]] = None, lengths: Tuple[int, int] = (2000, 20000),
         z_lengths: Tuple[int, int] = (300, 3000), eps: float = 1e-3, threads: int = 0,
         progress=None) -> FuzzResult:
    """A property-testing campaign over a user's pair: each case draws an input x from one of
    the input families (`inputs`), a length in `lengths`, a method (default: frequency,
    frequency-agnostic, markov and blocks; frequency only for one-layer pairs) and a target
    |z| in `z_lengths`, builds z and checks every property that applies (sandwich, transfer,
    frequency-rate, finite-hardmax, lemma53; docs/theory.md §1, §2.4, §4.4), rechecking any
    refutation in 50 digits. Case i is a pure function of (seed, i): the same for any
    `threads`.

    >>> f = ltsim.load_model("corpus/models/pair/f.json")
    >>> g = ltsim.load_model("corpus/models/pair/g.json")
    >>> r = ltsim.fuzz(f, g, cases=8, lengths=(1000, 3000), z_lengths=(300, 600))
    >>> len(r.cases), r.refutations
    (8, 0)
    """
    one_layer = len(f.layers) == 1 and len(g.layers) == 1
    if methods is None:
        methods = ["frequency", "frequency-agnostic", "markov", "blocks"][0 if one_layer else 1:]
    lo, hi = _pair(lengths, "lengths")
    zlo, zhi = _pair(z_lengths, "z_lengths")
    rows = call(_ltsim.fuzz_pair, {}, f._native, g._native, _count(cases, "cases"),
                _count(seed, "seed"), list(inputs), list(methods), lo, hi, zlo, zhi,
                float(eps), int(threads), progress)
    found = [FuzzCase(**row) for row in rows]
    summary = {}
    for case in found:
        for name, outcome in case.properties.items():
            s = summary.setdefault(name, {"cases": 0, "refutations": 0, "worst_ratio": None,
                                          "worst_case": None})
            s["cases"] += 1
            s["refutations"] += 0 if outcome["holds"] else 1
            if s["worst_ratio"] is None or outcome["ratio"] > s["worst_ratio"]:
                s["worst_ratio"], s["worst_case"] = outcome["ratio"], case.index
    return FuzzResult(seed=int(seed), cases=found, summary=summary)


def _count(value, name) -> int:
    """A non-negative integer argument, or InputError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise _ltsim.InputError(f"{name} {value!r}: must be a non-negative integer")
    if value < 0 or value >= 1 << 64:
        raise _ltsim.InputError(f"{name} {value}: must be a non-negative integer below 2^64")
    return int(value)


def _pair(value, name):
    try:
        lo, hi = value
    except (TypeError, ValueError):
        raise _ltsim.InputError(f"{name}: expected (min, max)") from None
    return _count(lo, name), _count(hi, name)
