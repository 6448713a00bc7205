// The family registry (docs/families.md): one line per family file in src/construct/families/,
// the checked build of a member and the `meta` its model files carry.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "construct/families/family_parts.h"
#include "ltsim/core/error.h"
#include "ltsim/model/constants.h"

namespace ltsim {

const std::vector<Family>& Families() {
  using namespace construct;  // one line per family file, in the order `--list` prints them
  static const std::vector<Family> families = {
      BumpFamily(),           PrecisionFamily(),  NestedFamily(), InductionFamily(),
      LeakFamily(),           OffsetBumpFamily(), MarginFamily(), PositionalMarginFamily(),
      TwoLayerMarginFamily(), AverageBumpFamily()};
  return families;
}

std::string RangeText(const FamilyParameter& p) {
  return fmt::format("{}{}, {}{}", p.min_open ? "(" : "[", p.min, p.max, p.max_open ? ")" : "]");
}

const Family& FindFamily(const std::string& name) {
  std::string known;
  for (const Family& family : Families()) {
    if (family.name == name) return family;
    known += (known.empty() ? "" : ", ") + family.name;
  }
  throw InputError("unknown family '" + name + "' (known: " + known + ")");
}

FamilyMember BuildFamilyMember(const std::string& name, const FamilyValues& values) {
  const Family& family = FindFamily(name);
  FamilyValues complete;
  for (const auto& entry : values) {
    // A named reference, not a structured binding: clang 14 cannot capture those (C++20's
    // P1091, implemented from clang 16), and the fuzz build (tools/fuzz.sh) uses clang 14.
    const std::string& key = entry.first;
    const auto it = std::find_if(family.params.begin(), family.params.end(),
                                 [&](const FamilyParameter& p) { return p.name == key; });
    if (it == family.params.end()) {
      std::string known;
      for (const FamilyParameter& p : family.params)
        known += (known.empty() ? "--" : ", --") + p.name;
      throw InputError(
          fmt::format("family {}: no parameter --{} (its parameters: {})", name, key, known));
    }
  }
  for (const FamilyParameter& p : family.params) {
    const auto it = values.find(p.name);
    const double value = it == values.end() ? p.default_value : it->second;
    if (!std::isfinite(value) || value < p.min || value > p.max || (p.min_open && value == p.min) ||
        (p.max_open && value == p.max))
      throw InputError(
          fmt::format("family {}: --{} must be in {}, not {}", name, p.name, RangeText(p), value));
    if (p.integer && value != std::floor(value))
      throw InputError(
          fmt::format("family {}: --{} must be an integer, not {}", name, p.name, value));
    complete[p.name] = value;
  }
  FamilyMember member = family.build(complete);
  member.values = complete;
  if (family.own_meta) return member;
  member.family = name;
  member.f.meta_json = FamilyMeta(member, "f");
  member.g.meta_json = FamilyMeta(member, "g");
  return member;
}

std::string FamilyMeta(const FamilyMember& member, const std::string& role) {
  nlohmann::json meta;
  meta["family"] = member.family;
  meta["role"] = role;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [key, value] : member.values) params[key] = value;
  meta["params"] = params;
  meta["eps"] = member.eps;
  meta["first_disagreement"] = member.first_disagreement;
  meta["closed_form"] = member.closed_form;
  meta["growth"] = member.growth;
  meta["gap_at_first_disagreement"] = member.gap_at_first_disagreement;
  meta["sup_gap"] = member.sup_gap;
  const double L = std::max(LipschitzConstant(member.f), LipschitzConstant(member.g));
  meta["pair_lipschitz"] = L;  // NaN (JSON null) for two-layer pairs: L(f) is one-layer's
  if (std::isnan(L))
    meta["first_disagreement_eps_over_L"] = nullptr;
  else
    meta["first_disagreement_eps_over_L"] =
        L > 0 ? static_cast<double>(member.first_disagreement) * member.eps / L : 0.0;
  return meta.dump();
}

}  // namespace ltsim
