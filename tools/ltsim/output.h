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

/// Runs a plot script (Debian's /usr/bin/python3 with matplotlib) on DIR and says what
/// happened in one line: a missing Python or matplotlib is a note, not an error (the
/// scripts exit with 3 when matplotlib is missing).
void RunPlotScript(const std::string& script, const std::string& dir, const std::string& png);

/// Writes DIR/<stem>.json and DIR/<stem>.csv (creating DIR); InputError naming --out.
void WriteJsonAndCsv(const std::string& dir, const std::string& stem, const Json& json,
                     const std::string& csv);

/// A number for humans ("∞", "n/a" for NaN, else 6 significant digits).
std::string Show(double value);

}  // namespace ltsim::cli
