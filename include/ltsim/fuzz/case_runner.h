// One fuzzing case: a pair, an input, a method; the properties it checks and their evidence.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ltsim/check/sandwich.h"
#include "ltsim/gen/input_generator.h"
#include "ltsim/gen/model_generator.h"
#include "ltsim/io/recheck.h"
#include "ltsim/model/transformer.h"
#include "ltsim/sim/simulator.h"

namespace ltsim {

/// Everything a case needs, so that a saved case replays exactly (docs/design.md §4: the
/// simulator's and the test function's seeds are part of the case).
struct CaseSpec {
  std::uint64_t index = 0;  ///< case id within its campaign
  Transformer f, g;
  InputSpec input;
  std::string method = "frequency";
  std::uint64_t target_length = 0;         ///< n
  std::uint64_t block_length = 0;          ///< ℓ for markov/blocks (0: ⌈n^(1/3)⌉)
  std::uint64_t sim_seed = 0;              ///< the simulator's seed
  std::uint64_t function_seed = 0;         ///< the Lemma 5.3 test function's seed
  double epsilon = 1e-3;                   ///< the agreement threshold ε of docs/theory.md §1
  double lemma_constant = 1.0;             ///< C in statistic ≤ C·(G + L)(τ + 1)/n^(1/3)
  PairKind pair = PairKind::kIndependent;  ///< how g was made from f (reported, not replayed)
  bool user_pair = false;  ///< f and g are a user's models (`fuzz --pair`), reported as "user"
};

/// The properties a case can check (docs/theory.md §1, §2.4, §4.4, §4.7; docs/model.md §4.3).
enum class Property {
  kSandwich,       ///< gap_x ≤ sim_f + gap_z + sim_g: the triangle inequality on the same
                   ///< vectors, a sanity check of the arithmetic, not a statement of a theorem
  kTransfer,       ///< gap_z ≤ ε ⇒ gap_x ≤ ε + sim_f + sim_g
  kFrequencyRate,  ///< the method's η: sim_f ≤ L(f)·η and sim_g ≤ L(g)·η
  kFiniteHardmax,  ///< a `finite` one-layer model is within FiniteHardmaxTolerance of its
                   ///< hardmax twin for T_hard ≤ T < T_split (docs/theory.md §2.6)
  kLemma53,        ///< markov/blocks: |avg_x p − avg_z p| ≤ C·(G + L)(τ + 1)/n^(1/3)
  kTwoLayerBound,  ///< two layers, softmax second layer: sim ≤ B(f, x, z) (docs/theory.md §4.7)
};
inline constexpr int kPropertyCount = 6;

/// The names of the properties in cases.jsonl, summaries and witnesses.
inline constexpr io::NameTable<Property, kPropertyCount> kPropertyNames{
    "property",
    {{{Property::kSandwich, "sandwich"},
      {Property::kTransfer, "transfer"},
      {Property::kFrequencyRate, "frequency-rate"},
      {Property::kFiniteHardmax, "finite-hardmax"},
      {Property::kLemma53, "lemma53"},
      {Property::kTwoLayerBound, "two-layer-bound"}}}};

/// "sandwich", "transfer", "frequency-rate", "finite-hardmax", "lemma53", "two-layer-bound".
const char* PropertyName(Property property);
/// Inverse of PropertyName; InputError listing the names.
Property ParseProperty(const std::string& name);
/// Whether a property states content of the theorems (transfer, frequency-rate,
/// finite-hardmax, lemma53, two-layer-bound), or is only a sanity check that cannot fail but by a
/// bug in the arithmetic (sandwich: the triangle inequality on the numbers the case computed).
bool IsTheoremProperty(Property property);

/// The finite-hardmax property's bound for a `finite` one-layer model with `none` bias scaling
/// on a string of length T whose output is `on_x`: 10⁻⁹·(1 + ‖f(x)‖_∞) + L(f)·2·tanh(ϑ ln T/4)
/// (docs/theory.md §2.6, §8.5); NaN when the property does not apply (another mode or depth,
/// `log` scaling, T outside [T_hard, T_split)).
double FiniteHardmaxTolerance(const Transformer& model, std::uint64_t length, double output_scale);

/// The high-precision recheck of one refuted property (status: kAgrees when the property fails
/// in high precision too, a refutation; kDiffers when it holds there, the double refutation a
/// rounding artefact; kSkipped when no high-precision evaluation applies, `reason` says why): the
/// same observed and bound as the double check, recomputed from f(x), f(z), g(x), g(z) (or the
/// statistic) in PreciseReal and written with 40 significant digits, and the verdict under the same
/// slack (LessOrClose).
struct Recheck {
  RecheckStatus status = RecheckStatus::kNone;
  std::string reason;  ///< skipped: why; otherwise what was taken from the double run
  std::string observed, bound;
  std::vector<std::string> f_x, g_x, f_z, g_z;  ///< the precise outputs used (may be empty)
};

/// One property on one case: whether it applied, whether it held, and how close it came:
/// ratio = observed / bound (≤ 1 when it holds; the worst ratio is what a campaign reports).
/// observed, bound and ratio are the double-precision numbers; `holds` is the verdict after
/// the recheck: a double refutation that high precision does not confirm holds.
struct Outcome {
  bool checked = false;
  bool holds = true;
  double observed = 0.0;
  double bound = 0.0;
  double ratio = 0.0;
  Recheck recheck;
};

/// Every number of a case: the sandwich as RunSandwich measured it (both models on x and z,
/// sim, gaps, L, the simulation with z and η), the Lemma 5.3 difference, and the properties.
struct CaseResult {
  SandwichResult sandwich;
  double statistic = std::numeric_limits<double>::quiet_NaN();  ///< Lemma 5.3 difference
  Outcome outcomes[kPropertyCount];
  std::string error;  ///< an InputError the case raised (e.g. n below a method's minimum)

  const Outcome& outcome(Property p) const { return outcomes[static_cast<int>(p)]; }
  bool refuted() const;
};

/// Runs a case: builds z, evaluates both models on x and z, checks every property that
/// applies, and rechecks every refuted one in high precision (RecheckRefutations). Pure: the
/// same spec gives the same result on any thread. An InputError from the method (a request
/// it cannot meet) is recorded in `error`, not thrown.
CaseResult RunCase(const CaseSpec& spec);

}  // namespace ltsim
