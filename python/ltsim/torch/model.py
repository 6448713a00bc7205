"""A limit transformer as a torch.nn.Module, with the forward pass of docs/formats.md.

The semantics are those of ltsim's reference evaluator (src/eval/reference.cpp), position by
position: y⁰_j = E[x_j] + P[j mod Δ] (positions j = 1..T), per head the logit
a_ij = y_jᵀ M y_i, plus β(i)·φ[i − j] when i − j ≤ τ (β = 1 or ln i), causal; softmax,
hardmax (every key within θ of the maximum, uniformly) or p-bit finite attention
(i^(a − a*) rounded to 0 at or below 2^(−p)); u_i = y_i + Σ_h O_h Σ_j α_ij y_j;
y_i = u_i + B·ReLU(A u_i + b); f(x) = W y_T + c.

Parameter names are the tensor names of docs/python.md (`embedding`, `positional`,
`layers.{l}.heads.{h}.qk`, …, `readout.bias`), so `state_dict()` of a model with direct heads
is exactly what the safetensors file holds.
"""

from __future__ import annotations

import dataclasses
import math
from typing import List, Optional

import torch
from torch import nn

ATTENTION_MODES = ("softmax", "hardmax", "finite")
BIAS_SCALINGS = ("none", "log")

# Largest query-by-key block one attention step materialises (elements): long inputs are
# processed in query chunks so memory stays bounded while time stays quadratic.
_MAX_BLOCK = 1 << 24


@dataclasses.dataclass
class LayerConfig:
    """One layer: its heads, attention mode, bias scaling and optional ReLU MLP."""

    heads: int = 1
    attention: str = "softmax"
    bias_scaling: str = "none"
    precision_bits: Optional[int] = None  # p, only for attention == "finite"
    mlp: int = 0  # hidden units m of the ReLU MLP; 0 = no MLP
    rank: Optional[int] = None  # Q/K/V/O factors of this rank instead of qk/ov (training only)

    def check(self, where: str) -> None:
        if self.attention not in ATTENTION_MODES:
            raise ValueError(f"{where}.attention: expected one of {ATTENTION_MODES}")
        if self.bias_scaling not in BIAS_SCALINGS:
            raise ValueError(f"{where}.bias_scaling: expected one of {BIAS_SCALINGS}")
        if (self.attention == "finite") != (self.precision_bits is not None):
            raise ValueError(f"{where}.precision_bits: required for finite attention only")
        if self.precision_bits is not None and self.precision_bits < 1:
            raise ValueError(f"{where}.precision_bits: must be at least 1")
        if self.heads < 0 or self.mlp < 0:
            raise ValueError(f"{where}: heads and mlp must be ≥ 0")


@dataclasses.dataclass
class Config:
    """Sizes of a limit transformer (the model file's top-level keys)."""

    alphabet: int
    width: int
    period: int = 1
    locality: int = 0
    layers: List[LayerConfig] = dataclasses.field(default_factory=lambda: [LayerConfig()])
    outputs: int = 1
    tie_tolerance: float = 1e-9
    name: str = ""
    meta: dict = dataclasses.field(default_factory=dict)
    copy_bias_init: float = 0.0  # initial φ[h + 1] of first-layer head h (0 = none); training only

    def check(self) -> None:
        for key in ("alphabet", "width", "period", "outputs"):
            if getattr(self, key) < 1:
                raise ValueError(f"{key}: must be at least 1")
        if self.locality < 0:
            raise ValueError("locality: must be at least 0")
        if not self.layers:
            raise ValueError("layers: must have at least one layer")
        if not (self.tie_tolerance >= 0 and math.isfinite(self.tie_tolerance)):
            raise ValueError("tie_tolerance: must be finite and at least 0")
        for l, layer in enumerate(self.layers):
            layer.check(f"layers[{l}]")


class Head(nn.Module):
    """One head: M = `qk` (d×d), O = `ov` (d×d), τ+1 local biases φ (`bias`).

    With a rank r, M = Kᵀ Q and O = O_f V from factors `q`, `k`, `v` (r×d) and `o` (d×r);
    export writes the products, so files always hold `qk` and `ov`.
    """

    def __init__(self, width: int, locality: int, rank: Optional[int]):
        super().__init__()
        self.rank = rank
        scale = 1.0 / math.sqrt(width)
        if rank is None:
            self.qk = nn.Parameter(torch.randn(width, width) * scale)
            self.ov = nn.Parameter(torch.randn(width, width) * scale)
        else:
            for key in ("q", "k", "v"):
                self.register_parameter(key, nn.Parameter(torch.randn(rank, width) * scale))
            self.o = nn.Parameter(torch.randn(width, rank) / math.sqrt(rank))
        self.bias = nn.Parameter(torch.zeros(locality + 1))

    def matrices(self):
        """(M, O) = (qk, ov), multiplied out from the factors when the head has them."""
        if self.rank is None:
            return self.qk, self.ov
        return self.k.t() @ self.q, self.o @ self.v


class Mlp(nn.Module):
    """y = u + B·ReLU(A u + b) with A = `in` (m×d), b = `in_bias` (m), B = `out` (d×m)."""

    def __init__(self, width: int, units: int):
        super().__init__()
        # `in` is a Python keyword, hence register_parameter and getattr.
        self.register_parameter("in", nn.Parameter(torch.randn(units, width) / math.sqrt(width)))
        self.in_bias = nn.Parameter(torch.zeros(units))
        self.out = nn.Parameter(torch.randn(width, units) / math.sqrt(units))

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        return u + torch.relu(u @ getattr(self, "in").t() + self.in_bias) @ self.out.t()


