// Known answers, derived by hand, for γ(f), T_hard, L(f), γ_pos and the head regimes
// (docs/model.md §4).
#include "ltsim/model/constants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ltsim/eval/evaluate.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Tolerance for constants that go through an SVD (Jacobi, iterative): a few ulps of the
// magnitudes involved (≤ 1e3 here), far below any difference the tests distinguish.
constexpr double kSvdTolerance = 1e-12;

// A one-layer model with one-hot tokens in coordinates 0 … S−1 and one-hot residues in
// S … S+Δ−1, so the logit of key (s, r') for query (y, r) is
//   M(s, y) + M(s, S+r) + M(S+r', y) + M(S+r', S+r)
// and every logit set of docs/model.md §4.2 can be written down from the entries of M.
Transformer OneHotModel(int alphabet, int period, int locality,
                        Attention attention = Attention::kHardmax, int precision_bits = 0) {
  Transformer model;
  model.name = "one-hot";
  model.alphabet = alphabet;
  model.period = period;
  model.locality = locality;
  model.width = alphabet + period;
  model.embedding = Matrix::Zero(alphabet, model.width);
  model.positional = Matrix::Zero(period, model.width);
  for (int s = 0; s < alphabet; ++s) model.embedding(s, s) = 1.0;
  for (int r = 0; r < period; ++r) model.positional(r, alphabet + r) = 1.0;
  Layer layer;
  layer.attention = attention;
  layer.precision_bits = precision_bits;
  model.layers.push_back(layer);
  model.readout_weight = Matrix::Zero(1, model.width);
  model.readout_bias = Vector::Zero(1);
  return model;
}

// Adds a head with logit matrix `qk` (zero when empty), identity OV and bias table `bias`.
void AddHead(Transformer& model, const Matrix& qk, const std::vector<double>& bias) {
  Head head;
  head.qk = qk.size() == 0 ? Matrix::Zero(model.width, model.width) : qk;
  head.ov = Matrix::Identity(model.width, model.width);
  head.bias = Vector::Map(bias.data(), static_cast<Eigen::Index>(bias.size()));
  model.layers.front().heads.push_back(head);
}

Matrix Zero(const Transformer& model) { return Matrix::Zero(model.width, model.width); }

// Every model built here must be a valid model, or the known answers mean nothing.
void ExpectValid(const Transformer& model) {
  EXPECT_NO_THROW(ValidateTransformer(model, "constants_test"));
}

// ---------------------------------------------------------------------------------------
// Logit margin γ(f)

TEST(LogitMargin, MinimumOverQueryTypes) {
  // S = 2, Δ = 1, τ = 0. Query 0 sees {M00, M10} ∪ {M00 + φ0} = {1, 0, 1}: gap 1.
  // Query 1 sees {M01, M11} ∪ {M11 + φ0} = {0.375, 0, 0}: gap 0.375. γ = 0.375.
  Transformer model = OneHotModel(2, 1, 0);
  Matrix m = Zero(model);
  m(0, 0) = 1.0;
  m(0, 1) = 0.375;
  AddHead(model, m, {0.0});
  ExpectValid(model);
  EXPECT_EQ(LogitMargin(model), 0.375);
}

// γ is quadratic in D = S·Δ, so it has a work limit; below it, equal
// keys (merged before sorting) change nothing.
TEST(LogitMargin, NotComputedOverTheWorkLimit) {
  Transformer model;
  model.alphabet = 20000;
  model.width = 1;
  model.period = 1;
  model.embedding = Matrix::Ones(model.alphabet, 1);
  model.positional = Matrix::Zero(1, 1);
  Layer layer;
  model.layers.push_back(layer);
  model.readout_weight = Matrix::Ones(1, 1);
  model.readout_bias = Vector::Zero(1);
  AddHead(model, Matrix::Ones(1, 1), {0.0});
  ExpectValid(model);
  EXPECT_GT(LogitMarginWork(model), kMaxLogitMarginWork);  // 20000² = 4·10^8 logits
  EXPECT_TRUE(std::isnan(LogitMargin(model)));
  model.alphabet = 8000;  // 6.4·10^7: computed
  model.embedding = Matrix::Ones(model.alphabet, 1);
  model.embedding(0, 0) = 2.0;
  ASSERT_LE(LogitMarginWork(model), kMaxLogitMarginWork);
  EXPECT_EQ(LogitMargin(model), 1.0);  // query 0 sees {4, 2} (gap 2), the others {2, 1}
}

