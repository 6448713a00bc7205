"""Typed results: every answer of the package is a dataclass with `to_dict()` (JSON-ready)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np


def _plain(value):
    """numpy arrays and scalars as lists and numbers, NaN and ±∞ as None (as ltsim's JSON)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.to_dict()
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


class Result:
    """Base of the result dataclasses: `to_dict()` gives plain Python values (lists for
    arrays, None for NaN and infinities, as in ltsim's JSON outputs)."""

    def to_dict(self) -> dict:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


@dataclasses.dataclass
class LayerInfo(Result):
    """One layer of a model: attention mode, bias scaling, p (finite only), heads, MLP."""
    attention: str
    bias_scaling: str
    precision_bits: int
    heads: int
    mlp: bool


@dataclasses.dataclass
class ModelInfo(Result):
    """Sizes and constants of one model (docs/model.md §4), as `ltsim info --json` prints
    them: NaN where a constant does not apply (e.g. L(f) of a two-layer model), +inf for a
    margin without a positive gap; `not_computed` says why a constant over its work limit is
    missing."""
    name: str
    alphabet: int
    width: int
    period: int
    locality: int
    layers: int
    heads: list
    attention: list
    outputs: int
    logit_margin: float
    hardmax_length: float
    log2_hardmax_length: float
    lipschitz: float
    positional_margin: float
    log_complexity: float
    complexity: float
    regimes: list
    not_computed: dict


@dataclasses.dataclass
class CertifyResult(Result):
    """Agreement of a one-layer pair at every length, or its exact first disagreement, as
    `ltsim certify` decides it (docs/theory.md §12).

    `verdict`: "agrees-at-every-length" (certified: ‖f(x) − g(x)‖_∞ ≤ `sup_gap_upper` ≤ ε for
    every string x of every length), "disagrees" (`first_disagreement` the exact T*, or None
    when it lies beyond the exact search and `first_disagreement_at_most` bounds it; `witness`
    a string of that length, `witness_gap` its gap) or "undecided" (`reason` "tolerance" or
    "budget"). The supremum of the gap over every length lies in [`sup_gap_lower` (a string
    attains it), `sup_gap_upper` (certified)]. Lengths ≤ `exact_up_to` were searched by the
    exact threshold (certified bound `exact_bound`), longer ones by the limit search
    (`limit_bound`, over `boxes` boxes)."""
    eps: float
    seed: int
    verdict: str
    view: dict
    first_disagreement: object
    first_disagreement_at_most: object
    witness: object
    witness_runs: object
    witness_gap: object
    sup_gap_lower: float
    sup_gap_upper: float
    exact_up_to: int
    exact_bound: float
    limit_bound: float
    tolerance: float
    reason: object
    boxes: int
    threshold_runs: int
    threshold_evaluations: int


@dataclasses.dataclass
class ProfileResult(Result):
    """The length profile of a one-layer pair, as `ltsim profile` computes it
    (docs/theory.md §14); every number is a certified bracket [lower, upper].

    `lengths` (1 … train_length, then a log grid up to max_length); per length the largest gap
    max_{|x| = T} ‖f(x) − g(x)‖_∞ in [`gap_lower` (a string attains it: `witness_runs[i]`, runs
    (tokens, counts)), `gap_upper` (certified)]; ε_train(n), the largest gap over lengths ≤ n, in
    [`train_gap_lower`, `train_gap_upper`] (NaN without n); the supremum over every length in
    [`sup_gap_lower` (attained by `sup_witness_runs`, of `sup_witness_length` tokens),
    `sup_gap_upper` (certified at every length)], `sup_status` "tolerance", "certify-undecided"
    or "runs"; their ratio sup/ε_train in [`ratio_lower`, `ratio_upper`]."""
    train_length: int
    max_length: int
    seed: int
    view: dict
    lengths: object
    gap_lower: object
    gap_upper: object
    witness_runs: list
    train_gap_lower: float
    train_gap_upper: float
    sup_gap_lower: float
    sup_gap_upper: float
    sup_witness_runs: object
    sup_witness_length: int
    sup_status: str
    certify_runs: int
    ratio_lower: float
    ratio_upper: float


@dataclasses.dataclass
class Bound(Result):
    """One of the paper's bounds (or a user expression) at the constants: `value` is the
    bound's number (a length N, or a rate; NaN where the bound does not apply to the pair,
    null in the CLI's JSON), `source` says "[paper]", "[ours]" or "[user]"."""
    name: str
    formula: str
    source: str
    note: str
    value: float


@dataclasses.dataclass
class Constants(Result):
    """The named constants of a model or pair (L, Delta, S, tau, gamma, p, C, gamma_pos, D, H
    and the run's eps, n, T, alpha0, G) and the registry's bounds evaluated at them."""
    constants: dict
    bounds: list


@dataclasses.dataclass
class ThresholdResult(Result):
    """The first disagreement of f and g up to `checked_up_to` (docs/theory.md §7.2).

    `first_disagreement`: the smallest length with a string where ‖f(x) − g(x)‖_∞ > ε, or
    None; exact (a certified lower bound on the training length N of Theorem 4.1) when
    `exhaustive` is True, otherwise found by the exhaustive-then-random search of two-layer
    pairs. `witness` is such a string (numpy array; `witness_runs` its (tokens, counts)),
    `gap` its gap, `recheck` its 50-digit re-evaluation. `max_gap_per_length[T − 1]` is the
    largest gap over the strings checked at length T (NaN where a length was covered by a
    certified cell bound only). `complete` is False when the evaluation budget stopped the
    search early."""
    method: str
    eps: float
    max_length: int
    seed: int
    view: dict
    first_disagreement: object
    gap: object
    witness: object
    witness_runs: object
    f_witness: object
    g_witness: object
    checked_up_to: int
    exhaustive: bool
    exhaustive_up_to: int
    samples_per_length: int
    evaluations: int
    recheck: object
    pruned: bool
    search_period: int
    statistics_total: int
    statistics_evaluated: int
    statistics_pruned: int
    cells: int
    cells_pruned: int
    max_pruned_bound: object
    complete: bool
    threads: int
    max_gap_per_length: np.ndarray


@dataclasses.dataclass
class Simulation(Result):
    """A constructed z: its tokens, its runs (tokens, counts), |z|, the construction's
    certified η (max over heads of ‖α_h(x) − α_h(z)‖₁; NaN when the method claims none), Θ of
    frequency matching, and a one-line detail."""
    method: str
    seed: int
    z: np.ndarray
    runs: tuple
    length: int
    eta: float
    theta: float
    detail: str


@dataclasses.dataclass
class ModelSide(Result):
    """One model's side of the sandwich: f(x), f(z), sim = ‖f(x) − f(z)‖_∞, L, γ, log₂ T_hard
    and the η measured from the counts (NaN when not applicable)."""
    on_x: np.ndarray
    on_z: np.ndarray
    sim: float
    lipschitz: float
    logit_margin: float
    log2_hardmax_length: float
    eta_achieved: float


@dataclasses.dataclass
class SandwichResult(Result):
    """The sandwich |f(x) − g(x)| ≤ sim_f + gap_z + sim_g on one x and its z
    (docs/theory.md §1): `holds` compares with a 1e-12 relative slack, `rate_holds` checks
    sim ≤ L·η for the construction's η (False when the method claims none). Every number is
    a measurement on this x."""
    f: ModelSide
    g: ModelSide
    gap_z: float
    gap_x: float
    x_length: int
    z_length: int
    method: str
    seed: int
    simulation: Simulation
    holds: bool
    rate_holds: bool

    @property
    def bound(self) -> float:
        """sim_f + gap_z + sim_g, the right-hand side of the sandwich."""
        return self.f.sim + self.gap_z + self.g.sim


@dataclasses.dataclass
class FuzzCase(Result):
    """One case of a campaign over a pair: its input (family, length, seed), method, |z|
    target, the measured terms, and each property checked (holds, observed, bound, ratio =
    observed/bound, the 50-digit recheck's status); `error` when the method refused."""
    index: int
    input: dict
    method: str
    target_length: int
    error: object
    sim_f: float
    sim_g: float
    gap_z: float
    gap_x: float
    z_length: int
    eta: float
    statistic: float
    properties: dict


@dataclasses.dataclass
class FuzzResult(Result):
    """A campaign over one pair: its seed, every case, and per property the cases where it
    applied, its refutations (after the recheck) and the worst observed/bound ratio."""
    seed: int
    cases: list
    summary: dict

    @property
    def refutations(self) -> int:
        """Refutations of the properties that state theorems (not the `sandwich` sanity check)."""
        return sum(v["refutations"] for k, v in self.summary.items() if k != "sandwich")


@dataclasses.dataclass
class FamilyParameter(Result):
    """A family's parameter: name, default, inclusive range, integer or not, help."""
    name: str
    default: float
    min: float
    max: float
    integer: bool
    help: str


@dataclasses.dataclass
class Family(Result):
    """A lower-bound family (docs/families.md): name, mechanism, which parameter T* grows
    with, and its parameters."""
    name: str
    summary: str
    parameters: str
    params: list


@dataclasses.dataclass
class FamilyMember(Result):
    """A built member: the pair (f, g), the ε its closed form is stated for, the closed
    form's first disagreement T* (certified by `threshold`), its formula and growth, the gap
    at T* and the supremum of the gap over all strings."""
    family: str
    values: dict
    f: object
    g: object
    eps: float
    first_disagreement: int
    closed_form: str
    growth: str
    gap_at_first_disagreement: float
    sup_gap: float
