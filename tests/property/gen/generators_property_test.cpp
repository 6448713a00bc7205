// Properties of the fuzz generators: requested shapes, pair kinds, the grid margin guarantee,
// input ranges, and that every configured cell is reachable.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ltsim/core/seed.h"
#include "ltsim/gen/input_generator.h"
#include "ltsim/gen/model_generator.h"
#include "ltsim/model/constants.h"
#include "ltsim_test/model_weights.h"

namespace ltsim {
namespace {

const std::vector<Attention> kModes = {Attention::kSoftmax, Attention::kHardmax,
                                       Attention::kFinite};
const std::vector<PairKind> kPairKinds = {PairKind::kIndependent, PairKind::kPerturbed,
                                          PairKind::kModeSwap, PairKind::kPrunedHead};
const std::vector<InputKind> kInputKinds = {InputKind::kUniform,  InputKind::kDirichlet,
                                            InputKind::kSparse,   InputKind::kMarkov,
                                            InputKind::kPeriodic, InputKind::kStress};

// Specs over S 1..6, d 1..8, Δ 1..4, τ 0..3, 1..3 heads, every mode, 1..2 layers, grid off or
// g ∈ {1, 1/2, 1/4} (scale raised to g when below it).
rc::Gen<ModelSpec> GenModelSpec() {
  return rc::gen::exec([] {
    ModelSpec s;
    s.layers = *rc::gen::arbitrary<bool>() ? 2 : 1;
    s.alphabet = *rc::gen::inRange(1, 7);
    s.width = *rc::gen::inRange(1, 9);
    s.period = *rc::gen::inRange(1, 5);
    s.locality = *rc::gen::inRange(0, 4);
    s.heads = *rc::gen::inRange(1, 4);
    s.attention = *rc::gen::elementOf(kModes);
    s.bias_scaling = *rc::gen::element(BiasScaling::kNone, BiasScaling::kLog);
    s.precision_bits = *rc::gen::inRange(1, 13);
    s.mlp = *rc::gen::arbitrary<bool>();
    s.outputs = *rc::gen::inRange(1, 4);
    s.scale = *rc::gen::element(0.5, 1.0, 2.0);
    s.grid = *rc::gen::element(0.0, 0.0, 1.0, 0.5, 0.25);
    s.scale = std::max(s.scale, s.grid);
    return s;
  });
}

// A pair case: the spec adjusted so that the pair kind applies (≥ 2 heads to prune, another
// mode to swap to).
struct PairCase {
  ModelSpec spec;
  PairSpec pair;
  std::uint64_t seed = 0;
};

rc::Gen<PairCase> GenPairCase() {
  return rc::gen::exec([] {
    PairCase c;
    c.spec = *GenModelSpec();
    c.pair.kind = *rc::gen::elementOf(kPairKinds);
    c.pair.delta = *rc::gen::element(0.0, 0.001, 0.1, 1.0);
    std::vector<Attention> others;
    for (Attention mode : kModes)
      if (mode != c.spec.attention) others.push_back(mode);
    c.pair.other_mode = *rc::gen::elementOf(others);
    if (c.pair.kind == PairKind::kPrunedHead) c.spec.heads = std::max(c.spec.heads, 2);
    c.seed = *rc::gen::arbitrary<std::uint64_t>();
    return c;
  });
}

rc::Gen<InputSpec> GenInputSpec() {
  return rc::gen::exec([] {
    InputSpec s;
    s.kind = *rc::gen::elementOf(kInputKinds);
    s.length = *rc::gen::inRange<std::uint64_t>(1, 3001);
    s.alphabet = *rc::gen::oneOf(rc::gen::inRange(1, 9), rc::gen::just(kMaxAlphabet));
    s.seed = *rc::gen::arbitrary<std::uint64_t>();
    s.alpha = *rc::gen::element(0.001, 0.1, 1.0, 10.0);
    s.parents = *rc::gen::oneOf(rc::gen::inRange(1, 5), rc::gen::inRange(1, 65));
    s.noise = *rc::gen::element(0.0, 0.05, 0.5, 1.0);
    s.pattern = *rc::gen::inRange(1, 21);
    return s;
  });
}

using test::AllWeights;

// The spec's shape, modes and (on a grid) weight law, heads counted per layer.
void CheckShape(const Transformer& model, const ModelSpec& spec, int first_layer_heads) {
  ValidateTransformer(model, "generated");
  RC_ASSERT(model.alphabet == spec.alphabet);
  RC_ASSERT(model.width == spec.width);
  RC_ASSERT(model.period == spec.period);
  RC_ASSERT(model.locality == spec.locality);
  RC_ASSERT(model.outputs() == spec.outputs);
  RC_ASSERT(static_cast<int>(model.layers.size()) == spec.layers);
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const Layer& layer = model.layers[l];
    RC_ASSERT(static_cast<int>(layer.heads.size()) == (l == 0 ? first_layer_heads : spec.heads));
    RC_ASSERT(layer.bias_scaling == (l == 0 ? spec.bias_scaling : BiasScaling::kNone));
    RC_ASSERT(layer.mlp.has_value() == spec.mlp);
  }
  if (spec.grid > 0) {
    for (double w : AllWeights(model)) {
      RC_ASSERT(std::fmod(w, spec.grid) == 0.0);
      RC_ASSERT(std::abs(w) <= spec.scale);
    }
  }
}

void CheckModes(const Transformer& model, Attention mode, int bits) {
  for (const Layer& layer : model.layers) {
    RC_ASSERT(layer.attention == mode);
    RC_ASSERT(layer.precision_bits == (mode == Attention::kFinite ? bits : 0));
  }
}

// The guarantee documented in src/gen/model_generator.cpp, for a model on the grid g = 2^−k:
// γ is a positive multiple of g³ (≥ g³) or ∞; log₂ T_hard = p/γ ≤ p/g³ and T_hard ≤ 2^(p/g³)
// for a finite first layer; γ_pos ≥ g or ∞.
void CheckGridMargins(const Transformer& model, double grid) {
  const double cube = grid * grid * grid;
  const double gamma = LogitMargin(model);
  RC_ASSERT(gamma > 0);
  if (std::isfinite(gamma)) {
    RC_ASSERT(gamma >= cube);
    RC_ASSERT(std::fmod(gamma, cube) == 0.0);
  }
  const Layer& first = model.layers.front();
  if (first.attention == Attention::kFinite) {
    RC_ASSERT(Log2HardmaxLength(model) <= first.precision_bits / cube);
    RC_ASSERT(HardmaxLength(model) <= std::exp2(first.precision_bits / cube));
  }
  const double gamma_pos = PositionalMargin(model);
  RC_ASSERT(std::isinf(gamma_pos) || gamma_pos >= grid);
}

RC_GTEST_PROP(ModelGeneratorProperty, ModelsHaveTheRequestedShapeAndReplay, ()) {
  const ModelSpec spec = *GenModelSpec();
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_TAG(AttentionName(spec.attention), spec.layers, spec.grid > 0 ? "grid" : "gaussian");
  FuzzEngine engine(seed), again(seed);
  const Transformer model = GenerateModel(spec, engine);
  CheckShape(model, spec, spec.heads);
  CheckModes(model, spec.attention, spec.precision_bits);
  RC_ASSERT(AllWeights(GenerateModel(spec, again)) == AllWeights(model));
}

RC_GTEST_PROP(ModelGeneratorProperty, GridModelsKeepTheMarginGuarantee, ()) {
  PairCase c = *GenPairCase();
  c.spec.grid = *rc::gen::element(1.0, 0.5, 0.25, 0.125);
  c.spec.scale = std::max(c.spec.scale, c.spec.grid);
  FuzzEngine engine(c.seed);
  const auto [f, g] = GeneratePair(c.spec, c.pair, engine);
  const double gamma = LogitMargin(f), cube = c.spec.grid * c.spec.grid * c.spec.grid;
  RC_TAG(c.spec.grid, std::isinf(gamma) ? "gamma = inf"
                      : gamma == cube   ? "gamma = g^3"
                                        : "gamma > g^3");
  CheckGridMargins(f, c.spec.grid);
  CheckGridMargins(g, c.spec.grid);
}

// g's weights are f's with one first-layer head removed.
bool IsFWithoutOneHead(const Transformer& f, const Transformer& g) {
  for (std::size_t h = 0; h < f.layers.front().heads.size(); ++h) {
    Transformer candidate = f;
    candidate.layers.front().heads.erase(candidate.layers.front().heads.begin() + h);
    if (AllWeights(candidate) == AllWeights(g)) return true;
  }
  return false;
}

RC_GTEST_PROP(ModelGeneratorProperty, PairsDoWhatTheirKindSays, ()) {
  const PairCase c = *GenPairCase();
  RC_TAG(PairKindName(c.pair.kind), AttentionName(c.spec.attention), c.spec.layers);
  FuzzEngine engine(c.seed), again(c.seed);
  const auto [f, g] = GeneratePair(c.spec, c.pair, engine);
  RC_ASSERT(AllWeights(f) == AllWeights(GenerateModel(c.spec, again)));  // f is drawn first
  CheckShape(f, c.spec, c.spec.heads);
  const std::vector<double> wf = AllWeights(f), wg = AllWeights(g);
  switch (c.pair.kind) {
    case PairKind::kIndependent:
      CheckShape(g, c.spec, c.spec.heads);
      CheckModes(g, c.spec.attention, c.spec.precision_bits);
      break;
    case PairKind::kPerturbed: {
      // |δ·N(0, 1)| ≤ 7δ except with probability 3·10⁻¹² per weight; a grid adds g/2.
      CheckShape(g, c.spec, c.spec.heads);
      CheckModes(g, c.spec.attention, c.spec.precision_bits);
      for (std::size_t i = 0; i < wf.size(); ++i)
        RC_ASSERT(std::abs(wg[i] - wf[i]) <= 7 * c.pair.delta + c.spec.grid / 2);
      break;
    }
    case PairKind::kModeSwap:
      CheckShape(g, c.spec, c.spec.heads);
      CheckModes(g, c.pair.other_mode, c.spec.precision_bits);
      RC_ASSERT(wg == wf);
      break;
    case PairKind::kPrunedHead:
      CheckShape(g, c.spec, c.spec.heads - 1);
      CheckModes(g, c.spec.attention, c.spec.precision_bits);
      RC_ASSERT(IsFWithoutOneHead(f, g));
      break;
  }
}

RC_GTEST_PROP(InputGeneratorProperty, InputsHaveTheRequestedLengthAlphabetAndReplay, ()) {
  const InputSpec spec = *GenInputSpec();
  const auto source = MakeInput(spec);
  const std::string name = source->name();
  RC_TAG(InputKindName(spec.kind),
         spec.kind == InputKind::kStress ? name.substr(name.rfind('=') + 1) : "");
  const std::vector<Token> x = ReadAll(*source, spec.length);
  RC_ASSERT(x.size() == spec.length);
  for (Token t : x) RC_ASSERT(t < spec.alphabet);
  RC_ASSERT(ReadAll(*source, spec.length) == x);
  const InputSpec back = InputSpecFromJson(InputSpecToJson(spec), "property");
  RC_ASSERT(ReadAll(*MakeInput(back), spec.length) == x);
}

// ---- Reachability: every configured cell generates without error. ----

// Each mode × pair kind × other mode × layers × grid generates, and the pair has the promised
// relation; on a grid the margin guarantee holds for f and g.
TEST(GeneratorCells, EveryModelCellGenerates) {
  int cells = 0;
  for (Attention mode : kModes) {
    for (PairKind kind : kPairKinds) {
      for (Attention other : kModes) {
        if (kind == PairKind::kModeSwap ? other == mode : other != Attention::kHardmax) continue;
        for (int layers : {1, 2}) {
          for (double grid : {0.0, 0.5}) {
            ModelSpec spec;
            spec.attention = mode;
            spec.layers = layers;
            spec.grid = grid;
            spec.heads = 2;
            spec.locality = 1;
            PairSpec pair{kind, 0.1, other};
            FuzzEngine engine(StreamSeed(5, "cell", cells));
            const auto [f, g] = GeneratePair(spec, pair, engine);
            EXPECT_EQ(f.layers.size(), static_cast<std::size_t>(layers));
            EXPECT_EQ(g.layers.front().attention, kind == PairKind::kModeSwap ? other : mode);
            EXPECT_EQ(g.layers.front().heads.size(), kind == PairKind::kPrunedHead ? 1u : 2u);
            if (grid > 0) {
              EXPECT_GE(LogitMargin(f), 0.125);
              EXPECT_GE(LogitMargin(g), 0.125);
            }
            ++cells;
          }
        }
      }
    }
  }
  EXPECT_EQ(cells, 3 * (3 + 2) * 2 * 2);  // 3 modes × (3 plain kinds + 2 swaps) × layers × grid
}

// Each input kind generates on small and large alphabets, and every stress variant is drawn.
TEST(GeneratorCells, EveryInputCellGenerates) {
  std::set<std::string> variants;
  for (InputKind kind : kInputKinds) {
    for (int alphabet : {1, 2, 6, kMaxAlphabet}) {
      for (std::uint64_t seed = 0; seed < 16; ++seed) {
        const InputSpec spec{kind, 500, alphabet, seed};
        const auto source = MakeInput(spec);
        EXPECT_EQ(ReadAll(*source, 500).size(), 500u);
        const std::string name = source->name();
        if (kind == InputKind::kStress) variants.insert(name.substr(name.rfind('=') + 1));
      }
    }
  }
  EXPECT_EQ(variants,
            (std::set<std::string>{"long-runs", "mixed-scale", "rare-types", "suffix-ties"}));
}

// The property generators above reach every cell: each mode × layers × grid on/off, each pair
// kind, each input kind (2000 draws at RapidCheck's full size from a fixed seed).
TEST(GeneratorCells, PropertyGeneratorsReachEveryCell) {
  rc::Random random(20260101);
  std::set<std::tuple<Attention, int, bool>> model_cells;
  std::set<PairKind> pair_cells;
  std::set<InputKind> input_cells;
  for (int i = 0; i < 2000; ++i) {
    const PairCase c = GenPairCase()(random.split(), rc::kNominalSize).value();
    model_cells.emplace(c.spec.attention, c.spec.layers, c.spec.grid > 0);
    pair_cells.insert(c.pair.kind);
    input_cells.insert(GenInputSpec()(random.split(), rc::kNominalSize).value().kind);
  }
  EXPECT_EQ(model_cells.size(), 3u * 2u * 2u);
  EXPECT_EQ(pair_cells.size(), 4u);
  EXPECT_EQ(input_cells.size(), 6u);
}

}  // namespace
}  // namespace ltsim
