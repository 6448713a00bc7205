// The length profile of a one-layer pair (docs/theory.md §14): exact largest gaps per length
// from the threshold at a single length, the supremum from a bisection of certify runs.
#include "ltsim/threshold/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "ltsim/core/error.h"

namespace ltsim {
namespace {

// ε of the single-length threshold runs: any gap above it (and above the threshold's rounding
// allowance) makes the length "disagree", and the threshold then maximises the gap at it.
constexpr double kProbeEpsilon = 0.0;
// Brackets narrower than this are not refined: the threshold's and certify's verdicts allow
// a relative 1e-9 for rounding (kThresholdGapTolerance), so finer ε say nothing new.
constexpr double kAbsoluteTolerance = 1e-9;

void CheckOptions(const Transformer& f, const Transformer& g, const ProfileOptions& o) {
  if (f.layers.size() != 1 || g.layers.size() != 1)
    throw InputError(
        "profile: one-layer pairs only (certify's supremum is one-layer; for two layers use "
        "`ltsim threshold`'s per-length gap brackets)");
  if (o.train_length > kProfileMaxTrainLength)
    throw OptionError("train_length", fmt::format("is at most {} (every length up to it is "
                                                  "searched one by one)",
                                                  kProfileMaxTrainLength));
  if (o.max_length < std::max<std::uint64_t>(o.train_length, 1))
    throw OptionError("max_length", "must be at least 1 and at least the training length");
  if (o.max_length > kThresholdMaxLength)
    throw OptionError("max_length", fmt::format("is at most {}", kThresholdMaxLength));
  if (o.points < 1 || o.points > kProfileMaxPoints)
    throw OptionError("points", fmt::format("must be in [1, {}]", kProfileMaxPoints));
  if (!(o.tolerance > 0.0) || !std::isfinite(o.tolerance))
    throw OptionError("tolerance", "must be a positive number");
  if (o.max_certify_runs < 1) throw OptionError("max_certify_runs", "must be at least 1");
  if (o.max_boxes < 1) throw OptionError("max_boxes", "must be at least 1");
  if (o.certify_evaluations < 1) throw OptionError("certify_evaluations", "must be at least 1");
}

// The largest gap at length T (§14.1): the threshold searches only T with ε = 0, so any gap
// above its rounding allowance is a disagreement at T, where the threshold evaluates or bounds
// every statistic against the largest gap found.
ProfilePoint PointAt(const Transformer& f, const Transformer& g, std::uint64_t T,
                     const ProfileOptions& o, JointView& view) {
  ThresholdOptions t;
  t.epsilon = kProbeEpsilon;
  t.min_length = T;
  t.max_length = T;
  t.threads = o.threads;
  t.seed = o.seed;
  const ThresholdResult r = FindThreshold(f, g, t);
  view = r.view;
  ProfilePoint p;
  p.length = T;
  p.upper = std::numeric_limits<double>::infinity();  // unless the search covered T
  if (r.max_gap_per_length.size() >= T) p.lower = std::max(0.0, r.max_gap_per_length[T - 1]);
  if (r.complete && r.checked_up_to == T && r.gap_upper_per_length.size() >= T)
    p.upper = r.gap_upper_per_length[T - 1];
  if (r.first_disagreement) {
    p.lower = std::max(p.lower, r.gap);
    p.witness = r.witness;
  }
  // At a disagreeing T both are the same maximum reached along two routes, whose rounding may
  // differ in the last bits (the threshold's 1e-9); a larger difference is left to be seen.
  if (p.upper < p.lower && p.lower - p.upper <= 1e-9 * (1.0 + p.lower)) p.upper = p.lower;
  return p;
}

// The threshold's rounding allowance around an evaluated gap (§11.1's relative 1e-9).
double Allowance(double gap) { return 1e-9 * (1.0 + std::abs(gap)); }

std::uint64_t RunsLength(const std::vector<Run>& runs) {
  std::uint64_t length = 0;
  for (const Run& run : runs) length += run.count;
  return length;
}

}  // namespace

std::vector<std::uint64_t> ProfileLengths(std::uint64_t n, std::uint64_t max_length, int points) {
  std::vector<std::uint64_t> lengths;
  for (std::uint64_t t = 1; t <= n; ++t) lengths.push_back(t);
  const double first = static_cast<double>(std::max<std::uint64_t>(n, 1));
  const double last = static_cast<double>(max_length);
  for (int k = 1; k <= points; ++k) {
    const double x = points == 1 ? last : first * std::pow(last / first, double(k) / points);
    const auto t = std::min<std::uint64_t>(max_length, std::llround(x));
    if (t > n && (lengths.empty() || t > lengths.back())) lengths.push_back(t);
  }
  if (lengths.empty() || lengths.back() != max_length) lengths.push_back(max_length);
  return lengths;
}

ProfileResult ComputeProfile(const Transformer& f, const Transformer& g, const ProfileOptions& o) {
  CheckOptions(f, g, o);
  const auto start = std::chrono::steady_clock::now();
  ProfileResult result;
  const std::vector<std::uint64_t> lengths = ProfileLengths(o.train_length, o.max_length, o.points);
  const auto note = [&](std::uint64_t done, const std::string& line) {
    if (o.progress) o.progress(done, lengths.size(), line);
  };
  CertifyOptions c;
  c.seed = o.seed;
  c.threads = o.threads;
  c.max_boxes = o.max_boxes;
  c.exact_evaluations = o.certify_evaluations;
  c.initial_length = std::max<std::uint64_t>(o.train_length, 64);
  c.extension_evaluations = std::min(c.extension_evaluations, o.certify_evaluations);
  // Every limit certify has (log scaling, contexts), before the grid's work is spent.
  CheckCertifyInputs(f, g, c);
  const auto certify = [&](double eps) {
    c.epsilon = eps;
    ++result.certify_runs;
    const std::string run = fmt::format("certify run {} at ε = {:.6g}", result.certify_runs, eps);
    note(lengths.size(), run);
    c.progress = [&](std::uint64_t, const std::string& line) {
      note(lengths.size(), run + ": " + line);
    };
    return Certify(f, g, c);
  };
  ProfilePoint best;
  for (std::uint64_t T : lengths) {
    ProfilePoint p = PointAt(f, g, T, o, result.view);
    if (p.lower > best.lower) best = p;
    if (o.train_length > 0 && T <= o.train_length) {
      result.train_lower =
          std::isnan(result.train_lower) ? p.lower : std::max(result.train_lower, p.lower);
      result.train_upper =
          std::isnan(result.train_upper) ? p.upper : std::max(result.train_upper, p.upper);
    }
    result.points.push_back(std::move(p));
    note(result.points.size(), fmt::format("T = {}", T));
  }
  // The supremum (§14.2): [lower, upper] holds it; lower is attained, upper certified.
  double lower = best.lower, upper = std::numeric_limits<double>::infinity();
  std::vector<Run> witness = best.witness;
  std::uint64_t witness_length = best.length;
  const auto take = [&](const CertifyResult& r) {
    if (r.verdict != CertifyVerdict::kDisagrees) upper = std::min(upper, r.sup_gap_upper);
    // A gap some string attains: the witness's (a string) or the best statistic's.
    if (!r.witness.empty() && r.witness_gap > lower) {
      lower = r.witness_gap;
      witness = r.witness;
      witness_length = RunsLength(r.witness);
    }
    if (r.sup_gap_lower > lower) {
      lower = r.sup_gap_lower;
      witness.clear();
      witness_length = r.lower_statistic.length;
    }
  };
  const auto narrow = [&] {
    return upper - lower <= std::max(o.tolerance * lower, kAbsoluteTolerance);
  };
  result.sup_status = "runs";
  if (narrow()) result.sup_status = "tolerance";
  // Certify undecided (its box or evaluation budget) still narrows the bracket from above;
  // three such runs in a row end the bisection.
  int undecided_in_a_row = 0;
  while (result.sup_status == "runs" && result.certify_runs < o.max_certify_runs) {
    // The first run asks whether the best gap found is (nearly) the supremum; then bisection,
    // or doubling while no upper bound is known.
    const double eps = result.certify_runs == 0 ? lower * (1.0 + o.tolerance) + kAbsoluteTolerance
                       : std::isfinite(upper)   ? 0.5 * (lower + upper)
                                                : 2.0 * lower + kAbsoluteTolerance;
    const CertifyResult r = certify(eps);
    take(r);
    undecided_in_a_row = r.verdict == CertifyVerdict::kUndecided ? undecided_in_a_row + 1 : 0;
    if (narrow()) {
      result.sup_status = "tolerance";
    } else if (undecided_in_a_row == 3) {
      result.sup_status = "certify-undecided";
    }
  }
  result.sup_lower = lower;
  result.sup_upper = upper;
  result.sup_witness = std::move(witness);
  result.sup_witness_length = witness_length;
  if (o.train_length > 0) {
    // Interval division with the verdict's rounding allowance taken off the attained ends
    // (§14.3): a training gap within rounding of 0 makes the ratio unbounded above.
    const double sup_attained = std::max(0.0, lower - Allowance(lower));
    const double train_attained = std::max(0.0, result.train_lower - Allowance(result.train_lower));
    result.ratio_lower = result.train_upper > 0.0 ? sup_attained / result.train_upper
                                                  : std::numeric_limits<double>::infinity();
    result.ratio_upper =
        train_attained > 0.0 ? upper / train_attained : std::numeric_limits<double>::infinity();
    if (sup_attained == 0.0 && result.train_upper == 0.0)
      result.ratio_lower = std::numeric_limits<double>::quiet_NaN();  // 0/0
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace ltsim
