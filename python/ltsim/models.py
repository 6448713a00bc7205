"""Models: reading and writing model files, sizes and constants, exact evaluation, the
constructed tasks and lower-bound families, and conversion to and from ltsim.torch."""

from __future__ import annotations

import json
import os
from typing import Iterable, Optional

import numpy as np

from . import _ltsim
from ._errors import call
from ._results import (Bound, Constants, Family, FamilyMember, FamilyParameter, LayerInfo,
                       ModelInfo)


class Model:
    """A limit transformer held by ltsim's C++ libraries (docs/model.md).

    Read one with `load_model`, build one with `construct`, or convert a trained
    `ltsim.torch.LimitTransformer` with `Model.from_torch`. Models are immutable.

    >>> f = ltsim.load_model("corpus/models/pair/f.json")
    >>> f.alphabet, f.period, f.locality, f.outputs
    (3, 1, 0, 1)
    """

    def __init__(self, native):
        self._native = native

    # ---- sizes ----
    @property
    def name(self) -> str:
        """The model's `name` ("" when the file has none)."""
        return self._native.name

    @property
    def alphabet(self) -> int:
        """S, the alphabet size: tokens are 0 … S − 1."""
        return self._native.alphabet

    @property
    def width(self) -> int:
        """d, the width of the residual stream."""
        return self._native.width

    @property
    def period(self) -> int:
        """Δ, the period of the positional embeddings."""
        return self._native.period

    @property
    def locality(self) -> int:
        """τ, the reach of the local bias."""
        return self._native.locality

    @property
    def outputs(self) -> int:
        """k, the length of the output vector."""
        return self._native.outputs

    @property
    def tie_tolerance(self) -> float:
        """θ of hardmax ties and of the logit margin."""
        return self._native.tie_tolerance

    @property
    def layers(self) -> list:
        """One `LayerInfo` a layer: attention, bias scaling, p, heads, MLP."""
        return [LayerInfo(**layer) for layer in self._native.layers]

    @property
    def meta(self) -> dict:
        """The free-form `meta` object of the model file."""
        return json.loads(self._native.meta_json)

    def __repr__(self) -> str:
        modes = "/".join(layer["attention"] for layer in self._native.layers)
        return (f"Model({self.name!r}, S={self.alphabet}, d={self.width}, Δ={self.period}, "
                f"τ={self.locality}, {len(self._native.layers)} layer(s) {modes}, "
                f"{self.outputs} output(s))")

    # ---- evaluation ----
    def eval(self, x, progress=None) -> np.ndarray:
        """f(x), the output vector, computed exactly by the fastest evaluator that applies
        (one pass for one-layer models, any length; two-layer models stream too).

        `x` is a 1-D integer array of tokens, a (tokens, counts) pair of run arrays, or a
        string spec for strings that do not fit in memory: a file path (text, .u8, .u16),
        "text:0^1000 1 1" or "iid:length=N,alphabet=S,seed=K". `progress(done, total)` is
        called every 2^20 tokens read. Ctrl-C interrupts. Bad tokens raise InputError.

        >>> f = ltsim.load_model("corpus/models/pair/f.json")
        >>> f.eval(np.array([0, 1, 1, 0]))
        array([0.5])
        >>> float(f.eval("iid:length=1000000,alphabet=3,seed=1")[0]) > 0.4
        True
        """
        return call(_ltsim.evaluate, {}, self._native, x, progress)

    def eval_many(self, strings: Iterable, progress=None) -> np.ndarray:
        """f(x) for each string of `strings` (anything `eval` takes): a [len, k] array.

        >>> f = ltsim.load_model("corpus/models/pair/f.json")
        >>> f.eval_many([[0, 1], [0, 0, 1, 1, 1, 1]])
        array([[0.5       ],
               [0.33333333]])
        """
        rows = [self.eval(x, progress) for x in strings]
        return np.array(rows).reshape(len(rows), self.outputs)

    # ---- constants ----
    def info(self) -> ModelInfo:
        """Sizes and constants γ, T_hard, L, γ_pos, C(f) and head regimes (docs/model.md §4),
        as `ltsim info` reports them.

        >>> ltsim.load_model("corpus/models/modp_task_p3_k1.json").info().logit_margin
        1.0
        """
        return ModelInfo(**self._native.info())

    # ---- files and conversions ----
    def to_json(self) -> str:
        """The model file's JSON text (ltsim-model, version 1; 17 significant digits, so it
        round-trips exactly).

        >>> print(ltsim.load_model("corpus/models/pair/f.json").to_json()[:45])
        {
          "format": "ltsim-model",
          "version": 1,
        """
        return self._native.to_json()

    def to_dict(self) -> dict:
        """The model file as a dict (`json.loads(to_json())`).

        >>> ltsim.load_model("corpus/models/pair/g.json").to_dict()["layers"][0]["precision_bits"]
        8
        """
        return json.loads(self.to_json())

    @classmethod
    def from_json(cls, text: str, source: str = "<json>") -> "Model":
        """A model from JSON text (or a dict) in the model file format; errors name `source`.

        >>> g = ltsim.load_model("corpus/models/pair/g.json")
        >>> ltsim.Model.from_json(g.to_json()).to_json() == g.to_json()
        True
        """
        if isinstance(text, dict):
            text = json.dumps(text)
        return cls(call(_ltsim.parse_model, {}, text, source))

    def save(self, path: str, dtype: str = "F64") -> None:
        """Writes the model to `path`: a JSON model file, or a safetensors file when the path
        ends in ".safetensors" (`dtype` "F64" keeps every weight exactly, "F32" rounds them).

        >>> import tempfile, os
        >>> f = ltsim.load_model("corpus/models/pair/f.json")
        >>> with tempfile.TemporaryDirectory() as d:
        ...     f.save(os.path.join(d, "f.safetensors"))
        ...     ltsim.load_model(os.path.join(d, "f.safetensors")).to_json() == f.to_json()
        True
        """
        path = os.fspath(path)
        if path.endswith(".safetensors"):
            from . import safetensors
            tensors, metadata = _safetensors_parts(self.to_dict())
            try:
                safetensors.write(path, tensors, {"ltsim": metadata}, dtype)
            except OSError as error:
                raise _ltsim.InputError(f"{path}: cannot write ({error.strerror})") from None
        else:
            call(self._native.write, {}, path)

    @classmethod
    def from_torch(cls, module, cast: str = "F32") -> "Model":
        """The model of a trained `ltsim.torch.LimitTransformer`, in memory. `cast` "F32"
        rounds every weight to float32 first (what an F32 safetensors export holds), "F64"
        keeps the module's doubles.

        >>> from ltsim.torch import Config, LayerConfig, LimitTransformer
        >>> import torch; _ = torch.manual_seed(1)
        >>> m = LimitTransformer(Config(alphabet=2, width=3, layers=[LayerConfig(heads=1)]))
        >>> ltsim.Model.from_torch(m).alphabet
        2
        """
        from .torch import files
        doc = files.model_dict(module, cast=cast)
        return cls.from_json(json.dumps(doc), "<torch module>")

    def to_torch(self, dtype=None):
        """This model as an `ltsim.torch.LimitTransformer` (float64 unless `dtype`), for
        training further or comparing with PyTorch's forward.

        >>> f = ltsim.load_model("corpus/models/pair/f.json")
        >>> module = f.to_torch()
        >>> import torch
        >>> float(module(torch.tensor([[0, 1, 1, 0]]), attention="hardmax")[0, 0])
        0.5
        """
        import torch
        from .torch import files
        return files.from_model_dict(self.to_dict(), dtype or torch.float64)


