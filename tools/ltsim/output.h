// Formatting helpers of the command line: JSON context blocks, numbers, vectors (no computing).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ltsim/core/types.h"

namespace ltsim::cli {

/// JSON documents keep their keys in insertion order, so the context block comes first.
using Json = nlohmann::ordered_json;

/// A number for JSON: non-finite values (∞ margins, NaN "not applicable") become null.
Json Number(double value);

/// A vector as a JSON array.
Json Array(const Vector& v);

/// The context block every JSON output opens with (house style §19).
Json Context(const std::string& command, std::uint64_t seed);

/// Prints a JSON document on stdout, context first.
void PrintJson(const Json& document);

/// A vector for humans: "0.5" or "[0.5, -1, 2]", 6 significant digits.
std::string Show(const Vector& v);

/// A number for humans ("∞", "n/a" for NaN, else 6 significant digits).
std::string Show(double value);

}  // namespace ltsim::cli