TEST(LogitMargin, KeyIsTheRowAndQueryTheColumnOfM) {
  // a = keyᵀ M query, so query y sees column y. With M(1,0) = 0.5 and M(1,1) = 0.75:
  // query 0 sees {M00, M10, M00} = {0, 0.5, 0} (gap 0.5), query 1 sees {M01, M11, M11} =
  // {0, 0.75, 0.75} (gap 0.75): γ = 0.5. Reading rows instead would give query 0 the set
  // {0, 0, 0} and query 1 the set {0.5, 0.75, 0.75}: γ = 0.25.
  Transformer model = OneHotModel(2, 1, 0);
  Matrix m = Zero(model);
  m(1, 0) = 0.5;
  m(1, 1) = 0.75;
  AddHead(model, m, {0.0});
  EXPECT_EQ(LogitMargin(model), 0.5);
}

TEST(LogitMargin, QueryItselfCarriesPhiZero) {
  // M = 0: far keys all give 0; the query gives 0 + φ0 = 0.625. The only gap is 0.625.
  Transformer model = OneHotModel(2, 1, 0);
  AddHead(model, Matrix(), {0.625});
  ExpectValid(model);
  EXPECT_EQ(LogitMargin(model), 0.625);
}

TEST(LogitMargin, SuffixKeysCarryTheirBias) {
  // M = 0, τ = 2, φ = (0, 0.5, 0.75): 𝒜 = {0 (far), 0.5 (t=1), 0.75 (t=2), 0 (query)}.
  // Gaps 0.5 and 0.25: γ = 0.25 (the t = τ term must be included).
  Transformer model = OneHotModel(2, 1, 2);
  AddHead(model, Matrix(), {0.0, 0.5, 0.75});
  ExpectValid(model);
  EXPECT_EQ(LogitMargin(model), 0.25);
}

TEST(LogitMargin, SuffixKeyHasResidueQueryMinusT) {
  // S = 1, Δ = 3, τ = 1; logit = Q[r'][r] with Q = M restricted to the residue block.
  // Column r = 0 of Q is (0, 10, 20); every other entry is 0; φ = (0, 9.75).
  // Query residue 0: far {0, 10, 20}; the suffix key (t = 1) has residue (0 − 1) mod 3 = 2,
  // logit 20 + 9.75 = 29.75; the query 0 + 0. Gaps 10, 10, 9.75: min 9.75.
  // Query residues 1, 2: far {0}, suffix {9.75}, query {0}: gap 9.75. So γ = 9.75.
  // (Taking residue r + 1 instead would put 10 + 9.75 = 19.75 next to 20: γ = 0.25.)
  Transformer model = OneHotModel(1, 3, 1);
  Matrix m = Zero(model);
  m(1 + 1, 1 + 0) = 10.0;
  m(1 + 2, 1 + 0) = 20.0;
  AddHead(model, m, {0.0, 9.75});
  ExpectValid(model);
  EXPECT_EQ(LogitMargin(model), 9.75);
}

TEST(LogitMargin, MinimumOverHeads) {
  // Head 1: query φ0 = 0.5 against far 0: γ₁ = 0.5. Head 2: φ0 = 0.25: γ₂ = 0.25.
  Transformer model = OneHotModel(2, 1, 0);
  AddHead(model, Matrix(), {0.5});
  AddHead(model, Matrix(), {0.25});
  ExpectValid(model);
  EXPECT_EQ(LogitMargin(model), 0.25);
}

TEST(LogitMargin, InfiniteWhenNoSetHasAGap) {
  Transformer all_equal = OneHotModel(3, 2, 1);
  AddHead(all_equal, Matrix(), {0.0, 0.0});
  ExpectValid(all_equal);
  EXPECT_EQ(LogitMargin(all_equal), kInf);

  Transformer no_heads = OneHotModel(2, 1, 0);
  ExpectValid(no_heads);
  EXPECT_EQ(LogitMargin(no_heads), kInf);

  // A difference below the default θ = 1e-9 is a tie, not a gap.
  Transformer tiny = OneHotModel(2, 1, 0);
  Matrix m = Zero(tiny);
  m(1, 0) = 1e-10;
  AddHead(tiny, m, {0.0});
  EXPECT_EQ(LogitMargin(tiny), kInf);
}