def load_model(path) -> Model:
    """Reads a model file: ltsim's JSON model format or a .safetensors file written by
    ltsim.torch (docs/formats.md §1, docs/python.md). Errors are InputError with the command
    line's one-line message.

    >>> ltsim.load_model("corpus/models/pair/g.json")
    Model('pair-g: f learned imperfectly, 8-bit attention, even positions leak in', S=3, d=6, Δ=2, τ=1, 1 layer(s) finite, 1 output(s))
    >>> ltsim.load_model("no/such/file.json")
    Traceback (most recent call last):
    ...
    ltsim.InputError: no/such/file.json: cannot open model file
    """
    return Model(call(_ltsim.read_model, {}, os.fspath(path)))


def _safetensors_parts(doc: dict):
    """The tensors and `ltsim` metadata of a model file dict (docs/python.md)."""
    tensors = {"embedding": np.array(doc["embedding"], dtype=np.float64).reshape(
                   doc["alphabet"], doc["width"]),
               "positional": np.array(doc["positional"], dtype=np.float64).reshape(
                   doc["period"], doc["width"])}
    layers = []
    for l, layer in enumerate(doc["layers"]):
        entry = {k: v for k, v in layer.items() if k not in ("heads", "mlp")}
        entry["heads"] = len(layer["heads"])
        for h, head in enumerate(layer["heads"]):
            for key in ("qk", "ov", "bias"):
                tensors[f"layers.{l}.heads.{h}.{key}"] = np.array(head[key], dtype=np.float64)
        if "mlp" in layer:
            entry["mlp"] = True
            for key in ("in", "in_bias", "out"):
                tensors[f"layers.{l}.mlp.{key}"] = np.array(layer["mlp"][key], dtype=np.float64)
        layers.append(entry)
    tensors["readout.weight"] = np.array(doc["readout"]["weight"], dtype=np.float64).reshape(
        -1, doc["width"])
    tensors["readout.bias"] = np.array(doc["readout"]["bias"], dtype=np.float64)
    meta = {k: v for k, v in doc.items()
            if k not in ("embedding", "positional", "readout", "layers")}
    meta["layers"] = layers
    return tensors, json.dumps(meta, separators=(",", ":"))


