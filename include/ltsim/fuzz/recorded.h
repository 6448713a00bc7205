// Recorded results against recomputed ones: what `ltsim replay` compares, field by field.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ltsim {

/// Relative tolerance for a recorded double against the recomputed one: the same relative 1e-9
/// as the rechecks (docs/theory.md §8.3–§8.4), far above the few ulps by which the kernels of
/// docs/design.md §9 could differ, far below any doctored value.
inline constexpr double kReplayRelativeTolerance = 1e-9;

/// Compares a recorded JSON value with the one the same writer produces from the recomputed
/// result, recursively, and appends the path of every leaf that differs to `differences`
/// (e.g. "numbers.sim_f: recorded 0.125, recomputed 0.5"): numbers within
/// kReplayRelativeTolerance·max(|a|, |b|) are equal (the strings "inf", "-inf", "nan" and null
/// stand for non-finite numbers); decimal strings of 50-digit values (rechecks) within a relative
/// 1e-30; other strings, booleans and array lengths exactly; keys present on one side only
/// differ. Returns true when nothing differed.
bool CompareRecorded(const nlohmann::json& recorded, const nlohmann::json& recomputed,
                     const std::string& path, std::vector<std::string>& differences);

/// The same for ordered documents (witness files are read and written ordered).
bool CompareRecorded(const nlohmann::ordered_json& recorded,
                     const nlohmann::ordered_json& recomputed, const std::string& path,
                     std::vector<std::string>& differences);

/// "field (recorded …, recomputed …); …", cut to a few hundred characters: for one line.
std::string DifferenceSummary(const std::vector<std::string>& differences);

}  // namespace ltsim
