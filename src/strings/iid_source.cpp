// Seeded i.i.d. strings: chunk k is drawn by its own Boost.Random engine seeded from (seed, k).
#include <algorithm>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/mersenne_twister.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"
#include "ltsim/strings/sources.h"
#include "strings/iid_spec.h"

namespace ltsim {
namespace {

constexpr std::uint64_t kChunkTokens = 1 << 16;
constexpr double kTwoTo64 = 18446744073709551616.0;

struct IidParams {
  std::uint64_t length = 0;
  int alphabet = 0;
  std::uint64_t seed = 0;
  std::vector<double> probs;  // empty: uniform
};

std::uint64_t SplitMix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// The engine seed of chunk k: a pure function of (seed, k) (docs/design.md §4).
std::uint64_t ChunkSeed(std::uint64_t seed, std::uint64_t k) {
  return SplitMix64(seed ^ SplitMix64(k));
}

std::string FormatDouble(double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

std::string FormatSpec(const IidParams& params) {
  std::string spec = "iid:length=" + std::to_string(params.length) +
                     ",alphabet=" + std::to_string(params.alphabet) +
                     ",seed=" + std::to_string(params.seed);
  for (std::size_t a = 0; a < params.probs.size(); ++a) {
    spec += (a == 0 ? ",probs=" : "/") + FormatDouble(params.probs[a]);
  }
  return spec;
}

/// Range checks; `label` (the spec) prefixes every message.
void Validate(const IidParams& params, const std::string& label) {
  if (params.length < 1) throw InputError(label + ": key 'length' must be at least 1");
  if (params.alphabet < 1 || params.alphabet > kMaxAlphabet) {
    throw InputError(label + ": key 'alphabet' must be from 1 to 65535");
  }
  if (params.probs.empty()) return;
  if (params.probs.size() != static_cast<std::size_t>(params.alphabet)) {
    throw InputError(label + ": key 'probs' has " + std::to_string(params.probs.size()) +
                     " values but the alphabet has " + std::to_string(params.alphabet));
  }
  double largest = 0;
  for (double p : params.probs) {
    if (!std::isfinite(p) || p < 0) {
      throw InputError(label + ": key 'probs' must be finite and non-negative");
    }
    largest = std::max(largest, p);
  }
  if (!(largest > 0)) throw InputError(label + ": key 'probs' must have a positive sum");
  for (std::size_t a = 0; a < params.probs.size(); ++a) {
    if (params.probs[a] > 0 && params.probs[a] / largest == 0) {
      throw InputError(label + ": key 'probs': value " + FormatDouble(params.probs[a]) +
                       " (token " + std::to_string(a) + ") is positive but its ratio to the " +
                       "largest, " + FormatDouble(largest) +
                       ", is below the smallest double: it cannot be normalised");
    }
  }
}

/// The law of the positive-weight tokens: weights divided by the largest first (so that neither
/// the sum overflows nor the quotients underflow), tokens of weight 0 left out, so they are never
/// drawn (docs/formats.md §2).
struct TokenLaw {
  std::vector<int> tokens;  // the tokens of positive weight, in order
  boost::random::discrete_distribution<int, double> law;
};

TokenLaw MakeTokenLaw(const std::vector<double>& probs) {
  const double largest = *std::max_element(probs.begin(), probs.end());
  TokenLaw out;
  std::vector<double> weights;
  for (std::size_t a = 0; a < probs.size(); ++a) {
    if (!(probs[a] > 0)) continue;
    out.tokens.push_back(static_cast<int>(a));
    weights.push_back(probs[a] / largest);  // in (0, 1], the largest exactly 1
  }
  out.law = boost::random::discrete_distribution<int, double>(weights.begin(), weights.end());
  return out;
}

/// One pass: regenerates chunk k from its own engine, so passes never share state.
class IidReader : public ChunkReader {
 public:
  explicit IidReader(const IidParams& params)
      : length_(params.length),
        seed_(params.seed),
        uniform_(0, params.alphabet - 1),
        buffer_(std::min(kChunkTokens, params.length)) {
    if (!params.probs.empty()) weighted_ = MakeTokenLaw(params.probs);
  }

  bool Next(Chunk& chunk) override {
    const std::uint64_t start = next_chunk_ * kChunkTokens;
    if (start >= length_) return false;
    const std::size_t size = std::min(kChunkTokens, length_ - start);
    engine_.seed(ChunkSeed(seed_, next_chunk_++));
    if (weighted_) {
      for (std::size_t k = 0; k < size; ++k)
        buffer_[k] = static_cast<Token>(weighted_->tokens[weighted_->law(engine_)]);
    } else {
      for (std::size_t k = 0; k < size; ++k) buffer_[k] = static_cast<Token>(uniform_(engine_));
    }
    chunk = Chunk{};
    chunk.kind = Chunk::Kind::kWords;
    chunk.words = buffer_.data();
    chunk.size = size;
    return true;
  }

 private:
  std::uint64_t length_;
  std::uint64_t seed_;
  std::uint64_t next_chunk_ = 0;
  boost::random::mt19937_64 engine_;
  boost::random::uniform_int_distribution<int> uniform_;
  std::optional<TokenLaw> weighted_;
  std::vector<Token> buffer_;
};

class IidSource : public Source {
 public:
  explicit IidSource(IidParams params) : params_(std::move(params)), name_(FormatSpec(params_)) {}

  std::uint64_t length() const override { return params_.length; }
  std::unique_ptr<ChunkReader> Open() const override {
    return std::make_unique<IidReader>(params_);
  }
  std::string name() const override { return name_; }

 private:
  IidParams params_;
  std::string name_;
};

// ---- Parsing the spec -------------------------------------------------------------------

template <typename T>
bool ParseExact(std::string_view text, T& value) {
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  return result.ec == std::errc() && result.ptr == text.data() + text.size();
}

/// An integer written plainly or in floating notation ("1e8").
bool ParseLength(std::string_view text, std::uint64_t& value) {
  if (ParseExact(text, value)) return true;
  double real = 0;
  if (!ParseExact(text, real) || !(real >= 0) || real >= kTwoTo64 || real != std::floor(real)) {
    return false;
  }
  value = static_cast<std::uint64_t>(real);
  return true;
}

bool ParseProbs(std::string_view text, std::vector<double>& probs) {
  for (;;) {
    const std::size_t slash = text.find('/');
    double p = 0;
    if (!ParseExact(text.substr(0, slash), p)) return false;
    probs.push_back(p);
    if (slash == std::string_view::npos) return true;
    text.remove_prefix(slash + 1);
  }
}

/// The key=value pairs after "iid:", each key at most once.
std::map<std::string, std::string> SplitPairs(const std::string& spec) {
  std::map<std::string, std::string> pairs;
  std::string_view rest = std::string_view(spec).substr(4);
  for (bool more = !rest.empty(); more;) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    more = comma != std::string_view::npos;
    if (more) rest.remove_prefix(comma + 1);
    // "…,seed=1," or "…,,…": an empty item is a typo, not nothing (docs/design.md §3).
    if (item.empty()) throw InputError(spec + ": empty item (a stray ',')");
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos) {
      throw InputError(spec + ": expected key=value, got '" + std::string(item) + "'");
    }
    const std::string key(item.substr(0, equals));
    if (key != "length" && key != "alphabet" && key != "seed" && key != "probs") {
      throw InputError(spec + ": unknown key '" + key + "'" +
                       DidYouMean(key, {"length", "alphabet", "seed", "probs"}) +
                       " (the keys are length, alphabet, seed, probs)");
    }
    if (!pairs.emplace(key, std::string(item.substr(equals + 1))).second) {
      throw InputError(spec + ": key '" + key + "' is given twice");
    }
  }
  return pairs;
}

const std::string& Required(const std::map<std::string, std::string>& pairs, const std::string& key,
                            const std::string& spec) {
  const auto found = pairs.find(key);
  if (found == pairs.end()) throw InputError(spec + ": missing key '" + key + "'");
  return found->second;
}

[[noreturn]] void ThrowBadValue(const std::string& spec, const std::string& key,
                                const std::string& value, const std::string& rule) {
  throw InputError(spec + ": key '" + key + "' must be " + rule + ", got '" + value + "'");
}

IidParams ParseParams(const std::string& spec, std::optional<std::uint64_t> default_seed) {
  const auto pairs = SplitPairs(spec);
  IidParams params;
  const std::string& length = Required(pairs, "length", spec);
  if (!ParseLength(length, params.length) || params.length < 1) {
    ThrowBadValue(spec, "length", length, "an integer at least 1");
  }
  const std::string& alphabet = Required(pairs, "alphabet", spec);
  if (!ParseExact(std::string_view(alphabet), params.alphabet) || params.alphabet < 1 ||
      params.alphabet > kMaxAlphabet) {
    ThrowBadValue(spec, "alphabet", alphabet, "an integer from 1 to 65535");
  }
  if (default_seed && !pairs.contains("seed")) {
    params.seed = *default_seed;  // the running command's master seed (docs/design.md §4)
  } else {
    const std::string& seed = Required(pairs, "seed", spec);
    if (!ParseExact(std::string_view(seed), params.seed)) {
      ThrowBadValue(spec, "seed", seed, "an integer from 0 to 18446744073709551615");
    }
  }
  const auto probs = pairs.find("probs");
  if (probs != pairs.end() && !ParseProbs(probs->second, params.probs)) {
    ThrowBadValue(spec, "probs", probs->second, "numbers separated by '/'");
  }
  Validate(params, spec);
  return params;
}

}  // namespace

std::unique_ptr<Source> MakeIidSource(std::uint64_t length, int alphabet, std::uint64_t seed,
                                      std::vector<double> probs) {
  IidParams params{length, alphabet, seed, std::move(probs)};
  Validate(params, FormatSpec(params));
  return std::make_unique<IidSource>(std::move(params));
}

std::unique_ptr<Source> OpenIidSpec(const std::string& spec,
                                    std::optional<std::uint64_t> default_seed) {
  return std::make_unique<IidSource>(ParseParams(spec, default_seed));
}

}  // namespace ltsim