class Layer(nn.Module):
    def __init__(self, config: Config, layer: LayerConfig):
        super().__init__()
        self.config = layer
        self.heads = nn.ModuleList(
            Head(config.width, config.locality, layer.rank) for _ in range(layer.heads))
        self.mlp = Mlp(config.width, layer.mlp) if layer.mlp > 0 else None


class Readout(nn.Module):
    def __init__(self, width: int, outputs: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(outputs, width) * (0.1 / math.sqrt(width)))
        self.bias = nn.Parameter(torch.zeros(outputs))


class LimitTransformer(nn.Module):
    """f(x) for a batch of token strings of one length: `forward(x)` with x a LongTensor
    [B, T] of tokens in [0, S) returns [B, k]. `attention` overrides every layer's mode
    ("softmax" for training, "hardmax" or "finite" for evaluation; finite needs
    `precision_bits`)."""

    def __init__(self, config: Config):
        super().__init__()
        config.check()
        self.config = config
        self.embedding = nn.Parameter(torch.randn(config.alphabet, config.width))
        self.positional = nn.Parameter(torch.randn(config.period, config.width) * 0.5)
        self.layers = nn.ModuleList(Layer(config, layer) for layer in config.layers)
        self.readout = Readout(config.width, config.outputs)
        if config.copy_bias_init:
            # Head h of the first layer starts attending to the key h + 1 back (its bias
            # φ[h + 1]), like the position-dominated copy heads of docs/theory.md §5.
            with torch.no_grad():
                for h, head in enumerate(self.layers[0].heads):
                    if h + 1 <= config.locality:
                        head.bias[h + 1] = config.copy_bias_init

    def forward(self, x: torch.Tensor, attention: Optional[str] = None,
                precision_bits: Optional[int] = None) -> torch.Tensor:
        if x.dim() != 2 or x.shape[1] == 0:
            raise ValueError("x must be a [batch, length] tensor of tokens with length ≥ 1")
        if x.min() < 0 or x.max() >= self.config.alphabet:
            raise ValueError(f"tokens must lie in [0, {self.config.alphabet})")
        length = x.shape[1]
        dtype = self.embedding.dtype
        positions = torch.arange(1, length + 1, device=x.device)
        y = self.embedding[x] + self.positional[positions % self.config.period]
        for l, layer in enumerate(self.layers):
            last = l + 1 == len(self.layers)
            # The last layer is read out only at position T.
            queries = torch.tensor([length - 1], device=x.device) if last else positions - 1
            y = self._layer(layer, y, queries, attention, precision_bits, dtype)
        return y[:, -1, :] @ self.readout.weight.t() + self.readout.bias

    def _layer(self, layer: Layer, y, queries, attention, precision_bits, dtype):
        mode = attention or layer.config.attention
        bits = precision_bits if precision_bits is not None else layer.config.precision_bits
        if mode not in ATTENTION_MODES:
            raise ValueError(f"attention: expected one of {ATTENTION_MODES}")
        if mode == "finite" and bits is None:
            raise ValueError("finite attention needs precision_bits")
        matrices = [head.matrices() for head in layer.heads]
        chunk = max(1, _MAX_BLOCK // max(1, y.shape[0] * y.shape[1]))
        outputs = []
        for start in range(0, len(queries), chunk):
            q = queries[start:start + chunk]
            y_q = y[:, q, :]
            u = y_q
            for head, (qk, ov) in zip(layer.heads, matrices):
                weights = self._weights(layer, head, qk, y, y_q, q, mode, bits, dtype)
                u = u + (weights @ y) @ ov.t()
            outputs.append(layer.mlp(u) if layer.mlp is not None else u)
        return torch.cat(outputs, dim=1)

    def _weights(self, layer, head, qk, y, y_q, q, mode, bits, dtype):
        """α_ij for queries q (0-based) over every key j, normalised; 0 for j > i."""
        length = y.shape[1]
        logits = (y_q @ qk.t()) @ y.transpose(1, 2)  # a_ij = y_jᵀ M y_i
        i = (q + 1).to(dtype)  # 1-based query positions
        beta = torch.log(i) if layer.config.bias_scaling == "log" else torch.ones_like(i)
        back = q[:, None] - torch.arange(length, device=y.device)[None, :]  # i − j
        local = (back >= 0) & (back <= self.config.locality)
        phi = head.bias[back.clamp(0, self.config.locality)]
        logits = logits + torch.where(local, phi * beta[:, None], torch.zeros_like(phi))
        causal = back >= 0
        logits = logits.masked_fill(~causal, -math.inf)
        if mode == "softmax":
            return torch.softmax(logits, dim=-1)
        a_max = logits.max(dim=-1, keepdim=True).values
        if mode == "hardmax":
            w = (logits >= a_max - self.config.tie_tolerance).to(dtype)
        else:
            log2_w = torch.log2(i)[:, None] * (logits - a_max)
            w = torch.where(log2_w <= -bits, torch.zeros_like(log2_w), torch.exp2(log2_w))
        w = w.masked_fill(~causal, 0.0)  # 0·(−∞) at i = 1 would be NaN
        return w / w.sum(dim=-1, keepdim=True)
