// Strict reader of models stored as safetensors files (docs/python.md "safetensors layout").
#pragma once

#include <string>
#include <string_view>

#include "ltsim/model/transformer.h"

namespace ltsim {

/// Largest JSON header (bytes) and largest total number of tensor entries a safetensors
/// model may have; both are checked before anything is allocated for them.
inline constexpr unsigned long long kMaxSafetensorsHeader = 100ull << 20;
inline constexpr unsigned long long kMaxSafetensorsElements = 1ull << 27;

/// True when `path` names a safetensors file (it ends in ".safetensors"); ReadModel reads
/// such a path with ReadSafetensorsModel.
inline bool IsSafetensorsPath(std::string_view path) {
  constexpr std::string_view kExtension = ".safetensors";
  return path.size() >= kExtension.size() &&
         path.substr(path.size() - kExtension.size()) == kExtension;
}

/// Reads a model from a safetensors file: an 8-byte little-endian header length N, N bytes
/// of JSON header, then the data buffer. The header's `__metadata__.ltsim` is the model
/// file's JSON without its arrays (each layer's `heads` the number of heads, `mlp` true when
/// it has one); the tensors are named after the model file's keys (`embedding`,
/// `positional`, `layers.{l}.heads.{h}.qk|ov|bias`, `layers.{l}.mlp.in|in_bias|out`,
/// `readout.weight|bias`), F32 or F64, row-major, little-endian. The file is memory-mapped.
/// Throws InputError ("<path>: <tensor or key>: <rule>") for a short or unreadable file, a
/// header length past the file or kMaxSafetensorsHeader, invalid or duplicate-key JSON, a
/// dtype other than F32/F64, a shape that differs from the metadata's, byte ranges outside
/// the data buffer, not matching the shape, or overlapping another tensor, a missing or
/// unknown tensor, non-finite entries, and incomplete or malformed metadata; the model then
/// passes ValidateTransformer.
Transformer ReadSafetensorsModel(const std::string& path);

}  // namespace ltsim
