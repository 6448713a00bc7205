// Strict reader and writer of the `ltsim-model` JSON format (docs/formats.md §1).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ltsim/model/transformer.h"

namespace ltsim {

/// Parses model JSON text. `source` names the file in error messages. Throws InputError
/// (one line: "<source>: <key path>: <rule>") on malformed JSON, unknown or missing keys,
/// wrong shapes, non-finite numbers, a bias of length ≠ τ+1, or `precision_bits` missing on
/// a `finite` layer / present on any other.
Transformer ParseModel(const std::string& text, const std::string& source);

/// Reads and parses a model file; a missing or unreadable file, a directory, a device or a
/// file over the size limit is an InputError (io::ReadFile, docs/formats.md §6.1). A path
/// ending in ".safetensors" is read by ReadSafetensorsModel (model/safetensors.h).
Transformer ReadModel(const std::string& path);

/// The same reader on a parsed document (a model inside a witness); `source` prefixes the
/// key paths in errors ("w.json: case_spec.f").
Transformer ModelFromJson(const nlohmann::ordered_json& json, const std::string& source);

/// Serialises a model to the JSON format (round-trips exactly through ParseModel: numbers
/// are written with 17 significant digits).
std::string ModelToJson(const Transformer& model);

/// The same document as a JSON value (a model inside a witness: no text round trip).
nlohmann::ordered_json ModelToJsonValue(const Transformer& model);

/// Writes ModelToJson(model) to `path`; failure to write is an InputError.
void WriteModel(const Transformer& model, const std::string& path);

}  // namespace ltsim
