// Structure-aware fuzz harness: the bytes choose a small model that the reader would accept
// (every mode, ties, huge, tiny and subnormal weights, extreme tie tolerances) and a string;
// every evaluator and constant either returns finite numbers or raises InputError
// (docs/formats.md §6.1: the weight bound that makes this hold); what `eval` prints is within
// its stated rounding bound of the 50-digit outputs (docs/theory.md §8.7).
#include <fuzzer/FuzzedDataProvider.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/eval/precise.h"
#include "ltsim/eval/reference.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/transformer.h"
#include "ltsim/strings/source.h"
#include "ltsim/strings/sources.h"

namespace {

using ltsim::Matrix;
using ltsim::Vector;

double Weight(FuzzedDataProvider& in) {
  static constexpr double kPalette[] = {0.0,    1.0,     -1.0,     0.5,   2.0,    -3.0,
                                        1e-300, -1e-300, 5e-324,   1e300, -1e300, 1e308,
                                        -1e308, DBL_MAX, -DBL_MAX, 1e150, -1e150, 1e100,
                                        -1e100, 1e50,    1e15,     -1e15, 0.1,    1.0 + 1e-12};
  if (in.ConsumeBool()) return in.PickValueInArray(kPalette);
  const double raw = in.ConsumeFloatingPoint<double>();
  return std::isfinite(raw) ? raw : 0.0;
}

Matrix Fill(FuzzedDataProvider& in, int rows, int cols) {
  Matrix m(rows, cols);
  // One weight repeated (ties) or each drawn.
  const bool constant = in.ConsumeBool();
  const double first = Weight(in);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) m(r, c) = constant ? first : Weight(in);
  return m;
}

ltsim::Transformer Model(FuzzedDataProvider& in) {
  ltsim::Transformer model;
  model.alphabet = in.ConsumeIntegralInRange(1, 4);
  model.width = in.ConsumeIntegralInRange(1, 4);
  model.period = in.ConsumeIntegralInRange(1, 3);
  model.locality = in.ConsumeIntegralInRange(0, 2);
  static constexpr double kTheta[] = {0.0, 1e-9, 1e-3, 1.0, 1e300};
  model.tie_tolerance = in.PickValueInArray(kTheta);
  model.embedding = Fill(in, model.alphabet, model.width);
  model.positional = Fill(in, model.period, model.width);
  const int layers = in.ConsumeIntegralInRange(1, 2);
  for (int l = 0; l < layers; ++l) {
    ltsim::Layer layer;
    layer.attention = static_cast<ltsim::Attention>(in.ConsumeIntegralInRange(0, 2));
    layer.bias_scaling = in.ConsumeBool() ? ltsim::BiasScaling::kLog : ltsim::BiasScaling::kNone;
    if (layer.attention == ltsim::Attention::kFinite)
      layer.precision_bits = in.ConsumeIntegralInRange(1, 64);
    const int heads = in.ConsumeIntegralInRange(0, 2);
    for (int h = 0; h < heads; ++h) {
      ltsim::Head head;
      head.qk = Fill(in, model.width, model.width);
      head.ov = Fill(in, model.width, model.width);
      head.bias = Fill(in, model.locality + 1, 1).col(0);
      layer.heads.push_back(head);
    }
    if (in.ConsumeBool()) {
      const int m = in.ConsumeIntegralInRange(1, 3);
      layer.mlp =
          ltsim::Mlp{Fill(in, m, model.width), Fill(in, m, 1).col(0), Fill(in, model.width, m)};
    }
    model.layers.push_back(layer);
  }
  const int outputs = in.ConsumeIntegralInRange(1, 2);
  model.readout_weight = Fill(in, outputs, model.width);
  model.readout_bias = Fill(in, outputs, 1).col(0);
  return model;
}

void CheckFinite(const Vector& v) {
  for (Eigen::Index i = 0; i < v.size(); ++i) LTSIM_CHECK(std::isfinite(v(i)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const ltsim::Transformer model = Model(in);
  try {
    ltsim::ValidateTransformer(model, "fuzz model");
  } catch (const ltsim::InputError&) {
    return 0;  // refused up front, as the reader would
  }
  // A string of a few runs, possibly very long (the one- and two-layer paths stream it).
  std::vector<ltsim::Run> runs;
  const int count = in.ConsumeIntegralInRange(1, 6);
  // Long runs only for one layer: its evaluator counts types, the two-layer one streams.
  const bool long_runs = in.ConsumeBool() && model.layers.size() == 1;
  for (int r = 0; r < count; ++r) {
    const ltsim::Token token = in.ConsumeIntegralInRange(0, model.alphabet - 1);
    const std::uint64_t copies =
        long_runs ? in.ConsumeIntegralInRange<std::uint64_t>(1, 1'000'000'000'000ull)
                  : in.ConsumeIntegralInRange<std::uint64_t>(1, 40);
    ltsim::AppendRun(runs, token, copies);
  }
  const auto x = ltsim::MakeRunSource(runs, "fuzz x");
  try {
    CheckFinite(ltsim::Evaluate(model, *x));
    if (x->length() <= 200) {
      CheckFinite(ltsim::EvaluateReference(model, ltsim::FromRuns(runs)));
      std::string why;
      if (ltsim::PreciseEvaluable(model, x->length(), &why)) {
        const ltsim::PreciseVector exact = ltsim::EvaluatePrecise(model, *x);
        for (const auto& v : exact) LTSIM_CHECK(boost::multiprecision::isfinite(v));
        // What `eval` prints is within its stated rounding bound of the 50-digit outputs
        // (docs/theory.md §8.7), the rounding to doubles aside.
        if (model.layers.size() == 1) {
          const ltsim::CheckedOutput checked = ltsim::EvaluateChecked(model, *x);
          for (std::size_t k = 0; k < exact.size(); ++k) {
            const double e = static_cast<double>(exact[k]);
            if (!std::isfinite(e) || !std::isfinite(checked.error_bound)) continue;
            LTSIM_CHECK(std::abs(checked.output(static_cast<Eigen::Index>(k)) - e) <=
                        checked.error_bound + 1e-15 * (1 + std::abs(e)));
          }
        }
      }
    }
  } catch (const ltsim::InputError&) {
  }
  // Constants: finite, or ∞ / NaN where the definition says "none" or "not applicable".
  const double gamma = ltsim::LogitMargin(model);
  LTSIM_CHECK(!std::isnan(gamma) || model.layers.size() != 1);
  LTSIM_CHECK(gamma > 0);
  const double lipschitz = ltsim::LipschitzConstant(model);
  LTSIM_CHECK(model.layers.size() != 1 || std::isfinite(lipschitz));
  (void)ltsim::LogComplexity(model);
  (void)ltsim::PositionalMargin(model);
  if (model.layers.size() == 1) {
    const double spread = ltsim::NearTieSpread(model);
    LTSIM_CHECK(std::isnan(spread) || (spread >= 0 && spread <= model.tie_tolerance));
    (void)ltsim::FiniteHardmaxDistance(model, static_cast<double>(x->length()));
  }
  return 0;
}
