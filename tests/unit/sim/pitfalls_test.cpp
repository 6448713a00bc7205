// The two pitfalls of docs/theory.md §2.4: the baseline falls into each, the model-aware
// construction does not; and the padding of a residue class that holds no filler type (Δ* > 1).
#include <gtest/gtest.h>

#include <cmath>

#include "ltsim/bounds/registry.h"
#include "ltsim/check/sandwich.h"
#include "ltsim/sim/frequency_matching.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

// One hardmax head over coordinates (0: [token 0], 1: [token 1], 2: [token 2], 3: const 1,
// 4: output). Logit of a key = Σ_s key_weight[s]·[key is s] (+ φ[t] near the query); the
// output is the attention share of token 1.
Transformer ShareModel(int period, int locality, std::vector<double> key_weight,
                       std::vector<double> bias) {
  Transformer m;
  m.name = "share";
  m.alphabet = 3;
  m.width = 5;
  m.period = period;
  m.locality = locality;
  m.embedding = Matrix::Zero(3, 5);
  for (int s = 0; s < 3; ++s) m.embedding(s, s) = m.embedding(s, 3) = 1.0;
  m.positional = Matrix::Zero(period, 5);
  Head head{Matrix::Zero(5, 5), Matrix::Zero(5, 5), Vector::Map(bias.data(), bias.size())};
  for (int s = 0; s < 3; ++s) head.qk(s, 3) = key_weight[s];
  head.ov(4, 1) = 1.0;
  Layer layer;
  layer.attention = Attention::kHardmax;
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, 5);
  m.readout_weight(0, 4) = 1.0;
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "share");
  return m;
}

// Pitfall 1, a single global scale with a suffix tie: far keys of token 0 (1000 of them)
// are maximal and the key just before the query (a 1, lifted by φ[1] = 1) ties them, so
// f(x) = 1/1002. Scaling every count by n/T ≈ 1/1000 leaves one far 0 against the tie:
// 1 or 2 vs the tie, f(z) ≥ 1/4.
TEST(Pitfalls, GlobalScaleWithASuffixTie) {
  const Transformer f = ShareModel(1, 1, {1.0, 0.0, 0.0}, {0.0, 1.0});
  const auto x = MakeRunSource({{1, 999000}, {0, 1000}, {1, 1}, {0, 1}}, "x");
  const SandwichResult agnostic = RunSandwich(f, f, *x, {"frequency-agnostic", 1000, 1});
  EXPECT_NEAR(agnostic.f.on_x[0], 1.0 / 1002.0, 1e-15);
  EXPECT_GT(agnostic.f.sim, 0.2);  // one or two far 0s against the tie: f(z) ≥ 1/4
  const SandwichResult aware = RunSandwich(f, f, *x, {"frequency", 1000, 1});
  EXPECT_LE(aware.z_length, 1000u);
  EXPECT_LT(aware.f.sim, 1e-5);  // ~ |1/1000 − 1/1002|: the 0s keep a total of Θ ≈ 998
  EXPECT_TRUE(aware.rate_holds);
  EXPECT_LE(aware.f.sim, aware.f.lipschitz * aware.simulation.eta);
}

// Pitfall 2, exact-small/scaled-large inside one maximal set: tokens 0 and 1 are maximal,
// 0 is rare (50 in all, spread over Δ = 20 residues) and 1 common (10^5); 10^6 filler 2s.
// Keeping each rare type once while scaling the common one by n/T inflates the 0s' share
// 20-fold; one scale for the whole maximal set (and the whole budget for it) does not.
TEST(Pitfalls, ExactSmallScaledLargeInOneMaximalSet) {
  const Transformer f = ShareModel(20, 0, {1.0, 1.0, 0.0}, {0.0});
  std::vector<ltsim::Run> runs;
  for (int block = 0; block < 50; ++block) {
    runs.push_back({2, 20000});
    runs.push_back({1, 2000});
    runs.push_back({0, 1});
  }
  runs.push_back({1, 1});
  const auto x = MakeRunSource(runs, "x");
  const SandwichResult agnostic = RunSandwich(f, f, *x, {"frequency-agnostic", 20000, 1});
  const SandwichResult aware = RunSandwich(f, f, *x, {"frequency", 20000, 1});
  // f(x) = share of 1s among the 0s and 1s ≈ 1 − 50/100051.
  EXPECT_NEAR(agnostic.f.on_x[0], 100001.0 / 100051.0, 1e-12);
  EXPECT_GT(agnostic.f.sim, 5e-3);
  EXPECT_LT(aware.f.sim, 1e-3);
  EXPECT_TRUE(aware.rate_holds);
}

