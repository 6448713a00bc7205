// Constructions of SimpleTask(ω) and ModPTask(p, k) (docs/theory.md §6).
#include "ltsim/construct/tasks.h"

#include <cmath>
#include <sstream>
#include <string>

#include "construct/skeleton.h"
#include "ltsim/core/error.h"
#include "ltsim/model/limits.h"

namespace ltsim {
namespace {

using construct::Skeleton;

}  // namespace

// Coordinates: 0 = value (+1 for token 0, −1 for token 1), 1 = attention average of the
// values = (c₀ − c₁)/T, 2 = MLP output. The MLP is g(u) − g(−1) as a sum of ReLU(u − u_j)
// with slope changes at the knots u_j; the readout adds g(−1) = sin(−ω) as its bias.
Transformer MakeSimpleTask(double omega, double accuracy) {
  if (!(std::isfinite(omega) && omega > 0.0 && std::isfinite(accuracy) && accuracy > 0.0)) {
    throw InputError("simple task: omega and accuracy must be finite and positive");
  }
  // The MLP's size is known before it is built: refused over the model limits (an ω of 10^6
  // asked for 5 GB before).
  const double needed_knots = std::ceil(2.0 * omega / std::sqrt(8.0 * accuracy));
  if (!(needed_knots <= kMaxMlpWidth)) {
    std::ostringstream why;
    why << "simple task: omega = " << omega << " at accuracy " << accuracy << " needs "
        << needed_knots << " MLP knots, over the limit of " << kMaxMlpWidth
        << " (docs/formats.md §6.1)";
    throw InputError(why.str());
  }
  Transformer model = Skeleton(2, 3, 1, Attention::kHardmax);
  std::ostringstream name;
  name << "simple-task omega=" << omega;
  model.name = name.str();
  model.embedding(0, 0) = 1.0;
  model.embedding(1, 0) = -1.0;
  model.layers[0].heads[0].ov(1, 0) = 1.0;
  const double spacing = std::sqrt(8.0 * accuracy) / omega;
  const int knots = std::max(1, static_cast<int>(std::ceil(2.0 / spacing)));
  const double h = 2.0 / knots;
  Mlp mlp{Matrix::Zero(knots, 3), Vector::Zero(knots), Matrix::Zero(3, knots)};
  double previous_slope = 0.0;
  for (int j = 0; j < knots; ++j) {
    const double u_j = -1.0 + j * h;
    const double slope = (std::sin(omega * (u_j + h)) - std::sin(omega * u_j)) / h;
    mlp.in(j, 1) = 1.0;
    mlp.in_bias(j) = -u_j;
    mlp.out(2, j) = slope - previous_slope;
    previous_slope = slope;
  }
  model.layers[0].mlp = mlp;
  model.readout_weight(0, 2) = 1.0;
  model.readout_bias(0) = std::sin(-omega);
  return model;
}

// Coordinates: 0 = [token is 1], 1 = constant 1, 2 … 1+p = one-hot residue, 2+p = output.
// M = e_{residue k} e_constᵀ gives logit y_jᵀ M y_i = [j ≡ k], and O copies coordinate 0
// into the output coordinate, so the head averages [x_j = 1] over the maximal set.
Transformer MakeModPTask(int p, int k, int precision_bits) {
  LTSIM_CHECK(p >= 1 && k >= 0 && k < p && precision_bits >= 0);
  const int width = 3 + p;
  Transformer model =
      Skeleton(2, width, p, precision_bits > 0 ? Attention::kFinite : Attention::kHardmax);
  model.name = "modp-task p=" + std::to_string(p) + " k=" + std::to_string(k);
  model.layers[0].precision_bits = precision_bits;
  model.embedding(0, 1) = 1.0;
  model.embedding(1, 0) = 1.0;
  model.embedding(1, 1) = 1.0;
  for (int r = 0; r < p; ++r) model.positional(r, 2 + r) = 1.0;
  Head& head = model.layers[0].heads[0];
  head.qk(2 + k, 1) = 1.0;
  head.ov(2 + p, 0) = 1.0;
  model.readout_weight(0, 2 + p) = 1.0;
  return model;
}

}  // namespace ltsim
