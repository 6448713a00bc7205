// A string as a re-readable source of chunks, so that T never has to fit in memory (docs/design.md
// §1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ltsim/core/types.h"

namespace ltsim {

/// A piece of a string: exactly one of a byte array, a 16-bit array or a run.
struct Chunk {
  enum class Kind { kBytes, kWords, kRun };
  Kind kind = Kind::kRun;
  const std::uint8_t* bytes = nullptr;   ///< kBytes: `size` tokens
  const std::uint16_t* words = nullptr;  ///< kWords: `size` tokens
  std::size_t size = 0;
  Run run;  ///< kRun: run.count copies of run.token

  std::uint64_t length() const { return kind == Kind::kRun ? run.count : size; }
  Token at(std::size_t k) const {
    return kind == Kind::kBytes ? bytes[k] : kind == Kind::kWords ? words[k] : run.token;
  }
};

/// A cursor over one pass of a source. Not thread-safe; open one per thread.
class ChunkReader {
 public:
  virtual ~ChunkReader() = default;
  /// Fills `chunk` with the next non-empty piece; returns false at the end. The pointed-to
  /// data stays valid until the next call.
  virtual bool Next(Chunk& chunk) = 0;
};

/// A string x_1 … x_T that can be read any number of times, from any thread.
class Source {
 public:
  virtual ~Source() = default;
  /// T, known without reading the tokens (text files are scanned once when opened).
  virtual std::uint64_t length() const = 0;
  /// A fresh cursor at position 1.
  virtual std::unique_ptr<ChunkReader> Open() const = 0;
  /// What the source is, for messages: a path or a generator spec.
  virtual std::string name() const = 0;
  /// Where 0-based token `index` is, for messages ("x.txt:3:7", "x.u8: offset 12").
  virtual std::string Locate(std::uint64_t index) const;
};

/// Opens a string by name: a path (".u8", ".u16", anything else text), `-` (text on stdin),
/// `text:TOKENS` (the text format inline, e.g. "text:0^1000 1 1") or a generator spec
/// "iid:length=N,alphabet=S,seed=K[,probs=w0/w1/…]" (probs are weights, normalised to sum
/// 1). A path that is not a regular file (/dev/stdin, a FIFO, `<(…)`) is read into memory
/// (at most 1 GiB: such an input cannot be read a second time). Errors name the file and
/// position. An iid spec without `seed=` takes `default_seed` (a command's master seed, which
/// the source's name then spells); without one it is an error.
std::unique_ptr<Source> OpenSource(const std::string& spec,
                                   std::optional<std::uint64_t> default_seed = std::nullopt);

/// Checks every token is < alphabet; throws InputError naming the first bad position.
/// Cost: one pass (callers that already count tokens should check their counts instead
/// and call this only to locate the offender).
void CheckAlphabet(const Source& source, int alphabet);

/// Reads the whole string into memory (for the reference evaluator and small strings).
/// Throws InputError when T > max_length.
std::vector<Token> ReadAll(const Source& source, std::uint64_t max_length);

/// Appends `count` copies of `token` to a run-length string, merging with the last run.
void AppendRun(std::vector<Run>& runs, Token token, std::uint64_t count);

/// Expands runs into tokens (for short strings).
std::vector<Token> FromRuns(const std::vector<Run>& runs);

/// Compresses a token sequence into runs.
std::vector<Run> ToRuns(const std::vector<Token>& tokens);

}  // namespace ltsim
