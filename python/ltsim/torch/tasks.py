"""The paper's three tasks (docs/theory.md §5–§6): string distributions and exact targets.

The targets are the functions `ltsim construct simple-task|modp-task|kgram` approximates
(src/construct/tasks.cpp, src/construct/kgram.cpp); every generator is a pure function of its seed.
"""

from __future__ import annotations

import dataclasses
from typing import List

import numpy as np


@dataclasses.dataclass
class Task:
    """A task: its name, complexity parameters, alphabet, outputs and `construct` flags."""

    name: str  # "simple-task", "modp-task" or "kgram"
    omega: float = 1.0
    p: int = 2
    residue: int = 0
    alphabet: int = 2
    k: int = 1

    @property
    def outputs(self) -> int:
        return self.alphabet if self.name == "kgram" else 1

    @property
    def symbols(self) -> int:
        return self.alphabet if self.name == "kgram" else 2

    def construct_args(self) -> List[str]:
        """Arguments of `ltsim construct` for this task's target model."""
        if self.name == "simple-task":
            return ["simple-task", "--omega", repr(float(self.omega)), "--accuracy", "1e-4"]
        if self.name == "modp-task":
            return ["modp-task", "--p", str(self.p), "--k", str(self.residue)]
        return ["kgram", "--alphabet", str(self.alphabet), "--k", str(self.k)]

    def target_model(self):
        """This task's target as an `ltsim.Model` (what `ltsim construct` writes for
        construct_args())."""
        import ltsim
        if self.name == "simple-task":
            return ltsim.construct("simple-task", omega=float(self.omega), accuracy=1e-4)
        if self.name == "modp-task":
            return ltsim.construct("modp-task", p=self.p, k=self.residue)
        return ltsim.construct("kgram", alphabet=self.alphabet, k=self.k)

    def label(self) -> str:
        return {"simple-task": f"omega={self.omega:g}", "modp-task": f"p={self.p}",
                "kgram": f"S={self.alphabet},k={self.k}"}[self.name]

    def strings(self, rng: np.random.Generator, batch: int, length: int) -> np.ndarray:
        """[batch, length] int64 tokens: Bernoulli(q) with q ~ U(0, 1) per string for the
        one-layer tasks (so the target's argument covers its range); for k-gram a random
        order-k Markov chain per string (transitions ~ Dirichlet(1/2), first k tokens uniform)."""
        if self.name != "kgram":
            q = rng.uniform(0.0, 1.0, size=(batch, 1))
            return (rng.uniform(size=(batch, length)) < q).astype(np.int64)
        return markov_strings(rng, batch, length, self.alphabet, self.k)

    def target(self, x: np.ndarray) -> np.ndarray:
        """f*(x) for a [batch, length] array: [batch, outputs]."""
        if self.name == "simple-task":
            u = (x == 0).mean(axis=1) - (x == 1).mean(axis=1)
            return np.sin(self.omega * u)[:, None]
        if self.name == "modp-task":
            return modp_target(x, self.p, self.residue)[:, None]
        return kgram_target(x, self.alphabet, self.k)


def markov_strings(rng, batch, length, alphabet, k, concentration=0.5):
    contexts = alphabet ** k
    table = rng.dirichlet(np.full(alphabet, concentration), size=(batch, contexts))
    cumulative = np.cumsum(table, axis=2)
    x = np.empty((batch, length), dtype=np.int64)
    x[:, :min(k, length)] = rng.integers(0, alphabet, size=(batch, min(k, length)))
    rows = np.arange(batch)
    context = np.zeros(batch, dtype=np.int64)
    for t in range(min(k, length)):
        context = (context * alphabet + x[:, t]) % contexts
    draws = rng.uniform(size=(batch, length))
    for t in range(k, length):
        nxt = (draws[:, t, None] > cumulative[rows, context]).sum(axis=1)
        x[:, t] = np.minimum(nxt, alphabet - 1)
        context = (context * alphabet + x[:, t]) % contexts
    return x


def modp_target(x: np.ndarray, p: int, residue: int) -> np.ndarray:
    """The share of 1s among positions j ≡ residue (mod p), j = 1..T; when no position has
    that residue the constructed model averages every position, and so does this."""
    positions = np.arange(1, x.shape[1] + 1)
    chosen = positions % p == residue
    if not chosen.any():
        chosen = np.ones_like(chosen)
    return (x[:, chosen] == 1).mean(axis=1)


def kgram_target(x: np.ndarray, alphabet: int, k: int) -> np.ndarray:
    """The in-context k-gram estimator with the `most-matches` policy (include/ltsim/construct/
    kgram.h): the average of e_{x_t} over the positions t ∈ [k+1, T] whose k preceding tokens
    agree with the current context x_{T−k+1..T} in the most slots; uniform when T ≤ k."""
    batch, length = x.shape
    if length <= k:
        return np.full((batch, alphabet), 1.0 / alphabet)
    t = np.arange(k + 1, length + 1)  # 1-based candidate positions
    matches = np.zeros((batch, len(t)), dtype=np.int64)
    for s in range(1, k + 1):
        matches += x[:, t - s - 1] == x[:, [length - s]]
    best = matches == matches.max(axis=1, keepdims=True)
    onehot = np.eye(alphabet)[x[:, t - 1]]  # [batch, candidates, S]
    return (best[:, :, None] * onehot).sum(axis=1) / best.sum(axis=1, keepdims=True)
