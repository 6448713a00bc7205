// `balanced-blocks`: blocks of x chosen by prefix-balanced rounding, so that every prefix of z's
// blocks holds λ times the windows of the same prefix of x's blocks up to K·ℓ (docs/theory.md
// §4.8, the construction behind the registry's `two-layer-length`).
//
// The layout. Δ* and τ* of the joint view, m = min(T, τ* + 1), F = T − m far positions of x and
// r = F mod Δ*. Blocks have ℓ positions, ℓ a multiple of Δ*; x's blocks are positions
// (b − 1)ℓ + 1 … bℓ, b = 1 … M with M = ⌊(F − r)/ℓ⌋, and z is the N selected blocks in order,
// then x's last r + m positions, so |z| = Nℓ + r + m ≤ n, |z| ≡ T (mod Δ*), and every copied
// token keeps its residue. Block b's vector v_b counts the windows (WindowCode, joint view) of
// its ℓ positions, plus one coordinate 1 (the cardinality). Starting from x_b = λ = N/M, the
// blocks are taken in order into an active set; while the active vectors are linearly
// dependent, x moves along a dependency until an active x_b reaches 0 or 1, which fixes it.
// Every move keeps Σ_b x_b v_b over the blocks seen so far, and at most K = rank ≤ W + 1 blocks
// stay active, so at the end every prefix of blocks has Σ_{b≤B} (x_b − λ) v_b of ℓ1 norm at
// most K·ℓ (the Bárány–Grinberg argument); the last active blocks are rounded keeping Σ x_b = N.
#include <fmt/format.h>

#include <Eigen/LU>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

#include "ltsim/core/error.h"
#include "sim/simulators.h"
#include "sim/window_state.h"

namespace ltsim {
namespace {

constexpr std::size_t kMaxWindows = 2048;
constexpr std::uint64_t kDefaultBlocks = 4096;

struct ActiveBlock {
  std::uint64_t index = 0;                     // 0-based block of x
  double value = 0.0;                          // x_b
  std::vector<std::pair<int, double>> counts;  // (row, count) of its windows
};

// The prefix-balanced rounding of the blocks' window vectors: which of the M blocks are selected
// (N of them), and the largest ℓ1 prefix imbalance max_B ‖Σ_{b≤B}(sel_b − λ)v_b‖₁ it left.
struct Rounding {
  std::vector<bool> selected;
  double imbalance = 0.0;
  int rank = 0;  // the largest active set
};

class PrefixRounding {
 public:
  PrefixRounding(std::uint64_t blocks, std::uint64_t chosen)
      : lambda_(static_cast<double>(chosen) / static_cast<double>(blocks)),
        chosen_(chosen),
        result_{std::vector<bool>(blocks, false), 0.0, 0} {}

  /// Adds the next block with its window rows (row 0 is the cardinality).
  void Add(std::uint64_t index, std::vector<std::pair<int, double>> counts) {
    counts.push_back({0, 1.0});
    active_.push_back({index, lambda_, std::move(counts)});
    Resolve();
    result_.rank = std::max(result_.rank, static_cast<int>(active_.size()));
  }

  Rounding Finish() {
    // Σ x over the active blocks is an integer up to rounding: select that many, largest first.
    double sum = 0.0;
    for (const ActiveBlock& b : active_) sum += b.value;
    const auto take = static_cast<std::size_t>(std::llround(sum));
    std::sort(active_.begin(), active_.end(),
              [](const ActiveBlock& a, const ActiveBlock& b) { return a.value > b.value; });
    for (std::size_t k = 0; k < active_.size() && k < take; ++k)
      result_.selected[active_[k].index] = true;
    std::uint64_t count = 0;
    for (bool s : result_.selected) count += s;
    LTSIM_CHECK(count == chosen_);
    return result_;
  }

 private:
  void Resolve() {
    while (active_.size() > 1) {
      std::map<int, int> rows;
      for (const ActiveBlock& b : active_)
        for (const auto& [row, c] : b.counts) rows.emplace(row, 0);
      int r = 0;
      for (auto& [row, index] : rows) index = r++;
      Matrix a = Matrix::Zero(r, static_cast<Eigen::Index>(active_.size()));
      for (std::size_t j = 0; j < active_.size(); ++j)
        for (const auto& [row, c] : active_[j].counts)
          a(rows[row], static_cast<Eigen::Index>(j)) += c;
      Eigen::FullPivLU<Matrix> lu(a);
      lu.setThreshold(1e-10);
      if (lu.rank() == a.cols()) return;
      Vector d = lu.kernel().col(0);
      d /= d.cwiseAbs().maxCoeff();
      // Move along d until some active value reaches 0 or 1 (the step that fixes the most is
      // either sign; take the shorter).
      double up = std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < active_.size(); ++j) {
        const double dj = d(static_cast<Eigen::Index>(j)), v = active_[j].value;
        if (dj > 1e-14) up = std::min(up, (1.0 - v) / dj);
        if (dj < -1e-14) up = std::min(up, -v / dj);
      }
      LTSIM_CHECK(std::isfinite(up));
      std::vector<ActiveBlock> kept;
      for (std::size_t j = 0; j < active_.size(); ++j) {
        ActiveBlock& b = active_[j];
        b.value += up * d(static_cast<Eigen::Index>(j));
        if (b.value >= 1.0 - 1e-9) {
          result_.selected[b.index] = true;
        } else if (b.value > 1e-9) {
          kept.push_back(std::move(b));
        }
      }
      LTSIM_CHECK(kept.size() < active_.size());
      active_ = std::move(kept);
    }
  }

