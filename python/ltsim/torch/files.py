"""LimitTransformer ⇄ ltsim's JSON model file (ltsim-model v1) and safetensors (docs/python.md).

Tensor names are the model file's key paths: `embedding` [S, d], `positional` [Δ, d],
`layers.{l}.heads.{h}.qk` [d, d], `.ov` [d, d], `.bias` [τ+1], `layers.{l}.mlp.in` [m, d],
`.in_bias` [m], `.out` [d, m], `readout.weight` [k, d], `readout.bias` [k]. The safetensors
`__metadata__` holds "ltsim": the model file's JSON without those arrays, each layer's
`heads` replaced by its number of heads and `mlp` by true when the layer has one.
"""

from __future__ import annotations

import json
from typing import Dict

import numpy as np
import torch

from .. import safetensors
from .model import Config, LayerConfig, LimitTransformer

FORMAT = "ltsim-model"
VERSION = 1


def _array(t: torch.Tensor):
    return t.detach().to(torch.float64).cpu().numpy()


def tensors(model: LimitTransformer) -> Dict[str, np.ndarray]:
    """name → float64 array under the naming convention (factored heads multiplied out)."""
    out = {"embedding": _array(model.embedding), "positional": _array(model.positional)}
    for l, layer in enumerate(model.layers):
        for h, head in enumerate(layer.heads):
            qk, ov = head.matrices()
            out[f"layers.{l}.heads.{h}.qk"] = _array(qk)
            out[f"layers.{l}.heads.{h}.ov"] = _array(ov)
            out[f"layers.{l}.heads.{h}.bias"] = _array(head.bias)
        if layer.mlp is not None:
            out[f"layers.{l}.mlp.in"] = _array(getattr(layer.mlp, "in"))
            out[f"layers.{l}.mlp.in_bias"] = _array(layer.mlp.in_bias)
            out[f"layers.{l}.mlp.out"] = _array(layer.mlp.out)
    out["readout.weight"] = _array(model.readout.weight)
    out["readout.bias"] = _array(model.readout.bias)
    return out


def metadata(model: LimitTransformer) -> dict:
    """The model file's JSON without its arrays (the safetensors `ltsim` metadata)."""
    c = model.config
    doc = {"format": FORMAT, "version": VERSION}
    if c.name:
        doc["name"] = c.name
    doc.update(alphabet=c.alphabet, width=c.width, period=c.period, locality=c.locality,
               tie_tolerance=c.tie_tolerance)
    layers = []
    for layer in c.layers:
        entry = {"attention": layer.attention, "bias_scaling": layer.bias_scaling}
        if layer.attention == "finite":
            entry["precision_bits"] = layer.precision_bits
        entry["heads"] = layer.heads
        if layer.mlp > 0:
            entry["mlp"] = True
        layers.append(entry)
    doc["layers"] = layers
    doc["meta"] = c.meta
    return doc


def _rows(a: np.ndarray):
    return [[float(v) for v in row] for row in a]


def model_dict(model: LimitTransformer, cast: str = "F32") -> dict:
    """The model file as a dict. `cast` = "F32" rounds every weight to float32 first, so the
    JSON file and an F32 safetensors file describe the same model exactly."""
    t = tensors(model)
    if cast == "F32":
        t = {k: v.astype(np.float32).astype(np.float64) for k, v in t.items()}
    meta = metadata(model)
    doc = {k: meta[k] for k in meta if k not in ("layers", "meta")}
    doc["embedding"] = _rows(t["embedding"])
    doc["positional"] = _rows(t["positional"])
    doc["layers"] = []
    for l, entry in enumerate(meta["layers"]):
        layer = {k: v for k, v in entry.items() if k not in ("heads", "mlp")}
        layer["heads"] = [{"qk": _rows(t[f"layers.{l}.heads.{h}.qk"]),
                           "ov": _rows(t[f"layers.{l}.heads.{h}.ov"]),
                           "bias": [float(v) for v in t[f"layers.{l}.heads.{h}.bias"]]}
                          for h in range(entry["heads"])]
        if entry.get("mlp"):
            layer["mlp"] = {"in": _rows(t[f"layers.{l}.mlp.in"]),
                            "in_bias": [float(v) for v in t[f"layers.{l}.mlp.in_bias"]],
                            "out": _rows(t[f"layers.{l}.mlp.out"])}
        doc["layers"].append(layer)
    doc["readout"] = {"weight": _rows(t["readout.weight"]),
                      "bias": [float(v) for v in t["readout.bias"]]}
    doc["meta"] = meta["meta"]
    return doc