// S = 3, query 0 sees {0, 0.25, 0.5} (plus its own 0); queries 1 and 2 see only zeros.
Transformer ThreeLevelModel(double theta) {
  Transformer model = OneHotModel(3, 1, 0);
  model.tie_tolerance = theta;
  Matrix m = Zero(model);
  m(1, 0) = 0.25;
  m(2, 0) = 0.5;
  AddHead(model, m, {0.0});
  return model;
}

TEST(LogitMargin, DifferencesAtOrBelowThetaAreTies) {
  // θ = 0.125 < 0.25: the smallest gap is 0.25.
  EXPECT_EQ(LogitMargin(ThreeLevelModel(0.125)), 0.25);
  // θ = 0.25: 0.25 is exactly θ, a tie; the gap 0 → 0.5 is the smallest difference above θ.
  EXPECT_EQ(LogitMargin(ThreeLevelModel(0.25)), 0.5);
  // θ = 0.375: differences 0.25 are ties, 0.5 is not (ties are not chained).
  EXPECT_EQ(LogitMargin(ThreeLevelModel(0.375)), 0.5);
  // θ = 0.5: every difference is at or below θ: no gap anywhere.
  EXPECT_EQ(LogitMargin(ThreeLevelModel(0.5)), kInf);
  for (double theta : {0.125, 0.25, 0.375, 0.5}) ExpectValid(ThreeLevelModel(theta));
}

TEST(LogitMargin, TieRuleAcrossQueryTypes) {
  // As MinimumOverQueryTypes (gaps 1 and 0.375), with θ = 0.375 the 0.375 gap is a tie.
  Transformer model = OneHotModel(2, 1, 0);
  model.tie_tolerance = 0.375;
  Matrix m = Zero(model);
  m(0, 0) = 1.0;
  m(0, 1) = 0.375;
  AddHead(model, m, {0.0});
  EXPECT_EQ(LogitMargin(model), 1.0);
  model.tie_tolerance = 0.25;
  EXPECT_EQ(LogitMargin(model), 0.375);
}

TEST(LogitMargin, PositionalLogitsAcrossResidues) {
  // S = 2, Δ = 2, τ = 0; M(S + r', S + r) = 1.5 when r' = r, else 0 ("attend to my residue").
  // Query (y, r): far {1.5 (r' = r), 0 (r' ≠ r)}, query 1.5 + φ0 = 1.5. γ = 1.5.
  Transformer model = OneHotModel(2, 2, 0);
  Matrix m = Zero(model);
  m(2, 2) = 1.5;
  m(3, 3) = 1.5;
  AddHead(model, m, {0.0});
  ExpectValid(model);
  EXPECT_EQ(LogitMargin(model), 1.5);
}

// ---------------------------------------------------------------------------------------
// Hardmax length T_hard = 2^(p/γ)

// A finite model with p bits whose γ is `gamma`: φ0 = γ against far logits 0.
Transformer FiniteModel(int bits, double gamma) {
  Transformer model = OneHotModel(2, 1, 0, Attention::kFinite, bits);
  AddHead(model, Matrix(), {gamma});
  return model;
}

TEST(HardmaxLength, TwoToThePOverGamma) {
  const Transformer a = FiniteModel(8, 0.5);  // p/γ = 16
  ExpectValid(a);
  EXPECT_EQ(LogitMargin(a), 0.5);
  EXPECT_EQ(Log2HardmaxLength(a), 16.0);
  EXPECT_EQ(HardmaxLength(a), 65536.0);

  const Transformer b = FiniteModel(3, 0.375);  // p/γ = 8
  EXPECT_EQ(Log2HardmaxLength(b), 8.0);
  EXPECT_EQ(HardmaxLength(b), 256.0);

  const Transformer c = FiniteModel(5, 2.0);  // p/γ = 2.5, T_hard = 4√2
  EXPECT_EQ(Log2HardmaxLength(c), 2.5);
  // exp2 of a non-integer: allow a few ulps of 5.66.
  EXPECT_NEAR(HardmaxLength(c), 4.0 * std::sqrt(2.0), 1e-13);
}

