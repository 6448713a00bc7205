// Test functions of Lemma 5.3 and their averages over x and over z (docs/theory.md §4.4).
#include "ltsim/check/lemma53.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_01.hpp>
#include <cmath>
#include <numbers>
#include <unordered_map>

#include "ltsim/core/error.h"
#include "ltsim/core/seed.h"
#include "ltsim/eval/first_layer.h"
#include "ltsim/eval/type_counts.h"
#include "ltsim/sim/simulator.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

// key(w): the window's length and tokens, mixed (distinct windows collide with probability
// about 2^−64 a pair).
std::uint64_t WindowKey(std::span<const Token> window) {
  std::uint64_t key = Mix64(window.size());
  for (Token s : window) key = Mix64(key ^ (std::uint64_t{s} + 1));
  return key;
}

// The random family's pass: the window, the running counts, and the parameters of the
// windows seen so far (bounded, so memory stays independent of T).
class RandomLipschitzPass : public TestFunctionPass {
 public:
  explicit RandomLipschitzPass(const RandomLipschitzFunction& p)
      : p_(p),
        capacity_(static_cast<std::size_t>(p.locality()) + 1),
        counts_(p.alphabet(), 0),
        value_(1) {
    window_.reserve(capacity_);
  }

  const Vector& Push(Token token) override {
    Slide(token);
    ++counts_[token];
    ++position_;
    const WindowParameters& w = Lookup();
    double dot = 0.0;
    for (std::size_t s = 0; s < counts_.size(); ++s)
      dot += w.b[s] * static_cast<double>(counts_[s]);
    value_[0] = w.a * std::cos(dot / static_cast<double>(position_) + w.c);
    return value_;
  }

 private:
  static constexpr std::size_t kCacheDoubles = std::size_t{1} << 22;

  void Slide(Token token) {
    if (window_.size() < capacity_) {
      window_.push_back(token);
      return;
    }
    for (std::size_t k = 1; k < capacity_; ++k) window_[k - 1] = window_[k];
    window_.back() = token;
  }

  // The parameters of the current window; the last one is remembered (runs repeat it).
  const WindowParameters& Lookup() {
    const std::uint64_t key = WindowKey(window_);
    if (last_ != nullptr && key == last_key_) return *last_;
    auto found = cache_.find(key);
    if (found == cache_.end()) {
      if ((cache_.size() + 1) * (counts_.size() + 2) > kCacheDoubles) cache_.clear();
      found = cache_.emplace(key, p_.Parameters(window_)).first;
    }
    last_key_ = key;
    last_ = &found->second;  // nodes of an unordered_map keep their address
    return *last_;
  }

  const RandomLipschitzFunction& p_;
  std::size_t capacity_;
  std::vector<Token> window_;
  std::vector<std::uint64_t> counts_;
  std::uint64_t position_ = 0;
  std::unordered_map<std::uint64_t, WindowParameters> cache_;
  std::uint64_t last_key_ = 0;
  const WindowParameters* last_ = nullptr;
  Vector value_;
};

class FirstLayerPass : public TestFunctionPass {
 public:
  explicit FirstLayerPass(const Transformer& model) : stream_(model) {}
  const Vector& Push(Token token) override { return stream_.Push(token); }

 private:
  FirstLayerStream stream_;
};

// Neumaier's compensated sum of vectors, component by component.
class VectorSum {
 public:
  explicit VectorSum(int dimension)
      : sum_(Vector::Zero(dimension)), compensation_(Vector::Zero(dimension)) {}
  void Add(const Vector& v) {
    for (Eigen::Index k = 0; k < v.size(); ++k) {
      const double t = sum_[k] + v[k];
      compensation_[k] +=
          std::abs(sum_[k]) >= std::abs(v[k]) ? (sum_[k] - t) + v[k] : (v[k] - t) + sum_[k];
      sum_[k] = t;
    }
  }
  Vector Total() const { return sum_ + compensation_; }

 private:
  Vector sum_, compensation_;
};

// The view z is built for: the models' joint view, or period 1 and p's locality.
JointView ViewFor(const TestFunction& p, const std::vector<const Transformer*>& models,
                  const std::string& method) {
  if (models.empty()) {
    if (SimulatorHas(method, &SimulatorTraits::model_aware))
      throw OptionError("method", "needs models (the models option is empty)", method);
    return {p.alphabet(), 1, p.locality()};
  }
  const JointView view = JointViewOf(models);
  if (view.alphabet != p.alphabet())
    throw InputError(fmt::format("test function alphabet {} differs from the models' {}",
                                 p.alphabet(), view.alphabet));
  return view;
}

}  // namespace

