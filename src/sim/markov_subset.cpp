// `markov`: z = x_I for I drawn by a stationary two-state keep/drop chain (docs/theory.md §4.5).
//
// The chain. Positions 1..F of x, F = T − m with m = min(T, τ*+1), are kept or dropped by a
// two-state Markov chain with keep rate ρ = n/T and mean kept block ℓ (--block-length, else
// ⌈n^(1/3)⌉): keep → drop with probability p = 1/ℓ, drop → keep with q = ρ/(ℓ(1−ρ)), started
// from its stationary law π(keep) = q/(p+q) = ρ. The last m positions are always kept, so z
// ends with x's last τ*+1 tokens. q ≤ 1 needs ρ ≤ ℓ/(ℓ+1); for a larger ρ (n close to T) ℓ is
// raised to ρ/(1−ρ), so q = 1 and ρ stays the keep rate. A run of the chain in a state with
// exit probability e has length 1 + G, P(G = g) = e(1−e)^g for g ≥ 0 (memoryless, so the
// first run from the stationary law has the same law); G is drawn by inversion,
// G = ⌊ln U / ln(1−e)⌋ with U uniform on (0, 1] (boost::random::geometric_distribution's
// formula, with log1p for small e). So a string of any T costs O(number of blocks) draws, and x
// is read once, copying the kept spans.
//
// The distribution of |z| (used by the property test). With X_t ∈ {0, 1} the keep indicator,
// |z| = m + Σ_{t≤F} X_t. Stationarity gives E X_t = ρ, and a two-state chain has
// Cov(X_s, X_t) = ρ(1−ρ)·λ^|t−s| with λ = 1 − p − q = 1 − 1/(ℓ(1−ρ)) its second eigenvalue.
// Summing the covariances over s, t ≤ F:
//   E|z|   = m + ρF = n + m(1 − ρ)
//   Var|z| = ρ(1−ρ)·[ F(1+λ)/(1−λ) − 2λ(1 − λ^F)/(1−λ)² ]
//          ≈ Tρ(1−ρ)(1+λ)/(1−λ) = Tρ(1−ρ)(2ℓ(1−ρ) − 1) ≈ 2nℓ(1−ρ)²   (F(1−λ) ≫ 1)
// so σ(|z|) ≈ √(2nℓ): |z|/n − 1 = O(n^(−1/3)) for ℓ = ⌈n^(1/3)⌉.
#include <fmt/format.h>

#include <algorithm>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_01.hpp>
#include <cmath>

#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "sim/simulators.h"

namespace ltsim {
namespace {

using Engine = boost::random::mt19937_64;

// The chain's parameters for one request.
struct ChainParameters {
  double keep_rate = 0.0;     // ρ
  double block_length = 0.0;  // ℓ, possibly raised so that q ≤ 1
  double exit_keep = 0.0;     // p = 1/ℓ
  double exit_drop = 0.0;     // q = ρ/(ℓ(1−ρ))
};

ChainParameters Parameters(const SimulationInput& in) {
  ChainParameters c;
  c.keep_rate = static_cast<double>(in.target_length) / static_cast<double>(in.counts.length);
  const double rho = c.keep_rate;
  c.block_length = std::max(static_cast<double>(BlockLength(in.block_length, in.target_length)),
                            rho / (1.0 - rho));
  c.exit_keep = 1.0 / c.block_length;
  c.exit_drop = std::min(1.0, rho / (c.block_length * (1.0 - rho)));
  return c;
}

// 1 + G, P(G = g) = e(1−e)^g: the length of a run in a state left with probability e.
std::uint64_t RunLength(Engine& engine, double exit) {
  LTSIM_CHECK(exit > 0.0);  // ρ > 0 and ℓ finite: the chain leaves every state
  if (exit >= 1.0) return 1;
  const double u = 1.0 - boost::random::uniform_01<double>()(engine);  // in (0, 1]
  const double g = std::floor(std::log(u) / std::log1p(-exit));
  constexpr double kLongest = 9e18;  // longer than any string; also catches overflow
  return 1 + static_cast<std::uint64_t>(g < kLongest ? g : kLongest);
}

// The kept spans of positions [0, far) by the chain, then the forced suffix [far, total).
std::vector<Span> DrawSpans(const ChainParameters& c, std::uint64_t far, std::uint64_t total,
                            std::uint64_t seed) {
  Engine engine(StreamSeed(seed, "simulate/markov"));
  bool keep = boost::random::bernoulli_distribution<double>(c.keep_rate)(engine);
  std::vector<Span> spans;
  for (std::uint64_t at = 0; at < far; keep = !keep) {
    const std::uint64_t end =
        at + std::min(far - at, RunLength(engine, keep ? c.exit_keep : c.exit_drop));
    if (keep) spans.push_back({at, end});
    at = end;
  }
  if (!spans.empty() && spans.back().end == far) {
    spans.back().end = total;
  } else if (far < total) {
    spans.push_back({far, total});
  }
  return spans;
}

class MarkovSubset : public Simulator {
 public:
  std::string name() const override { return "markov"; }
  SimulatorTraits traits() const override {
    return {.model_free = true, .block_rate = true, .seeded = true, .uses_block_length = true};
  }
  Simulation Simulate(const SimulationInput& in) const override {
    Simulation out;
    if (SimulateShortString(in, out)) return out;
    const ChainParameters c = Parameters(in);
    const std::uint64_t total = in.counts.length;
    const std::vector<Span> spans = DrawSpans(c, total - in.counts.suffix.size(), total, in.seed);
    out.z = CopySpans(in.x, spans);
    for (const Span& span : spans) out.length += span.end - span.begin;
    out.detail = fmt::format(
        "two-state Markov chain: keep rate ρ = {:.4g}, mean block ℓ = {:.4g}, {} kept blocks, "
        "last {} kept; no η bound claimed",
        c.keep_rate, c.block_length, spans.size(), in.counts.suffix.size());
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeMarkovSubset() { return std::make_unique<MarkovSubset>(); }

}  // namespace ltsim
