// The state of a position for a first layer seen through its window (docs/theory.md §4.7):
// position i, the window code and the far type counts, one token at a time. Shared by the
// two-layer bound (src/check/two_layer_bound.cpp) and `balanced-blocks`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ltsim/core/types.h"

namespace ltsim {

inline constexpr std::uint64_t kShortWindow = std::uint64_t{1} << 62;

/// The code of a window: for i > τ + 1 the last τ + 1 tokens and i mod Δ, for i ≤ τ + 1 the
/// whole prefix and i (flagged by bit 62). `window` holds the last m = min(i, τ + 1) tokens,
/// oldest first. Injective while S^(τ+1)·max(Δ, τ + 2) < 2^62 (WindowCodesFit).
inline std::uint64_t WindowCode(const Token* window, int m, std::uint64_t i, int alphabet,
                                int period, int locality) {
  std::uint64_t c = 0;
  for (int k = 0; k < m; ++k) c = c * static_cast<std::uint64_t>(alphabet) + window[k];
  if (i > static_cast<std::uint64_t>(locality) + 1)
    return c * static_cast<std::uint64_t>(period) + i % static_cast<std::uint64_t>(period);
  return (c * static_cast<std::uint64_t>(locality + 1) + (i - 1)) | kShortWindow;
}

/// Whether WindowCode is injective for this alphabet, period and locality.
inline bool WindowCodesFit(int alphabet, int period, int locality) {
  const double bits = (locality + 1) * std::log2(static_cast<double>(alphabet)) +
                      std::log2(static_cast<double>(std::max(period, locality + 2)));
  return bits < 62 && locality < 64;
}

/// Position i, its window and its far type counts (positions 1 … i − τ − 1), one token at a
/// time.
class StateTracker {
 public:
  StateTracker(int alphabet, int period, int locality)
      : alphabet_(alphabet),
        period_(period),
        locality_(locality),
        ring_(static_cast<std::size_t>(locality) + 1),
        window_(static_cast<std::size_t>(locality) + 1),
        far_(static_cast<std::size_t>(alphabet) * period, 0) {}

  void Push(Token token) {
    const std::size_t size = ring_.size();
    ++i_;
    const std::size_t slot = static_cast<std::size_t>((i_ - 1) % size);
    if (i_ > size) {  // position i − τ − 1 leaves the window
      const std::uint64_t leaving = i_ - size;
      ++far_[static_cast<std::size_t>(leaving % static_cast<std::uint64_t>(period_)) * alphabet_ +
             ring_[slot]];
    }
    ring_[slot] = token;
    const int m = window_length();
    for (int k = 0; k < m; ++k)
      window_[static_cast<std::size_t>(k)] =
          ring_[static_cast<std::size_t>((i_ - static_cast<std::uint64_t>(m) + k) % size)];
  }
  std::uint64_t position() const { return i_; }
  int window_length() const {
    return static_cast<int>(std::min<std::uint64_t>(i_, static_cast<std::uint64_t>(locality_) + 1));
  }
  const Token* window() const { return window_.data(); }
  const std::uint64_t* far() const { return far_.data(); }
  std::uint64_t code() const {
    return WindowCode(window_.data(), window_length(), i_, alphabet_, period_, locality_);
  }

 private:
  int alphabet_, period_, locality_;
  std::uint64_t i_ = 0;
  std::vector<Token> ring_, window_;
  std::vector<std::uint64_t> far_;
};

}  // namespace ltsim
