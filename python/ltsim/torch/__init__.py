"""PyTorch limit transformers with ltsim's semantics, and their exchange files.

`model.LimitTransformer` is the module (docs/python.md); `files` writes and reads ltsim's JSON
model files and safetensors files under the one tensor naming convention.
"""

from .model import Config, LayerConfig, LimitTransformer
from .files import (model_dict, from_model_dict, save_json, load_json, save_safetensors,
                    load_safetensors, load)

__all__ = ["Config", "LayerConfig", "LimitTransformer", "model_dict", "from_model_dict",
           "save_json", "load_json", "save_safetensors", "load_safetensors", "load"]
