// The run families behind Lemma 5.3's inputs that adapt to n (docs/lemma53.md §2): runs of one
// token, streamed a run at a time (never held in memory, so |x| = 10^8 costs nothing to keep).
#include <boost/random/uniform_01.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>

#include "gen/input_families.h"
#include "ltsim/core/seed.h"

namespace ltsim::inputs {
namespace {

// Runs from a seeded engine, restarted on every Open: the same string on every pass.
// `geometric`: run lengths 1 + Geometric with mean `run_length`, each run's token uniform among
// the others (the previous token excluded); otherwise every run has exactly `run_length` tokens
// (the first one shortened by a seeded phase) and the tokens cycle 0, 1, …, S − 1 from a
// seeded start (a period of S·run_length).
class RunsReader : public ChunkReader {
 public:
  RunsReader(const InputSpec& spec, bool geometric)
      : spec_(spec),
        geometric_(geometric),
        engine_(StreamSeed(spec.seed, geometric ? "runs" : "fixed-runs")),
        token_(static_cast<Token>(
            boost::random::uniform_int_distribution<int>(0, spec.alphabet - 1)(engine_))) {}
  bool Next(Chunk& chunk) override {
    if (emitted_ >= spec_.length) return false;
    std::uint64_t length = spec_.run_length;
    if (!geometric_ && emitted_ == 0 && spec_.run_length > 1)
      // A seeded phase: the first run is shortened by a uniform offset in [0, run_length).
      length -=
          boost::random::uniform_int_distribution<std::uint64_t>(0, spec_.run_length - 1)(engine_);
    if (geometric_ && spec_.run_length > 1) {
      // Inversion: 1 + ⌊ln U / ln(1 − p)⌋, p = 1/mean, U ∈ (0, 1].
      const double p = 1.0 / static_cast<double>(spec_.run_length);
      const double u = 1.0 - boost::random::uniform_01<double>()(engine_);
      length = 1 + static_cast<std::uint64_t>(std::floor(std::log(u) / std::log1p(-p)));
    }
    length = std::min(length, spec_.length - emitted_);
    chunk.kind = Chunk::Kind::kRun;
    chunk.run = {token_, length};
    emitted_ += length;
    if (spec_.alphabet > 1) {
      if (geometric_) {
        const int shift =
            boost::random::uniform_int_distribution<int>(1, spec_.alphabet - 1)(engine_);
        token_ = static_cast<Token>((token_ + shift) % spec_.alphabet);
      } else {
        token_ = static_cast<Token>((token_ + 1) % spec_.alphabet);
      }
    }
    return true;
  }

 private:
  InputSpec spec_;
  bool geometric_;
  FuzzEngine engine_;
  Token token_;
  std::uint64_t emitted_ = 0;
};

class RunsSource : public Source {
 public:
  RunsSource(const InputSpec& spec, bool geometric, std::string name)
      : spec_(spec), geometric_(geometric), name_(std::move(name)) {}
  std::uint64_t length() const override { return spec_.length; }
  std::unique_ptr<ChunkReader> Open() const override {
    return std::make_unique<RunsReader>(spec_, geometric_);
  }
  std::string name() const override { return name_; }

 private:
  InputSpec spec_;
  bool geometric_;
  std::string name_;
};

}  // namespace

std::unique_ptr<Source> MakeRunsSource(const InputSpec& spec, bool geometric, std::string name) {
  return std::make_unique<RunsSource>(spec, geometric, std::move(name));
}

}  // namespace ltsim::inputs
