// Pairs with a controlled logit margin: a uniform rescaling of every first-layer logit.
#include "ltsim/gen/margin_pair.h"

#include <cmath>

#include "ltsim/core/error.h"
#include "ltsim/model/constants.h"

namespace ltsim {
namespace {

constexpr int kMaxDraws = 16;
constexpr int kMaxPasses = 4;
constexpr double kRelative = 1e-12;  // |γ − margin| ≤ 1e-12·margin: rounding of the scaling

}  // namespace

bool SetLogitMargin(Transformer& model, double margin) {
  Transformer scaled = model;
  // A gap at or below θ is a tie; scaling can lift such a near-tie above θ, so rescale until
  // the margin holds (twice at most in practice).
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    const double gamma = LogitMargin(scaled);
    if (std::abs(gamma - margin) <= kRelative * margin) {
      model = std::move(scaled);
      return true;
    }
    const double c = margin / gamma;
    if (!std::isfinite(gamma) || !(c > 0) || !std::isfinite(c)) return false;
    for (Head& head : scaled.layers.front().heads) {
      head.qk *= c;
      head.bias *= c;
    }
  }
  return false;
}

std::pair<Transformer, Transformer> GenerateMarginPair(const ModelSpec& spec, const PairSpec& pair,
                                                       double margin, FuzzEngine& engine) {
  for (int draw = 0; draw < kMaxDraws; ++draw) {
    auto models = GeneratePair(spec, pair, engine);
    if (margin <= 0) return models;
    if (SetLogitMargin(models.first, margin) && SetLogitMargin(models.second, margin))
      return models;
  }
  throw OptionError("values", "no pair with a logit gap in 16 draws (margin " +
                                  std::to_string(margin) + "); use more heads or a finer grid");
}

}  // namespace ltsim
