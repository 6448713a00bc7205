// Lemma 5.3's statistic: a test function averaged over the positions of x and of z
// (docs/theory.md §4.4).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ltsim/check/sandwich.h"
#include "ltsim/core/types.h"
#include "ltsim/model/transformer.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// One pass of a test function over a string, fed token by token (its own state: a window,
/// a histogram, a first-layer stream).
class TestFunctionPass {
 public:
  virtual ~TestFunctionPass() = default;
  /// Appends x_t (< the function's alphabet; checked by the caller) and returns
  /// p(x_{t−τ..t}, μ(x_{≤t})). The reference stays valid until the next call.
  virtual const Vector& Push(Token token) = 0;
};

/// A test function p(w, μ) of Lemma 5.3 (docs/theory.md §4.4), evaluated at every position t of a
/// string from the window w = x_{max(1, t−τ)..t} (shorter than τ+1 only at the start) and
/// the running histogram μ(x_{≤t})_s = #{j ≤ t : x_j = s}/t. Vector valued. Implementations
/// are immutable: one function may run any number of passes, from any thread.
class TestFunction {
 public:
  virtual ~TestFunction() = default;
  /// What the function is, for reports.
  virtual std::string name() const = 0;
  /// S: tokens must be < S.
  virtual int alphabet() const = 0;
  /// τ: the window holds x_{t−τ..t}.
  virtual int locality() const = 0;
  /// Number of components of p.
  virtual int dimension() const = 0;
  /// G ≥ sup_{w,μ} ‖p(w, μ)‖_∞; NaN when not known.
  virtual double size_bound() const = 0;
  /// L with ‖p(w, μ) − p(w, μ')‖_∞ ≤ L·‖μ − μ'‖₁ for every window w; NaN when not known.
  virtual double lipschitz() const = 0;
  /// A fresh pass, at position 0.
  virtual std::unique_ptr<TestFunctionPass> Begin() const = 0;
};

/// The parameters of one window of the random family.
struct WindowParameters {
  double a = 0.0;         ///< amplitude, in [−1, 1]
  std::vector<double> b;  ///< frequencies, one a token, in [−L, L]
  double c = 0.0;         ///< phase, in [0, 2π)
};

/// The random Lipschitz family: p(w, μ) = a_w·cos(⟨b_w, μ⟩ + c_w), with a_w ~ U[−1, 1],
/// b_w ~ U[−L, L]^S and c_w ~ U[0, 2π) drawn from StreamSeed(seed, "lemma53", key(w)),
/// key(w) a hash of w's tokens and its length (so the short windows at the start of a
/// string have their own draws). Then G = 1 and the ℓ1-Lipschitz constant in μ is L:
/// |p| ≤ |a_w| ≤ 1, and for one window, since cos is 1-Lipschitz and by Hölder,
/// |p(w, μ) − p(w, μ')| ≤ |a_w|·|⟨b_w, μ − μ'⟩| ≤ ‖b_w‖_∞·‖μ − μ'‖₁ ≤ L‖μ − μ'‖₁.
class RandomLipschitzFunction : public TestFunction {
 public:
  /// InputError when alphabet ∉ [1, 65535], locality < 0 or lipschitz is negative or not
  /// finite.
  RandomLipschitzFunction(std::uint64_t seed, int alphabet, int locality, double lipschitz);

  std::string name() const override;
  int alphabet() const override { return alphabet_; }
  int locality() const override { return locality_; }
  int dimension() const override { return 1; }
  double size_bound() const override { return 1.0; }
  double lipschitz() const override { return lipschitz_; }
  std::unique_ptr<TestFunctionPass> Begin() const override;

  /// (a_w, b_w, c_w) of a window of 1 to τ+1 tokens, oldest first.
  WindowParameters Parameters(std::span<const Token> window) const;
  /// p(w, μ) for a window of 1 to τ+1 tokens and a histogram of S entries.
  double Evaluate(std::span<const Token> window, std::span<const double> histogram) const;

 private:
  std::uint64_t seed_;
  int alphabet_;
  int locality_;
  double lipschitz_;
};

/// The first layer's output y¹_t of a model (docs/theory.md §4.3: Lemma 5.3 says it is close to a
/// bounded Lipschitz function of the window and the running histogram), d components,
/// streamed with FirstLayerStream. Its G and L are not known exactly (they depend on the
/// weights through constants the paper does not state; with Δ > 1 y¹_t also sees t mod Δ),
/// so size_bound() and lipschitz() are NaN and no reference rate is reported.
class FirstLayerFunction : public TestFunction {
 public:
  /// `model` must outlive the function and have at least one layer.
  explicit FirstLayerFunction(const Transformer& model);

  std::string name() const override;
  int alphabet() const override { return model_.alphabet; }
  int locality() const override { return model_.locality; }
  int dimension() const override { return model_.width; }
  double size_bound() const override { return std::numeric_limits<double>::quiet_NaN(); }
  double lipschitz() const override { return std::numeric_limits<double>::quiet_NaN(); }
  std::unique_ptr<TestFunctionPass> Begin() const override;

 private:
  const Transformer& model_;
};

/// (1/T) Σ_{t=1..T} p(x_{t−τ..t}, μ(x_{≤t})) in one streaming pass over `s` (compensated
/// sums). InputError naming the position for a token outside p's alphabet.
Vector AverageOverPositions(const Source& s, const TestFunction& p);

/// Both sides of Lemma 5.3 for one x, one z and one test function.
struct Lemma53Result {
  Vector average_x;         ///< (1/T) Σ_t p(x_{t−τ..t}, μ(x_{≤t}))
  Vector average_z;         ///< (1/|z|) Σ_t p(z_{t−τ..t}, μ(z_{≤t}))
  double difference = 0.0;  ///< ‖average_x − average_z‖_∞
  /// (G + L)(τ + 1)/n^(1/3), the rate of Lemma 5.3 with n the target length (docs/theory.md §4.4);
  /// NaN when G or L is unknown.
  double reference_rate = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t x_length = 0;
  std::uint64_t z_length = 0;
  std::string method;
  Simulation simulation;
};

/// The reference rate (G + L)(τ + 1)/n^(1/3) of Lemma 5.3 for p and target length n.
double ReferenceRate(const TestFunction& p, std::uint64_t target_length);

/// Builds z from x with `options` (method, n, seed, ℓ) and compares p's averages over x and
/// z: one pass to count, the simulator's own passes, one pass over x and one over z. The
/// view z is built for is the models' joint view when `models` is non-empty (their alphabet
/// must be p's), else period 1 and p's locality (model-aware methods then refuse).
Lemma53Result RunLemma53(const Source& x, const TestFunction& p,
                         const std::vector<const Transformer*>& models,
                         const SandwichOptions& options);

}  // namespace ltsim
