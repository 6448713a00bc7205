// The length profile of a one-layer pair: the largest gap at each length, the largest over the
// training lengths, the supremum over every length, and their ratio, every number a certified
// bracket (docs/theory.md §14).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"
#include "ltsim/threshold/certify.h"

namespace ltsim {

/// The longest training length whose every length is searched one by one.
inline constexpr std::uint64_t kProfileMaxTrainLength = 4096;
/// The most grid lengths beyond the training length.
inline constexpr int kProfileMaxPoints = 1000;

struct ProfileOptions {
  std::uint64_t train_length = 0;    ///< n: every length 1 … n is searched (0: none)
  std::uint64_t max_length = 10000;  ///< N ≥ max(n, 1): the grid's last length
  int points = 30;  ///< grid lengths in (n, N], evenly in log (distinct integers; N always)
  /// The supremum's bracket is refined until upper − lower ≤ max(tolerance · lower, 1e-9).
  double tolerance = 1e-3;
  int max_certify_runs = 40;  ///< certify runs of the supremum's bisection
  /// Each certify run starts its exact part at T₀ = max(n, 64) (CertifyOptions::initial_length)
  /// with these budgets: boxes of its limit search, and evaluations
  /// of each of its exact threshold runs (a run that spends them leaves its lengths to the
  /// limit search, or reports a disagreement "at most" at a length: still certified).
  std::uint64_t max_boxes = 200'000;
  std::uint64_t certify_evaluations = 200'000;
  std::uint64_t seed = 1;  ///< printed; nothing is random
  int threads = 0;         ///< the threshold's threads (results never depend on them)
  /// Per grid length: (lengths done, lengths in all); per certify run: its ε.
  std::function<void(std::uint64_t, std::uint64_t, const std::string&)> progress;
};

/// The largest gap max_{|x| = T} ‖f(x) − g(x)‖_∞ at one length: lower is attained by `witness`
/// (evaluated), upper a certified bound (docs/theory.md §14.1).
struct ProfilePoint {
  std::uint64_t length = 0;
  double lower = 0.0, upper = 0.0;
  std::vector<Run> witness;
};

struct ProfileResult {
  std::vector<ProfilePoint> points;  ///< increasing lengths: 1 … n, then the grid
  /// ε_train(n) = max_{T ≤ n} (largest gap at T); NaN when n = 0.
  double train_lower = std::numeric_limits<double>::quiet_NaN();
  double train_upper = std::numeric_limits<double>::quiet_NaN();
  /// sup over every length of the largest gap: lower attained by a string of length
  /// sup_witness_length (sup_witness when known as runs), upper certified.
  double sup_lower = 0.0;
  double sup_upper = std::numeric_limits<double>::infinity();
  std::vector<Run> sup_witness;
  std::uint64_t sup_witness_length = 0;
  /// "tolerance" (bracket as narrow as asked), "certify-undecided" (three certify runs in a row
  /// undecided by certify's own tolerance or budgets) or "runs" (max_certify_runs spent).
  std::string sup_status;
  int certify_runs = 0;
  /// sup / ε_train: [sup_lower / train_upper, sup_upper / train_lower] (NaN without n; +∞
  /// when train_lower is 0).
  double ratio_lower = std::numeric_limits<double>::quiet_NaN();
  double ratio_upper = std::numeric_limits<double>::quiet_NaN();
  JointView view;
  double seconds = 0.0;
};

/// The profile of docs/theory.md §14. InputError / OptionError before any evaluation for
/// two-layer models, `log` bias scaling, certify's and the threshold's limits, N < max(n, 1),
/// n > kProfileMaxTrainLength, points outside [1, kProfileMaxPoints], tolerance ≤ 0.
ProfileResult ComputeProfile(const Transformer& f, const Transformer& g,
                             const ProfileOptions& options);

/// The grid of ComputeProfile: 1 … n, then `points` lengths in (n, N] evenly in log (rounded,
/// duplicates dropped, N last).
std::vector<std::uint64_t> ProfileLengths(std::uint64_t n, std::uint64_t max_length, int points);

}  // namespace ltsim