RandomLipschitzFunction::RandomLipschitzFunction(std::uint64_t seed, int alphabet, int locality,
                                                 double lipschitz)
    : seed_(seed), alphabet_(alphabet), locality_(locality), lipschitz_(lipschitz) {
  if (alphabet < 1 || alphabet > kMaxAlphabet)
    throw OptionError("alphabet",
                      fmt::format("must be in [1, {}], not {}", kMaxAlphabet, alphabet));
  constexpr int kMaxLocality = 1 << 20;  // the window is held and slid per token
  if (locality < 0 || locality > kMaxLocality)
    throw OptionError("locality",
                      fmt::format("must be in [0, {}], not {}", kMaxLocality, locality));
  if (!std::isfinite(lipschitz) || lipschitz < 0.0)
    throw OptionError("lipschitz", fmt::format("must be finite and ≥ 0, not {}", lipschitz));
}

std::string RandomLipschitzFunction::name() const {
  return fmt::format("random Lipschitz a·cos(<b,μ> + c) (seed {}, S = {}, τ = {}, L = {})", seed_,
                     alphabet_, locality_, lipschitz_);
}

std::unique_ptr<TestFunctionPass> RandomLipschitzFunction::Begin() const {
  return std::make_unique<RandomLipschitzPass>(*this);
}

WindowParameters RandomLipschitzFunction::Parameters(std::span<const Token> window) const {
  LTSIM_CHECK(!window.empty() && window.size() <= static_cast<std::size_t>(locality_) + 1);
  boost::random::mt19937_64 engine(StreamSeed(seed_, "lemma53", WindowKey(window)));
  boost::random::uniform_01<double> unit;
  WindowParameters w;
  w.a = 2.0 * unit(engine) - 1.0;
  w.b.resize(alphabet_);
  for (double& b : w.b) b = lipschitz_ * (2.0 * unit(engine) - 1.0);
  w.c = 2.0 * std::numbers::pi * unit(engine);
  return w;
}

double RandomLipschitzFunction::Evaluate(std::span<const Token> window,
                                         std::span<const double> histogram) const {
  LTSIM_CHECK(histogram.size() == static_cast<std::size_t>(alphabet_));
  const WindowParameters w = Parameters(window);
  double dot = 0.0;
  for (std::size_t s = 0; s < histogram.size(); ++s) dot += w.b[s] * histogram[s];
  return w.a * std::cos(dot + w.c);
}

FirstLayerFunction::FirstLayerFunction(const Transformer& model) : model_(model) {
  if (model.layers.empty()) throw OptionError("model", "the model has no layer");
}

std::string FirstLayerFunction::name() const {
  return fmt::format("first-layer output y¹ of '{}' (d = {}, τ = {})", model_.name, model_.width,
                     model_.locality);
}

std::unique_ptr<TestFunctionPass> FirstLayerFunction::Begin() const {
  return std::make_unique<FirstLayerPass>(model_);
}

Vector AverageOverPositions(const Source& s, const TestFunction& p) {
  const auto pass = p.Begin();
  VectorSum sum(p.dimension());
  std::uint64_t length = 0;
  auto reader = s.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    for (std::uint64_t k = 0; k < chunk.length(); ++k, ++length) {
      const Token token = chunk.at(k);
      if (token >= p.alphabet()) CheckAlphabet(s, p.alphabet());  // throws, naming the position
      sum.Add(pass->Push(token));
    }
  }
  if (length == 0) throw InputError(s.name() + ": empty string");
  return sum.Total() / static_cast<double>(length);
}

double ReferenceRate(const TestFunction& p, std::uint64_t target_length) {
  return (p.size_bound() + p.lipschitz()) * (p.locality() + 1.0) /
         std::cbrt(static_cast<double>(target_length));
}

Lemma53Result RunLemma53(const Source& x, const TestFunction& p,
                         const std::vector<const Transformer*>& models,
                         const SandwichOptions& options) {
  const JointView view = ViewFor(p, models, options.method);
  const TypeCounts counts = CountTypes(x, view.alphabet, view.period, view.locality);
  const auto simulator = MakeSimulator(options.method);
  Lemma53Result result;
  result.method = options.method;
  result.simulation =
      simulator->Simulate({x, counts, models, options.length, options.seed, options.block_length});
  const auto z = MakeRunSource(result.simulation.z, "z");
  result.average_x = AverageOverPositions(x, p);
  result.average_z = AverageOverPositions(*z, p);
  result.difference = (result.average_x - result.average_z).lpNorm<Eigen::Infinity>();
  result.reference_rate = ReferenceRate(p, options.length);
  result.x_length = counts.length;
  result.z_length = result.simulation.length;
  return result;
}

}  // namespace ltsim
