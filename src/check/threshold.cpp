// The first length where two models disagree by more than ε, exactly for one-layer pairs.
#include "ltsim/check/threshold.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>

#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/core/work.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/two_layer.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

using Uint128 = unsigned __int128;
constexpr std::uint64_t kSaturated = std::uint64_t{1} << 62;

std::uint64_t SaturatingMul(std::uint64_t a, std::uint64_t b) {
  const Uint128 product = static_cast<Uint128>(a) * b;
  return product >= kSaturated ? kSaturated : static_cast<std::uint64_t>(product);
}

std::uint64_t SaturatingAdd(std::uint64_t a, std::uint64_t b) {
  return std::min(kSaturated, std::min(a, kSaturated) + std::min(b, kSaturated));
}

// C(n + k, k), the number of ways to split n positions among k + 1 tokens; saturating.
std::uint64_t Multichoose(std::uint64_t n, int k) {
  Uint128 c = 1;
  for (int i = 1; i <= k; ++i) {
    c = c * (n + i) / i;  // C(n + i, i) = C(n + i − 1, i − 1)·(n + i)/i, exact
    if (c >= kSaturated) return kSaturated;
  }
  return static_cast<std::uint64_t>(c);
}

// N_r = #{1 ≤ j ≤ far : j ≡ r (mod Δ)}.
std::uint64_t ClassSize(std::uint64_t far, int period, int r) {
  const std::uint64_t delta = period;
  return far / delta + (r >= 1 && static_cast<std::uint64_t>(r) <= far % delta ? 1 : 0);
}

// ---- Checks, all before any evaluation -----------------------------------------------------

bool TwoLayerPair(const Transformer& f, const Transformer& g) {
  return f.layers.size() > 1 || g.layers.size() > 1;
}

void CheckCommon(const Transformer& f, const Transformer& g, const ThresholdOptions& options) {
  if (!std::isfinite(options.epsilon) || options.epsilon < 0.0)
    throw InputError(fmt::format("--eps: must be finite and ≥ 0, not {}", options.epsilon));
  if (options.max_length < 1 || options.max_length > kThresholdMaxLength)
    throw InputError(fmt::format("--max-length: must be in [1, {}] (the threshold limit), not {}",
                                 kThresholdMaxLength, options.max_length));
  if (f.layers.size() > 2 || g.layers.size() > 2)
    throw InputError(fmt::format("threshold: models of one or two layers only (F has {}, G has {})",
                                 f.layers.size(), g.layers.size()));
  if (f.outputs() != g.outputs())
    throw InputError(fmt::format("threshold: F has {} outputs and G has {}; they must match",
                                 f.outputs(), g.outputs()));
  JointViewOf({&f, &g});  // throws on different alphabets
}

void CheckStatisticsLimits(const Transformer& f, const Transformer& g, std::uint64_t max_length) {
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
  std::uint64_t total = 0;
  for (std::uint64_t t = 1; t <= max_length; ++t) {
    const std::uint64_t next =
        SaturatingAdd(total, CountStatistics(f.alphabet, period, locality, t));
    if (next > kThresholdMaxStatistics)
      throw InputError(fmt::format(
          "--max-length {}: the exact search needs more than {} statistics (S = {}, Δ* = {}, "
          "τ* = {}); the largest max length within the limit is {}",
          max_length, kThresholdMaxStatistics, f.alphabet, period, locality, t - 1));
    total = next;
  }
}

