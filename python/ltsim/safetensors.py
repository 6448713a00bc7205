"""A small safetensors writer and strict reader (no safetensors package in Debian 12).

Layout (docs/python.md): 8 bytes little-endian N, then N bytes of JSON header, then the data
buffer. The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}
(byte offsets into the data buffer, row-major, little-endian) and may hold "__metadata__", an
object of string values. Only F32 and F64 are written and read here.
"""

from __future__ import annotations

import json
import struct
from typing import Dict, Tuple

import numpy as np

DTYPES = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8")}
MAX_HEADER = 100 << 20  # bytes; the C++ reader has the same limit


class SafetensorsError(ValueError):
    """A malformed file: the message names the file and the tensor or key."""


def write(path: str, tensors: Dict[str, np.ndarray], metadata: Dict[str, str],
          dtype: str = "F32") -> None:
    """Writes `tensors` (name → array) in the given dtype, in name order, header padded with
    spaces to a multiple of 8 bytes so every tensor starts 8-byte aligned."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {sorted(DTYPES)}")
    header = {"__metadata__": dict(metadata)}
    chunks = []
    offset = 0
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name], dtype=DTYPES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(np.shape(tensors[name])),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as out:
        out.write(struct.pack("<Q", len(text)))
        out.write(text)
        for data in chunks:
            out.write(data)


def _fail(path: str, where: str, rule: str):
    raise SafetensorsError(f"{path}: {where}: {rule}")


def _no_duplicates(path: str):
    def hook(pairs):
        keys = [k for k, _ in pairs]
        for k in keys:
            if keys.count(k) > 1:
                _fail(path, k, "duplicate key")
        return dict(pairs)
    return hook


def read(path: str) -> Tuple[Dict[str, np.ndarray], Dict[str, str]]:
    """(tensors as float64 arrays, metadata). Refuses dtypes other than F32/F64, shapes that do
    not match the byte ranges, ranges outside the data buffer or overlapping each other."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        _fail(path, "header", "file shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > MAX_HEADER or n > len(blob) - 8:
        _fail(path, "header", f"header length {n} exceeds the file or {MAX_HEADER} bytes")
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"), object_pairs_hook=_no_duplicates(path))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        _fail(path, "header", f"invalid JSON: {error}")
    if not isinstance(header, dict):
        _fail(path, "header", "expected a JSON object")
    data = memoryview(blob)[8 + n:]
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        _fail(path, "__metadata__", "expected an object of strings")
    tensors = {}
    ranges = []
    for name, entry in header.items():
        if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
            _fail(path, name, "expected exactly the keys dtype, shape, data_offsets")
        if entry["dtype"] not in DTYPES:
            _fail(path, f"{name}.dtype", f"unsupported dtype {entry['dtype']!r} (F32 or F64)")
        shape, offsets = entry["shape"], entry["data_offsets"]
        if not (isinstance(shape, list) and all(type(s) is int and s >= 0 for s in shape)):
            _fail(path, f"{name}.shape", "expected a list of non-negative integers")
        if not (isinstance(offsets, list) and len(offsets) == 2
                and all(type(o) is int for o in offsets) and 0 <= offsets[0] <= offsets[1]):
            _fail(path, f"{name}.data_offsets", "expected [begin, end] with 0 ≤ begin ≤ end")
        if offsets[1] > len(data):
            _fail(path, f"{name}.data_offsets", "range outside the data buffer")
        dt = DTYPES[entry["dtype"]]
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if offsets[1] - offsets[0] != count * dt.itemsize:
            _fail(path, f"{name}.data_offsets", "byte range does not match dtype and shape")
        ranges.append((offsets[0], offsets[1], name))
        tensors[name] = np.frombuffer(data[offsets[0]:offsets[1]], dtype=dt).astype(
            np.float64).reshape(shape)
    ranges.sort()
    for (b0, e0, a), (b1, e1, b) in zip(ranges, ranges[1:]):
        if b1 < e0:
            _fail(path, f"{b}.data_offsets", f"overlaps tensor {a}")
    return tensors, metadata
