// Basic numeric types shared by every concept.
#pragma once

#include <Eigen/Dense>
#include <cstdint>

namespace ltsim {

/// A token of the alphabet {0, …, S−1}; S ≤ 65535 (docs/model.md §1).
using Token = std::uint16_t;
inline constexpr int kMaxAlphabet = 65535;

using Vector = Eigen::VectorXd;
using Matrix = Eigen::MatrixXd;

/// A run of `count` copies of `token`, the unit of the run-length text format.
struct Run {
  Token token = 0;
  std::uint64_t count = 0;
  friend bool operator==(const Run&, const Run&) = default;
};

}  // namespace ltsim
