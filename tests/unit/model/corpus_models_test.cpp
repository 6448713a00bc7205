// The bundled task models compute their targets (docs/theory.md §6) within the stated accuracy.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <string>

#include "ltsim/construct/tasks.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/model/model_file.h"

namespace ltsim {
namespace {

std::string Corpus(const std::string& name) {
  return std::string(LTSIM_SOURCE_DIR) + "/corpus/models/" + name;
}

// Binary strings with a random share of 1s, so the targets range over [−1, 1] and [0, 1].
std::vector<Token> RandomBinary(boost::random::mt19937_64& engine, int length) {
  const int ones_percent = boost::random::uniform_int_distribution<int>(0, 100)(engine);
  boost::random::uniform_int_distribution<int> percent(0, 99);
  std::vector<Token> x(length);
  for (Token& s : x) s = percent(engine) < ones_percent ? 1 : 0;
  return x;
}

Vector Eval(const Transformer& m, const std::vector<Token>& x) {
  return EvaluateOneLayer(m, CountTypes(x, m.alphabet, m.period, m.locality));
}

// The corpus files are what the constructors write (so the tests of the constructors
// cover them) and compute sin(ω(c0 − c1)/(c0 + c1)) within the accuracy 1e-3 they were
// built for (the interpolation error bound ω²h²/8).
TEST(CorpusModels, SimpleTaskFilesComputeTheirTarget) {
  boost::random::mt19937_64 engine(11);
  for (double omega : {1.0, 4.0, 10.0}) {
    const std::string name =
        "simple_task_omega" + std::to_string(static_cast<int>(omega)) + ".json";
    const Transformer m = ReadModel(Corpus(name));
    EXPECT_EQ(ModelToJson(m), ModelToJson([&] {
                Transformer built = MakeSimpleTask(omega, 1e-3);
                built.meta_json = m.meta_json;
                return built;
              }()))
        << name;
    for (int trial = 0; trial < 200; ++trial) {
      const std::vector<Token> x = RandomBinary(engine, 1 + trial * 37);
      const double c1 = std::count(x.begin(), x.end(), 1);
      const double c0 = x.size() - c1;
      EXPECT_NEAR(Eval(m, x)[0], std::sin(omega * (c0 - c1) / (c0 + c1)), 1e-3) << name;
    }
  }
}

// ModPTask(p, k) is exact up to rounding (1e-12) once some position ≡ k (mod p) exists;
// the finite 8-bit variant from T ≥ T_hard = 2^8 on.
TEST(CorpusModels, ModPTaskFilesComputeTheirTarget) {
  boost::random::mt19937_64 engine(12);
  struct File {
    const char* name;
    int p, k, from;
  };
  for (const File& f :
       {File{"modp_task_p3_k1.json", 3, 1, 3}, File{"modp_task_p5_k0.json", 5, 0, 5},
        File{"modp_task_p3_k1_finite8.json", 3, 1, 256}}) {
    const Transformer m = ReadModel(Corpus(f.name));
    for (int trial = 0; trial < 200; ++trial) {
      const std::vector<Token> x = RandomBinary(engine, f.from + trial * 13);
      double ones = 0, positions = 0;
      for (std::size_t j = 1; j <= x.size(); ++j) {
        if (static_cast<int>(j % f.p) != f.k) continue;
        positions += 1;
        ones += x[j - 1];
      }
      EXPECT_NEAR(Eval(m, x)[0], ones / positions, 1e-12) << f.name << " T=" << x.size();
    }
  }
}

}  // namespace
}  // namespace ltsim
