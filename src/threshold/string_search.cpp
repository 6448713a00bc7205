// Pairs with a two-layer model: every string up to T_ex, then uniform random strings of each
// length drawn from StreamSeed(seed, "threshold", T) (docs/theory.md §7.2).
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ltsim/core/seed.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/model/joint_view.h"
#include "ltsim/strings/sources.h"
#include "threshold/limits.h"
#include "threshold/searches.h"
#include "threshold/statistics.h"

namespace ltsim::threshold {
namespace {

// The gap of one string, and whether it disagrees (ThresholdDisagrees).
double StringGap(const Transformer& f, const Transformer& g, const std::vector<Token>& x,
                 double epsilon, bool& disagrees) {
  const auto source = MakeTokenSource(x, "x");
  const Vector a = Evaluate(f, *source), b = Evaluate(g, *source);
  const double gap = Gap(a, b);
  disagrees = ThresholdDisagrees(gap, epsilon, a, b);
  return gap;
}

void Consider(const Transformer& f, const Transformer& g, const std::vector<Token>& x,
              double epsilon, LengthOutcome& outcome) {
  bool disagrees = false;
  const double gap = StringGap(f, g, x, epsilon, disagrees);
  Note(gap, disagrees, outcome);
  if (disagrees && gap > outcome.witness_gap) {
    outcome.witness_gap = gap;
    outcome.argmax = x;
  }
}

LengthOutcome SearchAllStrings(const Transformer& f, const Transformer& g, int alphabet,
                               std::uint64_t length, double epsilon, std::uint64_t& evaluations) {
  std::vector<Token> x(length, 0);
  LengthOutcome outcome;
  while (true) {
    Consider(f, g, x, epsilon, outcome);
    ++evaluations;
    std::size_t k = length;
    while (k > 0 && ++x[k - 1] == alphabet) x[--k] = 0;
    if (k == 0) return outcome;
  }
}

LengthOutcome SearchRandomStrings(const Transformer& f, const Transformer& g, int alphabet,
                                  std::uint64_t length, const ThresholdOptions& options,
                                  std::uint64_t& evaluations) {
  boost::random::mt19937_64 engine(StreamSeed(options.seed, "threshold", length));
  boost::random::uniform_int_distribution<int> token(0, alphabet - 1);
  LengthOutcome outcome;
  std::vector<Token> x(length);
  for (std::uint64_t k = 0; k < options.samples_per_length; ++k) {
    for (Token& s : x) s = static_cast<Token>(token(engine));
    Consider(f, g, x, options.epsilon, outcome);
    ++evaluations;
  }
  return outcome;
}

}  // namespace

ThresholdResult FindByStrings(const Transformer& f, const Transformer& g,
                              const ThresholdOptions& options) {
  ThresholdResult result;
  result.method = ThresholdMethod::kExhaustiveRandom;
  result.view = JointViewOf({&f, &g});
  result.samples_per_length = options.samples_per_length;
  const int alphabet = result.view.alphabet;
  const std::uint64_t exhaustive = ExhaustiveLength(alphabet, options.max_length);
  SearchLengths(
      f, g, options,
      [&](std::uint64_t t) {
        // Tokens read: S^t strings of t tokens, or the samples.
        const double strings = t <= exhaustive ? std::pow(static_cast<double>(alphabet), t)
                                               : static_cast<double>(options.samples_per_length);
        return strings * static_cast<double>(t);
      },
      [&](std::uint64_t t, std::uint64_t& evaluations) {
        return t <= exhaustive ? SearchAllStrings(f, g, alphabet, t, options.epsilon, evaluations)
                               : SearchRandomStrings(f, g, alphabet, t, options, evaluations);
      },
      result);
  result.exhaustive_up_to = std::min(exhaustive, result.checked_up_to);
  result.exhaustive = result.checked_up_to <= exhaustive;
  // Random strings bound nothing from above.
  for (std::uint64_t t = exhaustive + 1; t <= result.checked_up_to; ++t)
    result.gap_upper_per_length[t - 1] = std::numeric_limits<double>::quiet_NaN();
  return result;
}

}  // namespace ltsim::threshold