def _config(doc: dict, mlp_units) -> Config:
    layers = []
    for l, entry in enumerate(doc["layers"]):
        heads = entry["heads"] if isinstance(entry["heads"], int) else len(entry["heads"])
        layers.append(LayerConfig(heads=heads, attention=entry["attention"],
                                  bias_scaling=entry.get("bias_scaling", "none"),
                                  precision_bits=entry.get("precision_bits"),
                                  mlp=mlp_units(l, entry)))
    return Config(alphabet=doc["alphabet"], width=doc["width"], period=doc["period"],
                  locality=doc["locality"], layers=layers, outputs=1,
                  tie_tolerance=doc.get("tie_tolerance", 1e-9), name=doc.get("name", ""),
                  meta=doc.get("meta", {}))


def _build(doc: dict, t: Dict[str, np.ndarray], dtype) -> LimitTransformer:
    def units(l, entry):
        return t[f"layers.{l}.mlp.in"].shape[0] if entry.get("mlp") else 0
    config = _config(doc, units)
    config.outputs = t["readout.weight"].shape[0]
    model = LimitTransformer(config).to(dtype)
    state = model.state_dict()
    if set(state) != set(t):
        raise ValueError(f"tensors {sorted(set(t) ^ set(state))} do not match the configuration")
    with torch.no_grad():
        for name, value in t.items():
            if tuple(state[name].shape) != value.shape:
                raise ValueError(f"{name}: shape {value.shape}, expected {tuple(state[name].shape)}")
            state[name].copy_(torch.from_numpy(np.asarray(value, dtype=np.float64)))
    return model


def from_model_dict(doc: dict, dtype=torch.float64) -> LimitTransformer:
    """A LimitTransformer (direct qk/ov heads) from a model-file dict."""
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise ValueError(f"not an {FORMAT} version {VERSION} document")
    t = {"embedding": np.array(doc["embedding"], dtype=np.float64),
         "positional": np.array(doc["positional"], dtype=np.float64),
         "readout.weight": np.array(doc["readout"]["weight"], dtype=np.float64),
         "readout.bias": np.array(doc["readout"]["bias"], dtype=np.float64)}
    for l, layer in enumerate(doc["layers"]):
        for h, head in enumerate(layer["heads"]):
            for key in ("qk", "ov", "bias"):
                t[f"layers.{l}.heads.{h}.{key}"] = np.array(head[key], dtype=np.float64)
        if "mlp" in layer:
            for key in ("in", "in_bias", "out"):
                t[f"layers.{l}.mlp.{key}"] = np.array(layer["mlp"][key], dtype=np.float64)
    return _build(doc, t, dtype)


def save_json(model: LimitTransformer, path: str, cast: str = "F32") -> None:
    with open(path, "w") as out:
        json.dump(model_dict(model, cast), out, indent=1)
        out.write("\n")


def load_json(path: str, dtype=torch.float64) -> LimitTransformer:
    with open(path) as f:
        return from_model_dict(json.load(f), dtype)


def save_safetensors(model: LimitTransformer, path: str, dtype: str = "F32") -> None:
    """Writes the convention's tensors in `dtype` (F32 or F64) with the `ltsim` metadata."""
    meta = json.dumps(metadata(model), separators=(",", ":"))
    safetensors.write(path, tensors(model), {"ltsim": meta}, dtype)


def load_safetensors(path: str, dtype=torch.float64) -> LimitTransformer:
    t, meta = safetensors.read(path)
    if "ltsim" not in meta:
        raise safetensors.SafetensorsError(f"{path}: __metadata__.ltsim: missing key")
    doc = json.loads(meta["ltsim"])
    return _build(doc, t, dtype)


def load(path: str, dtype=torch.float64) -> LimitTransformer:
    """A model from a .safetensors or JSON model file."""
    return load_safetensors(path, dtype) if path.endswith(".safetensors") else load_json(path, dtype)