// T_ex: the largest T ≤ min(N, kThresholdExhaustiveMaxLength) with Σ_{t ≤ T} S^t within the
// exhaustive budget.
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
  if (o.samples_per_length < 1) throw InputError("--samples: must be at least 1");
  for (const Transformer* m : {&f, &g}) {
    if (m->layers.size() == 2 && m->types() > kTwoLayerMaxTypes && o.max_length > kReferenceLimit)
      throw InputError(fmt::format(
          "--max-length {}: a two-layer model with S·Δ = {} > {} is evaluated by the reference "
          "evaluator, up to {} tokens",
          o.max_length, m->types(), kTwoLayerMaxTypes, kReferenceLimit));
  }
  const std::uint64_t exhaustive = ExhaustiveLength(f.alphabet, o.max_length);
  Uint128 tokens = 0;
  for (std::uint64_t t = exhaustive + 1; t <= o.max_length; ++t) {
    tokens += static_cast<Uint128>(t) * o.samples_per_length;
    if (tokens > kThresholdMaxRandomTokens)
      throw InputError(fmt::format(
          "--max-length {} with --samples {}: the random search reads more than {} tokens; the "
          "largest max length within the limit is {}",
          o.max_length, o.samples_per_length, kThresholdMaxRandomTokens, t - 1));
  }
}

// ---- The enumeration of statistics ---------------------------------------------------------

// Steps a composition c[0..k) of its sum to the next one, (n, 0, …, 0) first and
// (0, …, 0, n) last; false (and back to the first) after the last.
bool NextComposition(std::uint64_t* c, int k) {
  const std::uint64_t last = c[k - 1];
  c[k - 1] = 0;
  int i = k - 2;
  while (i >= 0 && c[i] == 0) --i;
  if (i < 0) {
    c[0] = last;
    return false;
  }
  --c[i];
  c[i + 1] = last + 1;
  return true;
}

// Every statistic (far counts per type, suffix) of one length in a view, in a fixed order:
// the suffix fastest, then the composition of each residue class, the last class first.
class StatisticsOdometer {
 public:
  StatisticsOdometer(const JointView& view, std::uint64_t length) {
    counts_.alphabet = view.alphabet;
    counts_.period = view.period;
    counts_.locality = view.locality;
    counts_.length = length;
    const std::uint64_t m = std::min<std::uint64_t>(length, view.locality + 1);
    counts_.suffix.assign(m, 0);
    counts_.far.assign(static_cast<std::size_t>(view.alphabet) * view.period, 0);
    for (int r = 0; r < view.period; ++r)
      counts_.far[counts_.TypeIndex(0, r)] = ClassSize(length - m, view.period, r);
  }

  const TypeCounts& counts() const { return counts_; }

  bool Next() {
    for (std::size_t k = counts_.suffix.size(); k-- > 0;) {
      if (++counts_.suffix[k] < counts_.alphabet) return true;
      counts_.suffix[k] = 0;
    }
    for (int r = counts_.period - 1; r >= 0; --r)
      if (NextComposition(&counts_.far[counts_.TypeIndex(0, r)], counts_.alphabet)) return true;
    return false;
  }

 private:
  TypeCounts counts_;
};

// A string with these statistics: each residue class's far positions take its tokens in
// increasing order, then the suffix. Checked by recounting.
std::vector<Token> Realise(const TypeCounts& counts) {
  std::vector<std::uint64_t> left = counts.far;
  std::vector<int> token(counts.period, 0);
  std::vector<Token> x;
  x.reserve(counts.length);
  for (std::uint64_t j = 1; j <= counts.far_length(); ++j) {
    const int r = counts.Residue(j);
    while (left[counts.TypeIndex(token[r], r)] == 0) ++token[r];
    --left[counts.TypeIndex(token[r], r)];
    x.push_back(static_cast<Token>(token[r]));
  }
  x.insert(x.end(), counts.suffix.begin(), counts.suffix.end());
  const TypeCounts check = CountTypes(x, counts.alphabet, counts.period, counts.locality);
  LTSIM_CHECK(check.far == counts.far && check.suffix == counts.suffix);
  return x;
}

// ‖a − b‖_∞, and +∞ when either output is not finite (weights that are finite can still
// overflow an output): such a string disagrees beyond any ε, and NaN never hides it.
double Gap(const Vector& a, const Vector& b) {
  if (!a.allFinite() || !b.allFinite()) return std::numeric_limits<double>::infinity();
  return SupDistance(a, b);
}