// Pitfall 3, one scale per coupled support (docs/theory.md §2.4): f's head ties every key
// (support {0, 1} + 2 suffix slots), g's head takes the far 0s and the query (a 1 lifted by
// φ[0] = 1). Type 0 couples them; g's support has total 23 + 1, so one common scale made
// f's z-total about |x|/23 times Θ and Θ fell like 1/|x| (Θ ≈ 2.3 at n = 2000 on this x).
// With 0 light in f's support (δ = 1/2), g is copied exactly and f scaled on its own: the
// certificate stays ≈ 2·23/2000 at every |x| (the share of the 0s in z against x), and |z|
// needed for a fixed ε no longer grows with |x|.
TEST(Pitfalls, SmallSupportSharingATypeWithALargeOne) {
  const Transformer f = ShareModel(1, 1, {0.0, 0.0, 0.0}, {0.0, 0.0});
  const Transformer g = ShareModel(1, 1, {1.0, 0.0, 0.0}, {1.0, 0.0});
  for (std::uint64_t scale : {1, 10, 100, 1000, 10000}) {
    // 1^17363 0^21 1^2605 0 1^5 0 1^4 with its long runs scaled, its rare counts kept.
    const auto x = MakeRunSource(
        {{1, 17363 * scale}, {0, 21}, {1, 2605 * scale}, {0, 1}, {1, 5}, {0, 1}, {1, 4}}, "x");
    const SandwichResult r = RunSandwich(f, g, *x, {"frequency", 2000, 1});
    SCOPED_TRACE(scale);
    EXPECT_EQ(r.z_length, 2000u);
    EXPECT_NEAR(r.g.on_x[0], 1.0 / 24.0, 1e-15);  // the query against the 23 far 0s
    EXPECT_EQ(r.g.sim, 0.0);                      // g's support is copied exactly
    EXPECT_LT(r.simulation.eta, 0.026);           // ≤ 2·23/(2000 − 24) + rounding
    EXPECT_TRUE(r.rate_holds);
    EXPECT_TRUE(LessOrClose(r.f.sim, r.f.lipschitz * r.simulation.eta));
  }
}

// Counts near 2^64 (a run-length x such as 0^18446744073709550000): a count rounds to 2^64 in
// double, which no cast to uint64 may take, and a residue's sum must not wrap into "fits".
TEST(Pitfalls, CountsNearTwoToTheSixtyFour) {
  const Transformer f = ShareModel(1, 0, {1.0, 1.0, 0.0}, {0.0});
  TypeCounts x;
  x.alphabet = 3;
  x.far = {18446744073709550000ull, 1000, 1};
  x.suffix = {1};
  x.length = x.far[0] + x.far[1] + x.far[2] + 1;
  for (std::uint64_t far : {std::uint64_t{1999}, std::uint64_t{1} << 62}) {
    const FrequencyPlan plan = PlanFrequencyMatching(x, {far}, far + 1, {&f});
    for (std::size_t k = 0; k < 2; ++k) {  // the support {0, 1}; token 2 is the filler
      EXPECT_LE(plan.far[k], x.far[k]) << far;
      EXPECT_GE(plan.far[k], 1u) << far;  // every support type stays present
    }
    EXPECT_EQ(plan.far[0] + plan.far[1] + plan.far[2], far);
    EXPECT_LT(plan.eta, 1e-2) << far;
  }
}

// One hardmax head over coordinates (0: [token 0], 1: [token 1], 2: const 1, 3: [residue 0],
// 4: [residue 1], 5: output), period 2, τ = 0: the logit of a key is Σ_c key_weight[c]·key[c],
// and the output is Σ_c α·key[c] over the coordinates c with read[c] = 1.
Transformer ResidueModel(std::vector<double> key_weight, std::vector<int> read) {
  Transformer m;
  m.name = "residue";
  m.alphabet = 2;
  m.width = 6;
  m.period = 2;
  m.locality = 0;
  m.embedding = Matrix::Zero(2, 6);
  for (int s = 0; s < 2; ++s) m.embedding(s, s) = m.embedding(s, 2) = 1.0;
  m.positional = Matrix::Zero(2, 6);
  for (int r = 0; r < 2; ++r) m.positional(r, 3 + r) = 1.0;
  Head head{Matrix::Zero(6, 6), Matrix::Zero(6, 6), Vector::Zero(1)};
  for (int c = 0; c < 5; ++c) head.qk(c, 2) = key_weight[c];
  for (int c : read) head.ov(5, c) = 1.0;
  Layer layer;
  layer.attention = Attention::kHardmax;
  layer.heads.push_back(head);
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, 6);
  m.readout_weight(0, 5) = 1.0;
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "residue");
  return m;
}

