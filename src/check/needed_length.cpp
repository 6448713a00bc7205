// Needed lengths: the smallest grid n at which a simulator's z meets ε on a given x.
#include "ltsim/check/needed_length.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ltsim/check/sandwich.h"
#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/strings/sources.h"

namespace ltsim {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

double MaxFrequencySim(const Transformer& f, const Transformer& g, const Source& x,
                       std::uint64_t n) {
  SandwichOptions options;
  options.method = "frequency";
  options.length = n;
  try {
    const SandwichResult s = RunSandwich(f, g, x, options);
    return std::max(s.f.sim, s.g.sim);
  } catch (const InputError&) {
    return kInf;
  }
}

double SimAt(const Transformer& f, const Vector& on_x, const Source& x, const std::string& method,
             std::uint64_t n, std::uint64_t seed) {
  SandwichOptions options;
  options.method = method;
  options.length = n;
  options.seed = seed;
  try {
    if (f.layers.size() == 1) return RunSandwich(f, f, x, options).f.sim;
    const Simulation s = RunSimulation({&f}, x, options);
    const auto z = MakeRunSource(s.z, "z");
    return SupDistance(on_x, Evaluate(f, *z));
  } catch (const InputError&) {
    return kInf;
  }
}

std::vector<std::uint64_t> NeededLengthGrid(std::uint64_t n0, std::uint64_t x_length) {
  std::vector<std::uint64_t> grid;
  for (int k = 0;; ++k) {
    const auto n = static_cast<std::uint64_t>(std::ceil(n0 * std::exp2(k / 4.0)));
    if (n >= x_length) break;
    if (grid.empty() || n > grid.back()) grid.push_back(n);
  }
  grid.push_back(x_length);
  return grid;
}

std::uint64_t NeededLength(const Transformer& f, const Transformer& g, const Source& x, double eps,
                           bool* reached) {
  const auto tau = static_cast<std::uint64_t>(std::max(f.locality, g.locality));
  const std::vector<std::uint64_t> grid = NeededLengthGrid(tau + 2, x.length());
  std::size_t lo = 0, hi = grid.size() - 1;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (MaxFrequencySim(f, g, x, grid[mid]) <= eps) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (reached) *reached = grid[lo] < x.length();
  return grid[lo];
}

std::uint64_t SeededNeededLength(const Transformer& f, const Source& x, double eps,
                                 const std::string& method, int seeds, std::uint64_t seed,
                                 bool* reached) {
  const Vector on_x = Evaluate(f, x);
  const auto n0 = static_cast<double>(f.locality + 2);
  for (int j = 0;; ++j) {
    const auto n = static_cast<std::uint64_t>(std::ceil(n0 * std::exp2(j / 4.0)));
    if (n >= x.length()) break;
    bool all = true;
    for (int i = 0; i < seeds && all; ++i)
      all = SimAt(f, on_x, x, method, n,
                  StreamSeed(seed, "experiment-z", static_cast<std::uint64_t>(i))) <= eps;
    if (all) {
      if (reached) *reached = true;
      return n;
    }
  }
  if (reached) *reached = false;
  return x.length();
}

}  // namespace ltsim