TEST(HardmaxLength, OneWhenMarginIsInfinite) {
  const Transformer model = FiniteModel(8, 0.0);  // all logits equal: γ = ∞
  EXPECT_EQ(LogitMargin(model), kInf);
  EXPECT_EQ(Log2HardmaxLength(model), 0.0);
  EXPECT_EQ(HardmaxLength(model), 1.0);
}

TEST(HardmaxLength, OverflowIsInfiniteButLog2StaysFinite) {
  const Transformer model = FiniteModel(2, std::ldexp(1.0, -10));  // p/γ = 2048
  EXPECT_EQ(Log2HardmaxLength(model), 2048.0);
  EXPECT_EQ(HardmaxLength(model), kInf);
}

TEST(HardmaxLength, NaNForNonFiniteLayers) {
  for (Attention attention : {Attention::kHardmax, Attention::kSoftmax}) {
    Transformer model = OneHotModel(2, 1, 0, attention);
    AddHead(model, Matrix(), {0.5});
    ExpectValid(model);
    EXPECT_TRUE(std::isnan(HardmaxLength(model))) << AttentionName(attention);
    EXPECT_TRUE(std::isnan(Log2HardmaxLength(model))) << AttentionName(attention);
  }
}

// θ = 0.4, p = 4, key logits 0, 0.3, 1.3 by token whatever the query (docs/theory.md §2.6's
// example): γ = 1, ϑ = 0.3, T_hard = 16, T_split = 2^(40/3) ≈ 10321.3. `ltsim info` reported
// T_hard = 16 as if finite equalled hardmax from there on, yet at T = 64 they differ.
Transformer NearTieModel() {
  Transformer model = OneHotModel(3, 1, 0, Attention::kFinite, 4);
  model.tie_tolerance = 0.4;
  Matrix qk = Zero(model);
  for (int q = 0; q < model.alphabet; ++q) {  // key row s, query token column y
    qk(1, q) = 0.3;
    qk(2, q) = 1.3;
  }
  AddHead(model, qk, {0.0});
  model.readout_weight(0, 0) = 1.0;  // the share of token 0
  return model;
}

TEST(NearTies, SpreadSplitLengthAndWindow) {
  const Transformer model = NearTieModel();
  ExpectValid(model);
  EXPECT_NEAR(LogitMargin(model), 1.0, 1e-15);
  EXPECT_NEAR(NearTieSpread(model), 0.3, 1e-15);
  EXPECT_NEAR(Log2HardmaxLength(model), 4.0, 1e-14);
  EXPECT_NEAR(Log2SplitLength(model), 40.0 / 3.0, 1e-12);
  EXPECT_FALSE(InFiniteHardmaxWindow(model, 15.0));
  // At T = 16 a key exactly γ below is dropped only if the exact difference of the two double
  // logits is ≥ 1; γ is itself a rounded difference, so the window is taken from one ulp below
  // it (docs/theory.md §2.6) and starts just after 16.
  EXPECT_TRUE(InFiniteHardmaxWindow(model, 17.0));
  EXPECT_TRUE(InFiniteHardmaxWindow(model, 10321.0));
  EXPECT_FALSE(InFiniteHardmaxWindow(model, 10322.0));
  EXPECT_EQ(FiniteHardmaxDistance(model, 15.0), kInf);
  EXPECT_EQ(FiniteHardmaxDistance(model, 10322.0), kInf);
  EXPECT_NEAR(FiniteHardmaxDistance(model, 64.0), 2 * std::tanh(0.3 * std::log(64.0) / 4), 1e-14);
  // Without near-ties (θ below 0.3) finite equals hardmax from T_hard on: distance 0, no T_split.
  Transformer tight = model;
  tight.tie_tolerance = 0.1;
  EXPECT_EQ(NearTieSpread(tight), 0.0);
  EXPECT_EQ(Log2SplitLength(tight), kInf);
  EXPECT_EQ(FiniteHardmaxDistance(tight, 1e6), 0.0);
}

