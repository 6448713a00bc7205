// Draws shared by the input families (Boost.Random distributions only, so a seed replays
// identically across compilers).
#include "gen/input_families.h"

#include <algorithm>
#include <boost/random/bernoulli_distribution.hpp>
#include <boost/random/gamma_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>

namespace ltsim::inputs {

Token UniformToken(int alphabet, FuzzEngine& engine) {
  return static_cast<Token>(boost::random::uniform_int_distribution<int>(0, alphabet - 1)(engine));
}

bool Coin(double probability, FuzzEngine& engine) {
  return boost::random::bernoulli_distribution<double>(probability)(engine);
}

// For small k: membership is a linear scan.
std::vector<int> SampleDistinct(int k, int n, FuzzEngine& engine) {
  std::vector<int> chosen;
  for (int i = n - k; i < n; ++i) {
    const int t = boost::random::uniform_int_distribution<int>(0, i)(engine);
    const bool seen = std::find(chosen.begin(), chosen.end(), t) != chosen.end();
    chosen.push_back(seen ? i : t);
  }
  for (int i = k - 1; i > 0; --i)
    std::swap(chosen[i], chosen[boost::random::uniform_int_distribution<int>(0, i)(engine)]);
  return chosen;
}

// π ~ Dir(α, …, α) on n entries as normalised Gamma(α, 1) draws (Theorem 4.2's prior). When
// every draw underflows to 0 (very small α) π is the point mass on a uniform entry, the α → 0
// limit of the prior.
std::vector<double> DrawDirichlet(int n, double alpha, FuzzEngine& engine) {
  boost::random::gamma_distribution<double> gamma(alpha, 1.0);
  std::vector<double> pi(n);
  double total = 0.0;
  for (double& p : pi) total += (p = gamma(engine));
  if (!(total > 0.0)) {
    std::fill(pi.begin(), pi.end(), 0.0);
    pi[UniformToken(n, engine)] = total = 1.0;
  }
  for (double& p : pi) p /= total;
  return pi;
}

}  // namespace ltsim::inputs
