// The threshold's witness re-evaluated as a string and rechecked in 50 digits (eval/precise.h).
#include "threshold/witness_recheck.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <utility>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/precise.h"
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
      r.status = "skipped";
      r.note = why;
      return;
    }
  }
  const PreciseReal gap =
      PreciseSupDistance(EvaluatePrecise(f, *witness), EvaluatePrecise(g, *witness));
  r.precise_gap = PreciseText(gap);
  r.status = gap > PreciseReal(epsilon) ? "confirmed" : "unconfirmed";
  r.note =
      fmt::format("the witness string re-evaluated with {}-digit arithmetic; {} ε", kPreciseDigits,
                  r.status == "confirmed" ? "its gap exceeds" : "its gap does not exceed");
}

void SetWitness(const Transformer& f, const Transformer& g, std::uint64_t length,
                std::vector<Run> runs, double found_gap, double epsilon, ThresholdResult& result) {
  result.first_disagreement = length;
  result.witness = std::move(runs);
  const auto witness = MakeRunSource(result.witness, "witness");
  result.f_witness = Evaluate(f, *witness);
  result.g_witness = Evaluate(g, *witness);
  result.gap = Gap(result.f_witness, result.g_witness);
  // f depends on the statistics alone, and the evaluators agree to rounding (evaluate.h).
  LTSIM_CHECK(result.gap == found_gap ||
              std::abs(result.gap - found_gap) <= 1e-9 * (1.0 + found_gap));
  RecheckWitness(f, g, epsilon, result);
}

}  // namespace ltsim::threshold