// The lemma of docs/theory.md §2.6 on this model, for every string of tokens 0 and 1 with k
// zeros among T (hardmax ties the two, finite gives token 0 the weight T^(−0.3)): the finite
// output is within L(f)·2·tanh(ϑ ln T/4) of the hardmax twin's at every T in the window, and the
// bound is attained within 1% at the worst k for T = 64 (it is tight, not merely valid).
TEST(NearTies, FiniteIsWithinTheTieBoundOfItsHardmaxTwin) {
  const Transformer model = NearTieModel();
  const double L = LipschitzConstant(model);
  for (double T : {16.0, 64.0, 1000.0, 10321.0}) {
    const double w = std::pow(T, -0.3), bound = L * FiniteHardmaxDistance(model, T);
    double worst = 0.0;
    for (double k = 1; k < T; k += 1) {  // k zeros, T − k ones (the last one a 1)
      const double finite = k * w / (k * w + (T - k)), hardmax = k / T;
      worst = std::max(worst, std::abs(finite - hardmax));
    }
    EXPECT_LE(worst, bound) << T;
    if (T == 64.0) {
      EXPECT_GE(worst, 0.99 * bound / (2 * L)) << "the ℓ1 bound is twice the share";
    }
  }
  // The closed forms above are the evaluators' outputs: 42 zeros then 22 ones at T = 64.
  std::vector<Token> x(64, 1);
  std::fill(x.begin(), x.begin() + 42, Token{0});
  Transformer twin = model;
  twin.layers[0].attention = Attention::kHardmax;
  const double w = std::pow(64.0, -0.3);
  EXPECT_NEAR(Evaluate(model, *MakeTokenSource(x, "x"))(0), 42 * w / (42 * w + 22), 1e-12);
  EXPECT_NEAR(Evaluate(twin, *MakeTokenSource(x, "x"))(0), 42.0 / 64.0, 1e-12);
}

// ---------------------------------------------------------------------------------------
// Spectral norm and the Lipschitz constant L(f) = ‖W‖·(1 + ‖B‖‖A‖)·Σ_h ‖O_h‖·R

TEST(SpectralNorm, HandComputedMatrices) {
  Matrix row(1, 2);
  row << 3, 4;  // ‖(3, 4)‖ = 5
  EXPECT_NEAR(SpectralNorm(row), 5.0, kSvdTolerance);
  Matrix symmetric(2, 2);
  symmetric << 1, 2, 2, 1;  // eigenvalues 3 and −1
  EXPECT_NEAR(SpectralNorm(symmetric), 3.0, kSvdTolerance);
  Matrix scaled_rotation(2, 2);
  scaled_rotation << 0, -2, 3, 0;  // singular values 3 and 2
  EXPECT_NEAR(SpectralNorm(scaled_rotation), 3.0, kSvdTolerance);
  Matrix ones = Matrix::Ones(2, 2);  // rank one, σ = 2
  EXPECT_NEAR(SpectralNorm(ones), 2.0, kSvdTolerance);
  EXPECT_EQ(SpectralNorm(Matrix()), 0.0);
}

// d = 2, S = 2, Δ = 2. E = [[3,0],[0,0]], P = [[0,4],[0,0]]: the inputs E_s + P_r are
// (3,4), (3,0), (0,4), (0,0), so R = 5. Heads O₁ = [[1,2],[2,1]] (‖·‖ = 3) and
// O₂ = diag(2, −1) (‖·‖ = 2): Σ = 5. W = [[3,4],[0,0]]: ‖W‖ = 5. Without MLP L = 5·5·5.
Transformer LipschitzModel() {
  Transformer model;
  model.alphabet = 2;
  model.width = 2;
  model.period = 2;
  model.locality = 0;
  model.embedding = Matrix::Zero(2, 2);
  model.embedding(0, 0) = 3.0;
  model.positional = Matrix::Zero(2, 2);
  model.positional(0, 1) = 4.0;
  Layer layer;
  Head one{Matrix::Zero(2, 2), Matrix(2, 2), Vector::Zero(1)};
  one.ov << 1, 2, 2, 1;
  Head two{Matrix::Zero(2, 2), Matrix(2, 2), Vector::Zero(1)};
  two.ov << 2, 0, 0, -1;
  layer.heads = {one, two};
  model.layers.push_back(layer);
  model.readout_weight = Matrix(2, 2);
  model.readout_weight << 3, 4, 0, 0;
  model.readout_bias = Vector::Zero(2);
  return model;
}

