// `ltsim tightness`: validates the options and runs the rows of the theorem asked for; the rows
// are in theorem_41.cpp, theorem_42.cpp, theorem_52.cpp, lemma_53.cpp and user_family_row.cpp,
// the joint fit in joint_fit.cpp (docs/tightness.md).
#include "ltsim/study/tightness.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "joint_fit.h"
#include "lemma_53.h"
#include "ltsim/core/error.h"
#include "theorem_41.h"
#include "theorem_42.h"
#include "theorem_52.h"
#include "user_family_row.h"

namespace ltsim {
namespace {

void Validate(const TightnessOptions& o) {
  const std::vector<StudyParameter> known = TightnessParameters(o.theorem);
  std::string names;
  for (StudyParameter k : known)
    names += (names.empty() ? "" : ", ") + std::string(ParameterName(k));
  for (StudyParameter p : o.parameters)
    if (std::find(known.begin(), known.end(), p) == known.end())
      throw OptionError("parameters",
                        std::string("'") + ParameterName(p) + "' is not a parameter of Theorem " +
                            kTheoremNames.Name(o.theorem) + " (known: " + names + ")");
  if (o.seeds < 1) throw OptionError("seeds", "must be at least 1");
  if (o.points < 3 || o.points > 12) throw OptionError("points", "must be in [3, 12]");
  if (o.statistics_budget < 1) throw OptionError("statistics_budget", "must be at least 1");
  if (o.heads < 1 || o.heads > 3) throw OptionError("heads", "must be 1, 2 or 3");
  if (o.threads < 0) throw OptionError("threads", "must be at least 0");
  if (o.precision_bits < 1 || o.precision_bits > 12)
    throw OptionError("precision_bits",
                      "must be in [1, 12] (T_hard = 2^(p/gamma) is searched exactly)");
  if (o.max_x_length < 100) throw OptionError("max_x_length", "must be at least 100");
  if (o.theorem == Theorem::k53) ValidateLemma53(o);
  if (o.average_max_length < 64 || o.average_max_length > 100'000)
    throw OptionError("average_max_length", "must be in [64, 100000]");
  for (double a : o.alphas0)
    if (!(a >= 0.05 && a <= 20)) throw OptionError("alphas0", "each alpha0 must be in [0.05, 20]");
  for (std::size_t i = 0; i < o.alphas0.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (fmt::format("{}", o.alphas0[i]) == fmt::format("{}", o.alphas0[j]))
        throw OptionError("alphas0", fmt::format("alpha0 = {} appears twice (each value names "
                                                 "one row and its files)",
                                                 o.alphas0[i]));
  if (!o.alphas0.empty() && o.theorem != Theorem::k42)
    throw OptionError("alphas0", "only for Theorem 4.2");
  if (o.joint && o.theorem != Theorem::k41)
    throw OptionError("joint", "only for Theorem 4.1 (its log-log rows)");
}

}  // namespace

std::vector<StudyParameter> TightnessParameters(Theorem theorem) {
  switch (theorem) {
    case Theorem::k41:
      return {StudyParameter::kEps,      StudyParameter::kScale,    StudyParameter::kPeriod,
              StudyParameter::kAlphabet, StudyParameter::kLocality, StudyParameter::kMargin};
    case Theorem::k53:
      return {StudyParameter::kN, StudyParameter::kLocality};
    case Theorem::k42:
      return {StudyParameter::kEps, StudyParameter::kAlpha0};
    case Theorem::k52:
      return {StudyParameter::kEps, StudyParameter::kAttentionNorm,
              StudyParameter::kPositionalMargin, StudyParameter::kK};
  }
  return {};
}

TightnessResult RunTightness(const TightnessOptions& options) {
  Validate(options);
  TightnessResult result;
  result.options = options;
  if (result.options.parameters.empty())
    result.options.parameters = TightnessParameters(options.theorem);
  const TightnessOptions& o = result.options;
  if (!o.family_dir.empty()) {
    if (o.theorem != Theorem::k41 || o.joint)
      throw OptionError("family_dir", "only for Theorem 4.1, without --joint (one row)");
    result.options.parameters.clear();
    result.rows.push_back(RunUserFamilyRow(o));
    return result;
  }
  if (o.theorem == Theorem::k53) {
    result.rows = RunLemma53Rows(o);
    return result;
  }
  if (o.theorem == Theorem::k52) {
    result.rows = RunTheorem52Rows(o);
    return result;
  }
  if (o.theorem == Theorem::k42) {
    result.rows = RunTheorem42Rows(o);
    return result;
  }
  result.rows = RunTheorem41Rows(o);
  if (o.joint) result.joint = FitJointRows(result.rows);
  return result;
}

io::Json TightnessOptionsToJson(const TightnessOptions& o) {
  std::vector<std::string> parameters;
  for (StudyParameter p : o.parameters) parameters.emplace_back(ParameterName(p));
  io::Json j{{"theorem", kTheoremNames.Name(o.theorem)},
             {"parameters", parameters},
             {"seeds", o.seeds},
             {"points", o.points},
             {"budget", o.statistics_budget},
             {"precision_bits", o.precision_bits},
             {"validate", o.validate},
             {"max_x_length", o.max_x_length},
             {"methods", o.schemes},
             {"x_length", o.statistic_x_length},
             {"joint", o.joint}};
  if (o.theorem == Theorem::k42) {
    j["alphas0"] = o.alphas0.empty() ? std::vector<double>{0.5, 1.0, 2.0} : o.alphas0;
    j["average_max_length"] = o.average_max_length;
  }
  if (!o.family_dir.empty()) {
    j["family_dir"] = o.family_dir;
    j["family_parameter"] = o.family_parameter;
    j["family_eps"] = o.family_eps > 0 ? io::Json(o.family_eps) : io::Json(nullptr);
  }
  return j;
}

}  // namespace ltsim
