// Random one-layer limit transformers and skewed random strings for the property tests.
#include "ltsim_test/random_models.h"

#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>

namespace ltsim::test {
namespace {

class Weights {
 public:
  Weights(std::uint64_t seed, bool grid, double scale)
      : engine_(seed), grid_(grid), scale_(scale) {}
  Matrix Draw(int rows, int cols) {
    Matrix m(rows, cols);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) m(i, j) = Next();
    return m;
  }
  Vector DrawVector(int n) { return Draw(n, 1).col(0); }

 private:
  double Next() {
    if (grid_) return 0.5 * boost::random::uniform_int_distribution<int>(-2, 2)(engine_);
    return scale_ * boost::random::normal_distribution<double>(0.0, 1.0)(engine_);
  }
  boost::random::mt19937_64 engine_;
  bool grid_;
  double scale_;
};

}  // namespace

Transformer MakeRandomModel(const ModelShape& shape) {
  Weights w(shape.seed, shape.grid, shape.scale);
  Transformer model;
  model.name = "random";
  model.alphabet = shape.alphabet;
  model.width = shape.width;
  model.period = shape.period;
  model.locality = shape.locality;
  model.embedding = w.Draw(shape.alphabet, shape.width);
  model.positional = w.Draw(shape.period, shape.width);
  Layer layer;
  layer.attention = shape.attention;
  layer.bias_scaling = shape.bias_scaling;
  layer.precision_bits = shape.attention == Attention::kFinite ? shape.precision_bits : 0;
  for (int h = 0; h < shape.heads; ++h) {
    Head head{w.Draw(shape.width, shape.width), w.Draw(shape.width, shape.width),
              w.DrawVector(shape.locality + 1)};
    layer.heads.push_back(head);
  }
  if (shape.mlp) {
    const int hidden = shape.width + 1;
    layer.mlp = Mlp{w.Draw(hidden, shape.width), w.DrawVector(hidden), w.Draw(shape.width, hidden)};
  }
  model.layers.push_back(layer);
  if (shape.layers == 2) {
    Layer second;
    second.attention = shape.attention2;
    second.bias_scaling = shape.bias_scaling2;
    second.precision_bits = shape.attention2 == Attention::kFinite ? shape.precision_bits2 : 0;
    for (int h = 0; h < shape.heads2; ++h) {
      second.heads.push_back(Head{w.Draw(shape.width, shape.width),
                                  w.Draw(shape.width, shape.width),
                                  w.DrawVector(shape.locality + 1)});
    }
    if (shape.mlp2) {
      const int hidden = shape.width + 1;
      second.mlp =
          Mlp{w.Draw(hidden, shape.width), w.DrawVector(hidden), w.Draw(shape.width, hidden)};
    }
    model.layers.push_back(second);
  }
  model.readout_weight = w.Draw(shape.outputs, shape.width);
  model.readout_bias = w.DrawVector(shape.outputs);
  ValidateTransformer(model, "random model");
  return model;
}

rc::Gen<ModelShape> GenShape() {
  return rc::gen::exec([] {
    ModelShape s;
    s.alphabet = *rc::gen::inRange(1, 5);
    s.width = *rc::gen::inRange(1, 6);
    s.period = *rc::gen::inRange(1, 5);
    s.locality = *rc::gen::inRange(0, 4);
    s.heads = *rc::gen::inRange(1, 4);
    s.outputs = *rc::gen::inRange(1, 3);
    s.attention = *rc::gen::element(Attention::kSoftmax, Attention::kHardmax, Attention::kFinite);
    s.bias_scaling = *rc::gen::element(BiasScaling::kNone, BiasScaling::kLog);
    s.precision_bits = *rc::gen::inRange(1, 12);
    s.mlp = *rc::gen::arbitrary<bool>();
    s.grid = *rc::gen::arbitrary<bool>();
    s.scale = *rc::gen::element(0.3, 1.0, 3.0);
    s.seed = *rc::gen::arbitrary<std::uint64_t>();
    return s;
  });
}

rc::Gen<ModelShape> GenTwoLayerShape() {
  return rc::gen::map(GenShape(), [](ModelShape s) {
    s.layers = 2;
    // Derived from the shape's seed, so one seed keeps shrinking meaningful.
    boost::random::mt19937_64 engine(s.seed ^ 0x2ba7e5u);
    boost::random::uniform_int_distribution<int> pick(0, 1 << 20);
    const int bits = pick(engine);
    s.attention2 = static_cast<Attention>(bits % 3);
    s.bias_scaling2 = (bits >> 2) % 2 ? BiasScaling::kLog : BiasScaling::kNone;
    s.precision_bits2 = 1 + (bits >> 3) % 12;
    s.heads2 = 1 + (bits >> 7) % 3;
    s.mlp2 = (bits >> 9) % 2;
    return s;
  });
}

rc::Gen<ModelShape> GenHardmaxRegimeShape() {
  return rc::gen::map(GenShape(), [](ModelShape s) {
    s.bias_scaling = BiasScaling::kNone;
    if (s.attention == Attention::kSoftmax) s.attention = Attention::kHardmax;
    if (s.attention == Attention::kFinite) {
      s.grid = true;  // logit gaps ≥ 1/8 on the grid, so T_hard ≤ 2^(3·8)… kept small by p
      s.precision_bits = 1 + static_cast<int>(s.seed % 2);
    }
    return s;
  });
}

rc::Gen<ModelShape> WithAlphabet(rc::Gen<ModelShape> gen, int alphabet) {
  return rc::gen::map(std::move(gen), [alphabet](ModelShape s) {
    s.alphabet = alphabet;
    return s;
  });
}

rc::Gen<std::vector<Token>> GenString(int alphabet, int min_length, int max_length) {
  return rc::gen::exec([=] {
    const int length = *rc::gen::inRange(min_length, max_length + 1);
    const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
    const int skew = *rc::gen::inRange(0, 4);  // 0: uniform … 3: one token dominates
    const int run = *rc::gen::inRange(1, 20);  // mean run length
    boost::random::mt19937_64 engine(seed);
    boost::random::uniform_int_distribution<int> token(0, alphabet - 1);
    boost::random::uniform_int_distribution<int> percent(0, 99);
    boost::random::uniform_int_distribution<int> run_length(1, 2 * run - 1);
    std::vector<Token> x;
    while (static_cast<int>(x.size()) < length) {
      const bool dominant = percent(engine) < 25 * skew;
      const Token s = static_cast<Token>(dominant ? 0 : token(engine));
      const int n = std::min(run_length(engine), length - static_cast<int>(x.size()));
      x.insert(x.end(), n, s);
    }
    return x;
  });
}

}  // namespace ltsim::test
