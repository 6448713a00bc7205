// SameFunction: equal parameters (names and meta aside) and nothing else.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ltsim/model/model_file.h"
#include "ltsim/model/transformer.h"

namespace ltsim {
namespace {

Transformer Kgram() {
  return ReadModel(std::string(LTSIM_SOURCE_DIR) + "/corpus/models/kgram_S2_k1.json");
}

TEST(SameFunction, ACopyWithAnotherNameAndMetaIsTheSameFunction) {
  const Transformer f = Kgram();
  Transformer g = f;
  g.name = "other";
  g.meta_json = R"({"note": "renamed"})";
  EXPECT_TRUE(SameFunction(f, g));
  EXPECT_TRUE(SameFunction(g, f));
}

TEST(SameFunction, SignedZerosAreEqualWeights) {
  Transformer f = Kgram();
  Transformer g = f;
  f.readout_bias(0) = 0.0;
  g.readout_bias(0) = -0.0;
  EXPECT_TRUE(SameFunction(f, g));
}

TEST(SameFunction, OneUlpInAnyWeightArrayMakesItAnotherFunction) {
  const Transformer f = Kgram();
  // Every weight array in turn, at its first entry, moved by one ulp.
  int arrays = 0;
  Transformer probe = f;
  ForEachWeightArray(probe, [&](auto&) { ++arrays; });
  for (int k = 0; k < arrays; ++k) {
    Transformer g = f;
    int i = 0;
    bool changed = false;
    ForEachWeightArray(g, [&](auto& array) {
      if (i++ != k || array.size() == 0) return;
      array.data()[0] = std::nextafter(array.data()[0], std::numeric_limits<double>::infinity());
      changed = true;
    });
    if (changed) {
      EXPECT_FALSE(SameFunction(f, g)) << "weight array " << k;
    }
  }
}

TEST(SameFunction, ModesPrecisionToleranceAndShapesCount) {
  const Transformer f = Kgram();
  Transformer g = f;
  g.layers.back().attention =
      g.layers.back().attention == Attention::kHardmax ? Attention::kSoftmax : Attention::kHardmax;
  EXPECT_FALSE(SameFunction(f, g));
  g = f;
  g.tie_tolerance *= 2;
  EXPECT_FALSE(SameFunction(f, g));
  g = f;
  g.layers.front().bias_scaling =
      g.layers.front().bias_scaling == BiasScaling::kLog ? BiasScaling::kNone : BiasScaling::kLog;
  EXPECT_FALSE(SameFunction(f, g));
  g = f;
  g.layers.pop_back();
  EXPECT_FALSE(SameFunction(f, g));
  g = f;
  g.layers.front().heads.push_back(g.layers.front().heads.front());
  EXPECT_FALSE(SameFunction(f, g));
}

}  // namespace
}  // namespace ltsim
