// The threshold's limits, checked before any evaluation (docs/design.md §3).
#include "threshold/limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/model/joint_view.h"
#include "threshold/statistics.h"

namespace ltsim::threshold {

bool TwoLayerPair(const Transformer& f, const Transformer& g) {
  return f.layers.size() > 1 || g.layers.size() > 1;
}

void CheckCommon(const Transformer& f, const Transformer& g, const ThresholdOptions& options) {
  if (!std::isfinite(options.epsilon) || options.epsilon < 0.0)
    throw OptionError("epsilon", fmt::format("must be finite and ≥ 0, not {}", options.epsilon));
  if (options.max_length < 1 || options.max_length > kThresholdMaxLength)
    throw OptionError("max_length", fmt::format("must be in [1, {}] (the threshold limit), not {}",
                                                kThresholdMaxLength, options.max_length));
  if (options.min_length < 1 || options.min_length > options.max_length)
    throw OptionError("min_length", fmt::format("must be in [1, max length {}], not {}",
                                                options.max_length, options.min_length));
  if (!std::isfinite(options.time_budget) || options.time_budget < 0.0)
    throw OptionError("time_budget", fmt::format("must be a finite number of seconds ≥ 0 (0: "
                                                 "none), not {}",
                                                 options.time_budget));
  if (f.layers.size() > 2 || g.layers.size() > 2)
    throw InputError(fmt::format("threshold: models of one or two layers only (F has {}, G has {})",
                                 f.layers.size(), g.layers.size()));
  if (f.outputs() != g.outputs())
    throw InputError(fmt::format("threshold: F has {} outputs and G has {}; they must match",
                                 f.outputs(), g.outputs()));
  JointViewOf({&f, &g});  // throws on different alphabets
}

std::pair<long long, int> CheckTypeLimits(const Transformer& f, const Transformer& g) {
  const long long period = std::lcm<long long>(f.period, g.period);  // no int overflow
  if (period > kThresholdMaxTypes || f.alphabet * period > kThresholdMaxTypes)
    throw InputError(fmt::format(
        "threshold: D* = S·Δ* = {}·{} types (Δ* = lcm({}, {})), over the exact search's limit "
        "of {}",
        f.alphabet, period, f.period, g.period, kThresholdMaxTypes));
  const int locality = std::max(f.locality, g.locality);
  if (locality > kThresholdMaxLocality)
    throw InputError(
        fmt::format("threshold: τ* = {} (max of the localities), over the exact "
                    "search's limit of {}",
                    locality, kThresholdMaxLocality));
  return {period, locality};
}

void CheckStatisticsLimits(const Transformer& f, const Transformer& g, std::uint64_t min_length,
                           std::uint64_t max_length) {
  const auto [period, locality] = CheckTypeLimits(f, g);
  std::uint64_t total = 0;
  for (std::uint64_t t = min_length; t <= max_length; ++t) {
    const std::uint64_t next =
        SaturatingAdd(total, CountStatistics(f.alphabet, period, locality, t));
    if (next > kThresholdMaxStatistics)
      throw OptionError("max_length",
                        fmt::format("the exact search needs more than {} statistics (S = {}, "
                                    "Δ* = {}, τ* = {}); the largest max length within the limit "
                                    "is {}",
                                    kThresholdMaxStatistics, f.alphabet, period, locality, t - 1),
                        std::to_string(max_length));
    total = next;
  }
}

std::uint64_t ExhaustiveLength(int alphabet, std::uint64_t max_length) {
  std::uint64_t total = 0, power = 1, length = 0;
  while (length < std::min(max_length, kThresholdExhaustiveMaxLength)) {
    power = SaturatingMul(power, alphabet);
    if (SaturatingAdd(total, power) > kThresholdExhaustiveStrings) break;
    total += power;
    ++length;
  }
  return length;
}

void CheckStringLimits(const Transformer& f, const Transformer& g, const ThresholdOptions& o) {
  if (o.samples_per_length < 1) throw OptionError("samples_per_length", "must be at least 1");
  for (const Transformer* m : {&f, &g}) {
    if (m->layers.size() == 2 && m->types() > kTwoLayerMaxTypes && o.max_length > kReferenceLimit)
      throw OptionError("max_length",
                        fmt::format("a two-layer model with S·Δ = {} > {} is evaluated by the "
                                    "reference evaluator, up to {} tokens",
                                    m->types(), kTwoLayerMaxTypes, kReferenceLimit),
                        std::to_string(o.max_length));
  }
  const std::uint64_t exhaustive = ExhaustiveLength(f.alphabet, o.max_length);
  Uint128 tokens = 0;
  for (std::uint64_t t = exhaustive + 1; t <= o.max_length; ++t) {
    tokens += static_cast<Uint128>(t) * o.samples_per_length;
    if (tokens > kThresholdMaxRandomTokens)
      throw OptionError("max_length",
                        fmt::format("the random search reads more than {} tokens at {} samples per "
                                    "length; the largest max length within the limit is {}",
                                    kThresholdMaxRandomTokens, o.samples_per_length, t - 1),
                        std::to_string(o.max_length));
  }
}

void CheckCellLimits(const Transformer& f, const Transformer& g, const ThresholdOptions& o) {
  const auto [period, locality] = CheckTypeLimits(f, g);
  std::uint64_t contexts = static_cast<std::uint64_t>(period);
  for (int t = 0; t <= locality; ++t) contexts = SaturatingMul(contexts, f.alphabet);
  if (contexts > kThresholdMaxContexts)
    throw InputError(fmt::format(
        "threshold: Δ*·S^(τ*+1) = {}·{}^{} contexts, over the pruned search's limit of {}", period,
        f.alphabet, locality + 1, kThresholdMaxContexts));
  if (!(o.leaf_statistics >= 1.0)) throw InputError("threshold: leaf statistics must be ≥ 1");
}

}  // namespace ltsim::threshold