double StatisticGap(const Transformer& f, const Transformer& g, const TypeCounts& joint) {
  return Gap(EvaluateOneLayer(f, Coarsen(joint, f.period, f.locality)),
             EvaluateOneLayer(g, Coarsen(joint, g.period, g.locality)));
}

double StringGap(const Transformer& f, const Transformer& g, const std::vector<Token>& x) {
  const auto source = MakeTokenSource(x, "x");
  return Gap(Evaluate(f, *source), Evaluate(g, *source));
}

// The largest gap of one length and where it was first reached in search order: a string,
// or statistics that Realise turns into one when they are reported.
struct LengthOutcome {
  double max_gap = -1.0;
  std::vector<Token> argmax;
  std::optional<TypeCounts> argmax_counts;
};

LengthOutcome SearchStatistics(const Transformer& f, const Transformer& g, const JointView& view,
                               std::uint64_t length, std::uint64_t& evaluations) {
  StatisticsOdometer odometer(view, length);
  LengthOutcome outcome;
  do {
    const double gap = StatisticGap(f, g, odometer.counts());
    ++evaluations;
    if (gap > outcome.max_gap) {
      outcome.max_gap = gap;
      outcome.argmax_counts = odometer.counts();
    }
  } while (odometer.Next());
  return outcome;
}

void Consider(const Transformer& f, const Transformer& g, const std::vector<Token>& x,
              LengthOutcome& outcome) {
  const double gap = StringGap(f, g, x);
  if (gap > outcome.max_gap) {
    outcome.max_gap = gap;
    outcome.argmax = x;
  }
}

LengthOutcome SearchAllStrings(const Transformer& f, const Transformer& g, int alphabet,
                               std::uint64_t length, std::uint64_t& evaluations) {
  std::vector<Token> x(length, 0);
  LengthOutcome outcome;
  while (true) {
    Consider(f, g, x, outcome);
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
    Consider(f, g, x, outcome);
    ++evaluations;
  }
  return outcome;
}

// Records one length's outcome; true when it is the first disagreement (the search stops).
bool Record(const Transformer& f, const Transformer& g, std::uint64_t length,
            const LengthOutcome& outcome, double epsilon, ThresholdResult& result) {
  result.max_gap_per_length.push_back(outcome.max_gap);
  result.checked_up_to = length;
  if (!(outcome.max_gap > epsilon)) return false;
  result.first_disagreement = length;
  result.witness = ToRuns(outcome.argmax_counts ? Realise(*outcome.argmax_counts) : outcome.argmax);
  const auto witness = MakeRunSource(result.witness, "witness");
  result.f_witness = Evaluate(f, *witness);
  result.g_witness = Evaluate(g, *witness);
  result.gap = Gap(result.f_witness, result.g_witness);
  // f depends on the statistics alone, and the evaluators agree to rounding (evaluate.h).
  LTSIM_CHECK(result.gap == outcome.max_gap ||
              std::abs(result.gap - outcome.max_gap) <= 1e-9 * (1.0 + outcome.max_gap));
  return true;
}

// One length's outcome as bytes for the dealer (core/work.h): exact, so the reducer records
// what a single process would.
std::string OutcomeBytes(const LengthOutcome& o, std::uint64_t evaluations) {
  ByteWriter w;
  w.Put(o.max_gap);
  w.Put(evaluations);
  w.PutVector(o.argmax);
  w.Put<bool>(o.argmax_counts.has_value());
  if (o.argmax_counts) {
    const TypeCounts& c = *o.argmax_counts;
    w.Put(c.alphabet);
    w.Put(c.period);
    w.Put(c.locality);
    w.Put(c.length);
    w.PutVector(c.far);
    w.PutVector(c.suffix);
  }
  return w.Take();
}