TEST(LipschitzConstant, WithoutMlp) {
  const Transformer model = LipschitzModel();
  ExpectValid(model);
  EXPECT_NEAR(LipschitzConstant(model), 125.0, 125.0 * kSvdTolerance);
}

TEST(LipschitzConstant, WithMlp) {
  // A = [[3, 0]] (‖A‖ = 3), B = [[0], [2]] (‖B‖ = 2): factor 1 + 6 = 7, L = 875.
  Transformer model = LipschitzModel();
  Mlp mlp{Matrix(1, 2), Vector::Constant(1, -0.5), Matrix(2, 1)};
  mlp.in << 3, 0;
  mlp.out << 0, 2;
  model.layers.front().mlp = mlp;
  ExpectValid(model);
  EXPECT_NEAR(LipschitzConstant(model), 875.0, 875.0 * kSvdTolerance);

  // A wider MLP: A = [[1,0],[0,1],[1,1]] (AᵀA = [[2,1],[1,2]], ‖A‖ = √3),
  // B = [[2,0,0],[0,0,0]] (‖B‖ = 2): L = 125·(1 + 2√3).
  Mlp wide{Matrix(3, 2), Vector::Zero(3), Matrix::Zero(2, 3)};
  wide.in << 1, 0, 0, 1, 1, 1;
  wide.out(0, 0) = 2.0;
  model.layers.front().mlp = wide;
  ExpectValid(model);
  const double expected = 125.0 * (1.0 + 2.0 * std::sqrt(3.0));
  EXPECT_NEAR(LipschitzConstant(model), expected, expected * kSvdTolerance);
}

// ReadoutLipschitz: u ↦ W(u + B·ReLU(A·u + b)) + c from ℓ2 to ℓ∞ (docs/theory.md §4.7).
TEST(ReadoutLipschitz, HandComputedAndNeverExceeded) {
  Transformer model = LipschitzModel();
  // Without an MLP: the largest readout row norm, ‖(3, 4)‖ = 5.
  EXPECT_NEAR(ReadoutLipschitz(model), 5.0, 5.0 * kSvdTolerance);
  // A = [[3, 0]], B = [[0], [2]]: row 0 gives 5 + min(5·2·3, |(3,4)·(0,2)|·3) = 5 + 24 = 29,
  // below the product form 5·(1 + 6) = 35.
  Mlp mlp{Matrix(1, 2), Vector::Constant(1, -0.5), Matrix(2, 1)};
  mlp.in << 3, 0;
  mlp.out << 0, 2;
  model.layers.front().mlp = mlp;
  EXPECT_NEAR(ReadoutLipschitz(model), 29.0, 29.0 * kSvdTolerance);
  // Random wide MLPs: no pair of inputs moves an output by more than Ω·‖Δu‖₂.
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  const auto random = [&](Eigen::Index rows, Eigen::Index cols) {
    Matrix m(rows, cols);
    for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
    return m;
  };
  for (int trial = 0; trial < 200; ++trial) {
    Mlp wide{random(5, 2), random(5, 1).col(0), random(2, 5)};
    model.layers.front().mlp = wide;
    model.readout_weight = random(3, 2);
    model.readout_bias = Vector::Zero(3);
    const double omega = ReadoutLipschitz(model);
    const auto output = [&](const Vector& u) -> Vector {
      const Vector hidden = (wide.in * u + wide.in_bias).cwiseMax(0.0);
      return model.readout_weight * (u + wide.out * hidden);
    };
    for (int pair = 0; pair < 50; ++pair) {
      const Vector a = random(2, 1).col(0), b = random(2, 1).col(0);
      const double moved = (output(a) - output(b)).cwiseAbs().maxCoeff();
      EXPECT_LE(moved, omega * (a - b).norm() * (1 + 1e-12)) << "trial " << trial;
    }
  }
}