def constants(f: Model, g: Optional[Model] = None, eps: float = 0.1, z_length: float = 1000,
              x_length: float = 0, alpha0: float = 1.0, G: float = 1.0,
              bounds: Iterable[str] = ()) -> Constants:
    """The constants of a model or a pair and the paper's bounds at them, as `ltsim
    constants` computes them: the registry (Theorem 4.1's length, Theorem 4.2, Theorem 5.2,
    Lemma 5.3's rate, the frequency construction's proven length) and any `bounds`
    expressions over the constants' names (muParser syntax). `x_length` 0 means n.

    >>> f = ltsim.load_model("corpus/models/pair/f.json")
    >>> g = ltsim.load_model("corpus/models/pair/g.json")
    >>> c = ltsim.constants(f, g, eps=0.01, bounds=["L/eps"])
    >>> c.constants["Delta"], c.bounds[-1].source
    (2.0, '[user]')
    """
    if not (0 < eps < 1):
        raise _ltsim.InputError(f"eps: must be in (0, 1), not {eps}")
    if not z_length >= 1:
        raise _ltsim.InputError(f"z_length: must be at least 1, not {z_length}")
    if x_length < 0:
        raise _ltsim.InputError(f"x_length: must be positive (0: z_length), not {x_length}")
    if not alpha0 > 0:
        raise _ltsim.InputError(f"alpha0: must be positive, not {alpha0}")
    if G < 0:
        raise _ltsim.InputError(f"G: must be ≥ 0, not {G}")
    c = _ltsim.model_constants(f._native, g._native if g is not None else None)
    c.update(eps=float(eps), n=float(z_length), T=float(x_length or z_length),
             alpha0=float(alpha0), G=float(G))
    rows = [Bound(**row) for row in _ltsim.bounds(c)]
    for expression in bounds:
        value = call(_ltsim.evaluate_bound, {}, expression, c)
        if not np.isfinite(value):
            raise _ltsim.InputError(f"bound '{expression}': evaluates to {value}, not a finite number")
        rows.append(Bound("user", expression, "[user]", "", value))
    return Constants(constants=c, bounds=rows)


def construct(task: str, **params) -> Model:
    """A hand-built model of one of the paper's tasks (docs/theory.md §5–§6):

    - "simple-task": omega (ω > 0), accuracy (default 1e-3): sin(ω·(c₀ − c₁)/(c₀ + c₁));
    - "modp-task": p, k (a residue mod p), precision_bits (0: hardmax);
    - "kgram": alphabet, k, scale (β, 8), no_match ("most-matches" or "uniform"),
      copy_bias (φ, 2), sharpen (False): the two-layer in-context k-gram model.

    >>> ltsim.construct("simple-task", omega=4).eval(np.array([0, 0, 1]))   # sin(4/3) ± 1e-3
    array([0.971...])
    >>> ltsim.construct("modp-task", p=3, k=5)
    Traceback (most recent call last):
    ...
    ltsim.InputError: k 5: is not a residue modulo p = 3
    """
    def take(name, default=None):
        value = params.pop(name, default)
        if value is None:
            raise _ltsim.InputError(f"construct {task}: {name} is required")
        return value
    if task == "simple-task":
        args = (float(take("omega")), float(take("accuracy", 1e-3)))
        native = _ltsim.simple_task
    elif task == "modp-task":
        args = (int(take("p")), int(take("k", 0)), int(take("precision_bits", 0)))
        native = _ltsim.modp_task
    elif task == "kgram":
        args = (int(take("alphabet", 2)), int(take("k")), float(take("scale", 8.0)),
                str(take("no_match", "most-matches")), float(take("copy_bias", 2.0)),
                bool(take("sharpen", False)))
        native = _ltsim.kgram
    else:
        raise _ltsim.InputError(f"construct: unknown task '{task}' (simple-task, modp-task, kgram)")
    if params:
        raise _ltsim.InputError(f"construct {task}: unknown parameter '{sorted(params)[0]}'")
    return Model(call(native, {}, *args))


def families() -> list:
    """The lower-bound families of docs/families.md and the tightness pairs of
    docs/tightness.md §2, in registry order.

    >>> [family.name for family in ltsim.families()]  # doctest: +NORMALIZE_WHITESPACE
    ['bump', 'precision', 'nested', 'induction', 'leak', 'offset-bump', 'margin',
     'positional-margin', 'two-layer-margin', 'average-bump']
    """
    return [Family(name=f["name"], summary=f["summary"], parameters=f["parameters"],
                   params=[FamilyParameter(**p) for p in f["params"]])
            for f in _ltsim.families()]


def family(name: str, **values) -> FamilyMember:
    """Builds a member of a lower-bound family: two models whose first disagreement T* has a
    closed form (docs/families.md); unspecified parameters take their defaults.

    >>> member = ltsim.family("bump", slope=2.71, period=2)
    >>> member.first_disagreement, member.eps
    (38, 0.05)
    """
    d = call(_ltsim.family_member, {}, name, {k: float(v) for k, v in values.items()})
    d["f"], d["g"] = Model(d["f"]), Model(d["g"])
    return FamilyMember(**d)