LengthOutcome OutcomeFromBytes(const std::string& bytes, std::uint64_t& evaluations) {
  ByteReader r(bytes);
  LengthOutcome o;
  o.max_gap = r.Get<double>();
  evaluations += r.Get<std::uint64_t>();
  o.argmax = r.GetVector<Token>();
  if (r.Get<bool>()) {
    TypeCounts c;
    c.alphabet = r.Get<int>();
    c.period = r.Get<int>();
    c.locality = r.Get<int>();
    c.length = r.Get<std::uint64_t>();
    c.far = r.GetVector<std::uint64_t>();
    c.suffix = r.GetVector<Token>();
    o.argmax_counts = std::move(c);
  }
  return o;
}

// Lengths 1 … N are the dealer's items (weighted by their evaluations, so short lengths travel
// together), reduced in order until the first disagreement; `search` runs one length.
void SearchLengths(const Transformer& f, const Transformer& g, const ThresholdOptions& options,
                   const std::function<double(std::uint64_t)>& weight,
                   const std::function<LengthOutcome(std::uint64_t, std::uint64_t&)>& search,
                   ThresholdResult& result) {
  ItemDealer& dealer = options.dealer ? *options.dealer : LocalDealer();
  DealWeighted(
      dealer, 1, options.max_length + 1, weight,
      [&](std::uint64_t t) {
        std::uint64_t evaluations = 0;
        const LengthOutcome outcome = search(t, evaluations);
        return OutcomeBytes(outcome, evaluations);
      },
      [&](std::uint64_t t, std::string&& bytes) {
        const LengthOutcome outcome = OutcomeFromBytes(bytes, result.evaluations);
        return !Record(f, g, t, outcome, options.epsilon, result);
      });
}

ThresholdResult FindByStatistics(const Transformer& f, const Transformer& g,
                                 const ThresholdOptions& options) {
  ThresholdResult result;
  result.method = ThresholdMethod::kStatistics;
  result.view = JointViewOf({&f, &g});
  const JointView view = result.view;
  SearchLengths(
      f, g, options,
      [&](std::uint64_t t) {
        return static_cast<double>(CountStatistics(view.alphabet, view.period, view.locality, t));
      },
      [&](std::uint64_t t, std::uint64_t& evaluations) {
        return SearchStatistics(f, g, view, t, evaluations);
      },
      result);
  result.exhaustive_up_to = result.checked_up_to;
  result.exhaustive = true;
  return result;
}

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
        return t <= exhaustive ? SearchAllStrings(f, g, alphabet, t, evaluations)
                               : SearchRandomStrings(f, g, alphabet, t, options, evaluations);
      },
      result);
  result.exhaustive_up_to = std::min(exhaustive, result.checked_up_to);
  result.exhaustive = result.checked_up_to <= exhaustive;
  return result;
}

}  // namespace

const char* ThresholdMethodName(ThresholdMethod method) {
  return method == ThresholdMethod::kStatistics ? "statistics" : "exhaustive+random";
}

std::uint64_t CountStatistics(int alphabet, int period, int locality, std::uint64_t length) {
  const std::uint64_t m = std::min<std::uint64_t>(length, static_cast<std::uint64_t>(locality) + 1);
  std::uint64_t count = 1;
  for (std::uint64_t k = 0; k < m; ++k) count = SaturatingMul(count, alphabet);
  for (int r = 0; r < period; ++r)
    count = SaturatingMul(count, Multichoose(ClassSize(length - m, period, r), alphabet - 1));
  return count;
}

ThresholdResult FindThreshold(const Transformer& f, const Transformer& g,
                              const ThresholdOptions& options) {
  CheckCommon(f, g, options);
  if (TwoLayerPair(f, g)) {
    CheckStringLimits(f, g, options);
    return FindByStrings(f, g, options);
  }
  CheckStatisticsLimits(f, g, options.max_length);
  return FindByStatistics(f, g, options);
}

}  // namespace ltsim