TEST(LipschitzConstant, NoHeadsIsZero) {
  Transformer model = LipschitzModel();
  model.layers.front().heads.clear();
  EXPECT_EQ(LipschitzConstant(model), 0.0);
}

TEST(LipschitzConstant, FiniteWhenZeroInputsMeetHugeGains) {
  // R = 0 with ‖W‖ = 1e200 and ‖B‖‖A‖ = 2e400 (each norm finite), b = 0: every value the
  // model produces is 0, so it is valid and L is 0. Written as ‖W‖(1 + ‖B‖‖A‖)·Σ‖O‖·R the
  // product was ∞·0 = NaN (found by the eval fuzz harness; tests/fuzz/regressions/eval/).
  Transformer model = LipschitzModel();
  model.embedding.setZero();
  model.positional.setZero();
  model.readout_weight(0, 0) = 1e200;
  Mlp mlp{Matrix::Constant(1, 2, 1e200), Vector::Zero(1), Matrix::Constant(2, 1, 1e200)};
  model.layers.front().mlp = mlp;
  ExpectValid(model);
  EXPECT_EQ(LipschitzConstant(model), 0.0);
  // ln C(f) = ln(1 + ‖W‖) + ln(1 + ‖B‖‖A‖) + ln(1 + R) with ‖W‖ = 1e200 and ‖B‖‖A‖ = 2e400,
  // which overflows as a product but not in logs: 600 ln 10 + ln 2. A second layer sees r₁ = 0,
  // not 0·∞.
  EXPECT_NEAR(LogComplexity(model), 600 * std::log(10.0) + std::log(2.0), 1e-9);
  model.layers.push_back(model.layers.front());
  ExpectValid(model);
  EXPECT_TRUE(std::isfinite(LogComplexity(model))) << LogComplexity(model);
}

TEST(LipschitzConstant, NaNUnlessOneLayer) {
  Transformer model = LipschitzModel();
  model.layers.push_back(model.layers.front());
  ExpectValid(model);
  EXPECT_TRUE(std::isnan(LipschitzConstant(model)));
}

// ---------------------------------------------------------------------------------------
// Positional margin γ_pos and head regimes

// One head per bias table, τ = bias length − 1 (all tables must have the same length).
Transformer BiasModel(const std::vector<std::vector<double>>& tables) {
  Transformer model = OneHotModel(2, 1, static_cast<int>(tables.front().size()) - 1);
  model.layers.front().bias_scaling = BiasScaling::kLog;
  for (const auto& bias : tables) AddHead(model, Matrix(), bias);
  return model;
}

TEST(PositionalMargin, SetOfBiasesAndOne) {
  // {0.5, 0.5, 0.25} ∪ {1} = {0.25, 0.5, 1}: 1 − 0.5 = 0.5.
  EXPECT_EQ(PositionalMargin(BiasModel({{0.5, 0.5, 0.25}})), 0.5);
  // {1.5, 1.25} ∪ {1}: 1.5 − 1.25 = 0.25.
  EXPECT_EQ(PositionalMargin(BiasModel({{1.5, 1.25, 1.0}})), 0.25);
  // {0} ∪ {1}: 1.
  EXPECT_EQ(PositionalMargin(BiasModel({{0.0}})), 1.0);
  ExpectValid(BiasModel({{0.5, 0.5, 0.25}}));
}

TEST(PositionalMargin, DuplicatesCollapse) {
  // {2, 2} ∪ {1} = {1, 2}: the repeated maximum is not a gap of 0.
  EXPECT_EQ(PositionalMargin(BiasModel({{2.0, 2.0}})), 1.0);
  // {3, 3, 1.75} ∪ {1} = {1, 1.75, 3}: 3 − 1.75.
  EXPECT_EQ(PositionalMargin(BiasModel({{3.0, 3.0, 1.75}})), 1.25);
  // {1, 0.5} ∪ {1} = {0.5, 1}: the bias 1 and the added 1 are one element.
  EXPECT_EQ(PositionalMargin(BiasModel({{1.0, 0.5}})), 0.5);
}