// Pitfall 4, a residue class with no filler type (Δ* = 2, docs/theory.md §2.4, step 5). f's head
// takes every far a (token 0) and reads the share of residue 0 among them; g's head takes the far
// b's at residue 0 and the query (a b at residue 0). On x = (a a a b)^m, residue 0 holds a and b,
// residue 1 only a: every present type lies in a support, so no class has a filler. One scale
// per support gives g's b's Θ and f's a's Θ/3 + 2Θ/3, so residue 0 fills at Θ = 3N/4 while
// residue 1 holds N/2: padding its a's with N/2 more turns f's shares (1/3, 2/3) into (1/5, 4/5),
// a certificate of 4/15 at any length. Raising every scale below ν to ν (the common scale the
// residue sizes allow) and sharing each class's room among its elastic types keeps f's shares.
TEST(Pitfalls, ResidueClassWithoutAFiller) {
  const Transformer f = ResidueModel({1.0, 0.0, 0.0, 0.0, 0.0}, {3});
  const Transformer g = ResidueModel({0.0, 1.0, 0.0, 1.0, 0.0}, {1});
  ConstantMap constants = PairConstants(f, g);
  ASSERT_EQ(constants.at("H"), 2.0);
  ASSERT_EQ(constants.at("Delta"), 2.0);
  const double lipschitz = constants.at("L");
  ASSERT_NEAR(lipschitz, std::sqrt(3.0), 1e-12);  // ‖O‖ = ‖W‖ = 1, R = ‖E_s + P_r‖ = √3
  const double eps = 0.1 * lipschitz;             // the target η = ε/L = 0.1
  constants["eps"] = eps;
  const double bound = FindBound("frequency-length").value(constants);
  const auto n = static_cast<std::uint64_t>(std::ceil(bound));
  // x = (a a a b)^m far longer than the bound: residue 0 holds m a's and m − 1 far b's (the
  // last b is the query), residue 1 holds 2m a's.
  const std::uint64_t m = 1000000000000ull;
  TypeCounts x;
  x.alphabet = 2;
  x.period = 2;
  x.locality = 0;
  x.far = {m, m - 1, 2 * m, 0};  // (a, 0), (b, 0), (a, 1), (b, 1)
  x.suffix = {1};
  x.length = 4 * m;
  ASSERT_GT(static_cast<double>(x.length), 1e3 * bound);
  // |z| ≡ |x| (mod 2) at most n, and its far region's residue sizes.
  const std::uint64_t z_length = n - n % 2;
  const std::uint64_t far = z_length - 1;
  const std::vector<std::uint64_t> sizes = {far / 2, far - far / 2};  // residue 1 holds j = 1
  const FrequencyPlan before = PlanFrequencyMatching(x, sizes, z_length, {&f, &g}, false);
  const FrequencyPlan after = PlanFrequencyMatching(x, sizes, z_length, {&f, &g});
  EXPECT_GT(before.padded_groups, 0);
  EXPECT_NEAR(before.eta, 4.0 / 15.0, 1e-3);
  EXPECT_GT(before.eta * lipschitz, eps);  // the construction without step 5 fails here
  EXPECT_EQ(after.padded_groups, 0);
  EXPECT_GE(after.balanced_residues, 1);  // the class that does not fill at ν
  EXPECT_LE(after.eta * lipschitz, eps);
  EXPECT_LE(after.eta, after.eta_rate);
  EXPECT_LT(after.eta, 1e-4);  // ν·c within a few units for every type: rounding only
  for (int r = 0; r < 2; ++r) EXPECT_EQ(after.far[2 * r] + after.far[2 * r + 1], sizes[r]);
  for (int k = 0; k < 3; ++k) EXPECT_GE(after.far[k], 1u);  // every support type stays
  EXPECT_EQ(after.far[3], 0u);                              // and no new type appears

  // The same on a string: the simulator's z certifies, and sim ≤ L·η holds on it.
  std::vector<ltsim::Run> runs;
  for (int block = 0; block < 100000; ++block) runs.insert(runs.end(), {{0, 3}, {1, 1}});
  const auto xs = MakeRunSource(runs, "x");
  const SandwichResult r = RunSandwich(f, g, *xs, {"frequency", 2000, 1});
  EXPECT_EQ(r.z_length, 2000u);
  EXPECT_NEAR(r.f.on_x[0], 1.0 / 3.0, 1e-12);
  EXPECT_LT(r.simulation.eta, 1e-2);
  EXPECT_LT(r.f.sim, 1e-2);
  EXPECT_TRUE(r.rate_holds);
  const TypeCounts counts = CountTypes(*xs, 2, 2, 0);
  const std::vector<std::uint64_t> small = {999, 1000};
  const FrequencyPlan small_before = PlanFrequencyMatching(counts, small, 2000, {&f, &g}, false);
  EXPECT_GT(small_before.padded_groups, 0);
  EXPECT_GT(small_before.eta, 0.25);
}

}  // namespace
}  // namespace ltsim