  double lambda_;
  std::uint64_t chosen_;
  std::vector<ActiveBlock> active_;
  Rounding result_;
};

class BalancedBlocks : public Simulator {
 public:
  std::string name() const override { return "balanced-blocks"; }
  SimulatorTraits traits() const override { return {.uses_block_length = true}; }
  Simulation Simulate(const SimulationInput& in) const override {
    Simulation out;
    if (SimulateShortString(in, out)) return out;
    const int S = in.counts.alphabet, period = in.counts.period, tau = in.counts.locality;
    if (!WindowCodesFit(S, period, tau))
      throw OptionError("method",
                        "balanced-blocks indexes windows by 62-bit codes: S^(tau+1)·"
                        "max(Delta, tau + 2) must stay below 2^62");
    const std::uint64_t T = in.counts.length, m = in.counts.suffix.size(), far = T - m;
    const std::uint64_t P = static_cast<std::uint64_t>(period), r = far % P;
    // Pass 1: the distinct windows of x, for the default ℓ and the rows.
    std::unordered_map<std::uint64_t, int> rows;
    {
      StateTracker st(S, period, tau);
      auto reader = in.x.Open();
      Chunk chunk;
      std::uint64_t i = 0;
      while (reader->Next(chunk) && i < far) {
        for (std::uint64_t k = 0; k < chunk.length() && i < far; ++k, ++i) {
          st.Push(chunk.at(chunk.kind == Chunk::Kind::kRun ? 0 : static_cast<std::size_t>(k)));
          rows.emplace(st.code(), static_cast<int>(rows.size()) + 1);
        }
      }
    }
    if (rows.size() > kMaxWindows)
      throw OptionError("method", fmt::format("balanced-blocks: x has {} distinct windows; the "
                                              "rounding handles at most {}",
                                              rows.size(), kMaxWindows));
    const double K = static_cast<double>(rows.size()) + 1.0;
    std::uint64_t block = in.block_length;
    if (block == 0) {
      // The proof's ℓ = √(τ'·n/(2K)) (docs/theory.md §4.8), τ' = max(τ*, 1), and at least
      // F/4096, so that the rounding takes at most about 4096 blocks.
      block = static_cast<std::uint64_t>(std::llround(
          std::sqrt(std::max(tau, 1) * static_cast<double>(in.target_length) / (2 * K))));
      block = std::max<std::uint64_t>(block, (far + kDefaultBlocks - 1) / kDefaultBlocks);
    }
    block = std::max<std::uint64_t>(P, (block + P - 1) / P * P);
    if (in.target_length < r + m + block)
      throw OptionError("length", fmt::format("balanced-blocks needs at least {} positions (x's "
                                              "last {} plus one block of {})",
                                              r + m + block, r + m, block));
    const std::uint64_t M = (far - r) / block;
    const std::uint64_t N = std::min(M, (in.target_length - r - m) / block);
    if (M == 0 || N == 0) throw OptionError("length", "balanced-blocks: x has no whole block");
    // Pass 2: each block's window counts, rounded as they come.
    PrefixRounding rounding(M, N);
    {
      StateTracker st(S, period, tau);
      auto reader = in.x.Open();
      Chunk chunk;
      std::uint64_t i = 0;
      std::map<int, double> counts;
      while (reader->Next(chunk) && i < M * block) {
        for (std::uint64_t k = 0; k < chunk.length() && i < M * block; ++k) {
          st.Push(chunk.at(chunk.kind == Chunk::Kind::kRun ? 0 : static_cast<std::size_t>(k)));
          counts[rows.at(st.code())] += 1.0;
          if (++i % block == 0) {
            rounding.Add(i / block - 1, {counts.begin(), counts.end()});
            counts.clear();
          }
        }
      }
    }
    const Rounding result = rounding.Finish();
    // Pass 3: the largest ℓ1 prefix imbalance, in units of ℓ (at most K by the argument above).
    const double lambda = static_cast<double>(N) / static_cast<double>(M);
    double imbalance = 0.0;
    {
      std::unordered_map<int, double> balance;
      double total = 0.0;
      StateTracker st(S, period, tau);
      auto reader = in.x.Open();
      Chunk chunk;
      std::uint64_t i = 0;
      while (reader->Next(chunk) && i < M * block) {
        for (std::uint64_t k = 0; k < chunk.length() && i < M * block; ++k, ++i) {
          st.Push(chunk.at(chunk.kind == Chunk::Kind::kRun ? 0 : static_cast<std::size_t>(k)));
          double& e = balance[rows.at(st.code())];
          total -= std::abs(e);
          e += (result.selected[i / block] ? 1.0 : 0.0) - lambda;
          total += std::abs(e);
          if ((i + 1) % block == 0) imbalance = std::max(imbalance, total);
        }
      }
    }
    std::vector<Span> spans;
    for (std::uint64_t b = 0; b < M; ++b) {
      if (!result.selected[b]) continue;
      const std::uint64_t begin = b * block;
      if (!spans.empty() && spans.back().end == begin)
        spans.back().end += block;
      else
        spans.push_back({begin, begin + block});
    }
    spans.push_back({far - r, T});
    out.z = CopySpans(in.x, spans);
    out.length = N * block + r + m;
    out.imbalance = imbalance / static_cast<double>(block);
    out.imbalance_bound = K;
    out.detail = fmt::format(
        "{} of {} blocks of {} positions chosen by prefix-balanced rounding over {} windows "
        "(largest active set {}, largest prefix imbalance {:.3g}·ℓ ≤ K = {}), last {} kept; no "
        "eta claimed (two-layer bound: docs/theory.md §4.7)",
        N, M, block, rows.size(), result.rank, imbalance / static_cast<double>(block),
        static_cast<int>(K), r + m);
    return out;
  }
};

}  // namespace

std::unique_ptr<Simulator> MakeBalancedBlocks() { return std::make_unique<BalancedBlocks>(); }

}  // namespace ltsim