TEST(PositionalMargin, InfiniteWhenEverySetHasOneElement) {
  // {1, 1} ∪ {1} = {1}.
  EXPECT_EQ(PositionalMargin(BiasModel({{1.0, 1.0}})), kInf);
  Transformer no_heads = OneHotModel(2, 1, 0);
  EXPECT_EQ(PositionalMargin(no_heads), kInf);
}

TEST(PositionalMargin, MinimumOverHeads) {
  // Heads: {1} (∞), {2, 1} (1), {1.5, 1} (0.5), {0.75, 1} (0.25): min 0.25.
  const Transformer model = BiasModel({{1.0, 1.0}, {2.0, 1.0}, {1.5, 0.0}, {0.75, 0.75}});
  ExpectValid(model);
  EXPECT_EQ(PositionalMargin(model), 0.25);
}

TEST(HeadRegimes, ByLargestBiasAgainstOne) {
  const Transformer model =
      BiasModel({{0.5, 0.9}, {1.0, 0.0}, {0.0, 1.5}, {-2.0, -1.0}, {1.0, 1.0}, {0.999, 0.0}});
  ExpectValid(model);
  const std::vector<HeadRegime> expected = {
      HeadRegime::kTokenDominated, HeadRegime::kBalanced, HeadRegime::kPositionDominated,
      HeadRegime::kTokenDominated, HeadRegime::kBalanced, HeadRegime::kTokenDominated};
  EXPECT_EQ(HeadRegimes(model), expected);
  EXPECT_TRUE(HeadRegimes(OneHotModel(2, 1, 0)).empty());
}

TEST(HeadRegimes, Names) {
  EXPECT_STREQ(HeadRegimeName(HeadRegime::kTokenDominated), "token-dominated");
  EXPECT_STREQ(HeadRegimeName(HeadRegime::kBalanced), "balanced");
  EXPECT_STREQ(HeadRegimeName(HeadRegime::kPositionDominated), "position-dominated");
}

}  // namespace
}  // namespace ltsim

namespace ltsim {
namespace {

// ln C(f) by hand for a one-layer model: E = I (R₀ = 1), P = 0, one head with M = 2I,
// O = 3I, φ = [−1, 0.5]; no MLP; W = [4, 0]. Exponent ‖M‖R₀² + ‖O‖R₀ + max|φ| = 2 + 3 + 1;
// polynomial (1 + ‖W‖)(1 + 0)(1 + R₀) = 5·2.
TEST(Complexity, OneLayerByHand) {
  Transformer m;
  m.alphabet = 2;
  m.width = 2;
  m.locality = 1;
  m.embedding = Matrix::Identity(2, 2);
  m.positional = Matrix::Zero(1, 2);
  Layer layer;
  layer.attention = Attention::kSoftmax;
  Vector bias(2);
  bias << -1.0, 0.5;
  layer.heads.push_back({2.0 * Matrix::Identity(2, 2), 3.0 * Matrix::Identity(2, 2), bias});
  m.layers.push_back(layer);
  m.readout_weight = Matrix::Zero(1, 2);
  m.readout_weight(0, 0) = 4.0;
  m.readout_bias = Vector::Zero(1);
  ValidateTransformer(m, "c");
  EXPECT_NEAR(LogComplexity(m), 6.0 + std::log(10.0), 1e-12);
  // A second layer with M = I, O = I adds ‖M‖R₁² with R₁ = R₀(1 + ‖O₁‖) = 4, and the
  // polynomial becomes (1 + ‖W‖)(1 + ‖O₂‖)(1 + 0)(1 + R₁) = 5·2·5.
  Layer second;
  second.attention = Attention::kHardmax;
  second.heads.push_back({Matrix::Identity(2, 2), Matrix::Identity(2, 2), Vector::Zero(2)});
  m.layers.push_back(second);
  EXPECT_NEAR(LogComplexity(m), 6.0 + 16.0 + std::log(50.0), 1e-12);
  EXPECT_NEAR(Complexity(m), std::exp(22.0) * 50.0, 1e-3 * std::exp(22.0));
  m.layers.push_back(second);
  EXPECT_TRUE(std::isnan(LogComplexity(m)));
}

}  // namespace
}  // namespace ltsim
