// The threshold's witness re-evaluated as a string and rechecked in 50 digits (eval/precise.h).
#include "threshold/witness_recheck.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/rounding.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/strings/sources.h"
#include "threshold/statistics.h"

namespace ltsim::threshold {

void RecheckWitness(const Transformer& f, const Transformer& g, double epsilon,
                    ThresholdResult& result) {
  ThresholdResult::Recheck& r = result.recheck;
  const auto witness = MakeRunSource(result.witness, "witness");
  std::string why;
  for (const Transformer* m : {&f, &g}) {
    if (!PreciseEvaluable(*m, witness->length(), &why)) {
      r.status = RecheckStatus::kSkipped;
      r.note = why;
      return;
    }
  }
  const PreciseReal gap =
      PreciseSupDistance(EvaluatePrecise(f, *witness), EvaluatePrecise(g, *witness));
  r.precise_gap = PreciseText(gap);
  r.status = gap > PreciseReal(epsilon) ? RecheckStatus::kAgrees : RecheckStatus::kDiffers;
  r.note = fmt::format(
      "the witness string re-evaluated with {}-digit arithmetic; {} ε", kPreciseDigits,
      r.status == RecheckStatus::kAgrees ? "its gap exceeds" : "its gap does not exceed");
}

void SetWitness(const Transformer& f, const Transformer& g, std::uint64_t length,
                std::vector<Run> runs, double found_gap, double epsilon, ThresholdResult& result) {
  result.first_disagreement = length;
  result.witness = std::move(runs);
  const auto witness = MakeRunSource(result.witness, "witness");
  result.f_witness = Evaluate(f, *witness);
  result.g_witness = Evaluate(g, *witness);
  result.gap = Gap(result.f_witness, result.g_witness);
  // One-layer pairs: where the double values may be off by more than the verdict's tolerance
  // (docs/theory.md §8.7), the witness is reported with its 50-digit values, rounded.
  double error = 0.0;
  if (f.layers.size() == 1 && g.layers.size() == 1) {
    const TypeCounts cf = CountTypes(*witness, f.alphabet, f.period, f.locality);
    const TypeCounts cg = CountTypes(*witness, g.alphabet, g.period, g.locality);
    error = StatisticErrorBound(MakeOneLayerRounding(f, length, RoundingTerms(f)), cf) +
            StatisticErrorBound(MakeOneLayerRounding(g, length, RoundingTerms(g)), cg);
    if (!(error <= kThresholdGapTolerance)) {
      const std::vector<double> pf = ToDouble(EvaluatePreciseOneLayer(f, cf));
      const std::vector<double> pg = ToDouble(EvaluatePreciseOneLayer(g, cg));
      result.f_witness = Eigen::Map<const Vector>(pf.data(), static_cast<Eigen::Index>(pf.size()));
      result.g_witness = Eigen::Map<const Vector>(pg.data(), static_cast<Eigen::Index>(pg.size()));
      result.gap = Gap(result.f_witness, result.g_witness);
    }
  }
  // f depends on the statistics alone, and the evaluators agree to rounding (evaluate.h).
  LTSIM_CHECK(result.gap == found_gap ||
              std::abs(result.gap - found_gap) <= 1e-9 * (1.0 + found_gap) + 2 * error);
  RecheckWitness(f, g, epsilon, result);
}

}  // namespace ltsim::threshold
