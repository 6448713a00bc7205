// The reporters of `ltsim tightness` beside its types (study/tightness.h): the JSON document
// (tightness.json and `--json`), the CSV (tightness.csv) and the console tables
// (docs/tightness.md §4).
#pragma once

#include <ostream>
#include <string>

#include "ltsim/io/json.h"
#include "ltsim/study/tightness.h"

namespace ltsim {

/// The row's parameter as the reports name it: the built-in name, or a user family's meta key.
std::string TightnessRowParameter(const TightnessRow& row);

/// The document: `context` first (the caller's context block), then the options, the labels,
/// one object per row and, with --joint, the joint fit.
io::Json TightnessJson(const TightnessResult& result, const io::Json& context);

/// One line per (row, side, point): theorem, parameter, side, value, regressor, spread,
/// censoring, witness, the side's exponent and interval, paper and verdict.
std::string TightnessCsv(const TightnessResult& result);

/// The table of result.options.theorem (4.1 with the joint fit when present, 4.2, 5.2, 5.3).
void PrintTightnessTable(const TightnessResult& result, std::ostream& out);

}  // namespace ltsim
