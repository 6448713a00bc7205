// Field-by-field comparison of recorded and recomputed results for `ltsim replay`.
#include "ltsim/fuzz/recorded.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "ltsim/eval/precise.h"

namespace ltsim {
namespace {

// A number a witness writer may have written: a JSON number, or "inf"/"-inf"/"nan"/null
// for a non-finite one.
std::optional<double> AsNumber(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return std::nullopt;
}

// A decimal string (a 50-digit value): digits, sign, point, exponent only.
std::optional<PreciseReal> AsDecimal(const std::string& s) {
  if (s.empty() || s.size() > 200) return std::nullopt;
  bool digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      digit = true;
      continue;
    }
    if (c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E') return std::nullopt;
  }
  if (!digit) return std::nullopt;
  try {
    return PreciseReal(s);
  } catch (...) {
    return std::nullopt;
  }
}

std::string Short(const nlohmann::json& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

void Compare(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
             std::vector<std::string>& out) {
  const auto differ = [&] {
    out.push_back(path + " (recorded " + Short(a) + ", recomputed " + Short(b) + ")");
  };
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    for (const std::string& k : keys) {
      const std::string sub = path.empty() ? k : path + "." + k;
      if (!a.contains(k) || !b.contains(k)) {
        out.push_back(
            sub + (a.contains(k) ? " (recorded, not recomputed)" : " (recomputed, not recorded)"));
        continue;
      }
      Compare(a.at(k), b.at(k), sub, out);
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      out.push_back(path + " (recorded " + std::to_string(a.size()) + " entries, recomputed " +
                    std::to_string(b.size()) + ")");
      return;
    }
    for (std::size_t i = 0; i < a.size(); ++i)
      Compare(a[i], b[i], path + "[" + std::to_string(i) + "]", out);
    return;
  }
  const std::optional<double> x = AsNumber(a), y = AsNumber(b);
  if (x && y && (a.is_number() || b.is_number() || a.is_null() || b.is_null())) {
    const double p = *x, q = *y;
    if (std::isnan(p) || std::isnan(q)) {
      if (!(std::isnan(p) && std::isnan(q))) differ();
      return;
    }
    if (p == q) return;
    if (!std::isfinite(p) || !std::isfinite(q) ||
        !(std::abs(p - q) <= kReplayRelativeTolerance * std::max(std::abs(p), std::abs(q))))
      differ();
    return;
  }
  if (a.is_string() && b.is_string()) {
    const std::string& s = a.get_ref<const std::string&>();
    const std::string& t = b.get_ref<const std::string&>();
    if (s == t) return;
    const auto p = AsDecimal(s), q = AsDecimal(t);
    if (p && q) {
      const PreciseReal scale = std::max(abs(*p), abs(*q));
      if (abs(*p - *q) <= PreciseReal("1e-30") * scale) return;
    }
    differ();
    return;
  }
  if (a != b) differ();
}

}  // namespace

bool CompareRecorded(const nlohmann::json& recorded, const nlohmann::json& recomputed,
                     const std::string& path, std::vector<std::string>& differences) {
  const std::size_t before = differences.size();
  Compare(recorded, recomputed, path, differences);
  return differences.size() == before;
}

bool CompareRecorded(const nlohmann::ordered_json& recorded,
                     const nlohmann::ordered_json& recomputed, const std::string& path,
                     std::vector<std::string>& differences) {
  return CompareRecorded(nlohmann::json::parse(recorded.dump()),
                         nlohmann::json::parse(recomputed.dump()), path, differences);
}

std::string DifferenceSummary(const std::vector<std::string>& differences) {
  std::string text;
  for (const std::string& d : differences) {
    if (text.size() > 400) {
      text += "; …";
      break;
    }
    text += (text.empty() ? "" : "; ") + d;
  }
  return text;
}

}  // namespace ltsim
