// Source defaults and whole-string helpers: opening by name, alphabet checks, ReadAll, runs.
#include "ltsim/strings/source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"
#include "strings/iid_spec.h"

namespace ltsim {
namespace {

constexpr std::size_t kScanBlock = 4096;

// The most a non-seekable input (stdin, a pipe, process substitution) may hold: such inputs
// are read into memory once, since they cannot be read a second time.
constexpr std::uint64_t kMaxStreamBytes = std::uint64_t{1} << 30;

// Index of the first element >= limit, or size. Scans in blocks whose maximum vectorises.
template <typename T>
std::size_t FirstAtLeast(const T* data, std::size_t size, int limit) {
  for (std::size_t start = 0; start < size; start += kScanBlock) {
    const std::size_t end = std::min(size, start + kScanBlock);
    T block_max = 0;
    for (std::size_t k = start; k < end; ++k) block_max = std::max(block_max, data[k]);
    if (block_max < limit) continue;
    for (std::size_t k = start; k < end; ++k) {
      if (data[k] >= limit) return k;
    }
  }
  return size;
}

[[noreturn]] void ThrowOutsideAlphabet(const Source& source, std::uint64_t index, Token token,
                                       int alphabet) {
  throw InputError(source.Locate(index) + ": token " + std::to_string(token) +
                   " is outside the alphabet {0.." + std::to_string(alphabet - 1) +
                   "} of the model");
}

// Offset within `chunk` of its first token >= alphabet, or chunk.length().
std::uint64_t FirstOutside(const Chunk& chunk, int alphabet) {
  switch (chunk.kind) {
    case Chunk::Kind::kRun:
      return chunk.run.token >= alphabet ? 0 : chunk.run.count;
    case Chunk::Kind::kBytes:
      return alphabet >= 256 ? chunk.size : FirstAtLeast(chunk.bytes, chunk.size, alphabet);
    case Chunk::Kind::kWords:
      return FirstAtLeast(chunk.words, chunk.size, alphabet);
  }
  return chunk.length();
}

// "text:0^1000 1 1" names itself in messages, shortened when long.
std::string InlineName(const std::string& spec) {
  constexpr std::size_t kShown = 40;
  return spec.size() <= kShown ? spec : spec.substr(0, kShown) + "…";
}

// Reads a stream that cannot be re-opened or seeked (stdin, a pipe, process substitution)
// into memory, refusing more than kMaxStreamBytes before allocating past it.
std::string ReadStream(std::FILE* file, const std::string& name) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof(buffer), file);
    if (got == 0) break;
    if (bytes.size() + got > kMaxStreamBytes)
      throw InputError(name + ": a stream longer than " + std::to_string(kMaxStreamBytes) +
                       " bytes (a pipe or stdin is held in memory): write it to a file, which "
                       "is read in chunks");
    bytes.append(buffer, got);
  }
  if (std::ferror(file)) throw InputError(name + ": cannot read string stream");
  return bytes;
}

// A stream's bytes as a string in the format its name says (.u8, .u16, else text).
std::unique_ptr<Source> FromStreamBytes(const std::string& bytes, const std::string& name) {
  const std::string extension = std::filesystem::path(name).extension().string();
  if (extension != ".u8" && extension != ".u16") return ParseTextString(bytes, name);
  const std::size_t width = extension == ".u8" ? 1 : 2;
  if (bytes.size() % width != 0)
    throw InputError(name + ": size " + std::to_string(bytes.size()) +
                     " bytes is odd, but a .u16 string has 2 bytes a token");
  if (bytes.empty()) throw InputError(name + ": empty string");
  if (width == 1) return MakeByteSource({bytes.begin(), bytes.end()}, name);
  std::vector<Token> tokens(bytes.size() / 2);
  for (std::size_t k = 0; k < tokens.size(); ++k)
    tokens[k] = static_cast<Token>(static_cast<unsigned char>(bytes[2 * k]) |
                                   (static_cast<unsigned char>(bytes[2 * k + 1]) << 8));
  return MakeTokenSource(std::move(tokens), name);
}

// True for a path that exists but is not a regular file (a FIFO, /dev/stdin, /dev/fd/N).
bool IsStream(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode);
}

}  // namespace

std::string Source::Locate(std::uint64_t index) const {
  return name() + ": token " + std::to_string(index + 1);
}

std::unique_ptr<Source> OpenSource(const std::string& spec,
                                   std::optional<std::uint64_t> default_seed) {
  if (spec.starts_with("iid:")) return OpenIidSpec(spec, default_seed);
  if (spec.starts_with("text:")) return ParseTextString(spec.substr(5), InlineName(spec));
  if (spec == "-") return ParseTextString(ReadStream(stdin, "stdin"), "stdin");
  if (IsStream(spec)) {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(spec.c_str(), "rb"),
                                                         &std::fclose);
    if (!file) throw InputError(spec + ": cannot open string file");
    return FromStreamBytes(ReadStream(file.get(), spec), spec);
  }
  const std::string extension = std::filesystem::path(spec).extension().string();
  if (extension == ".u8") return OpenBinaryFile(spec, 1);
  if (extension == ".u16") return OpenBinaryFile(spec, 2);
  return OpenTextFile(spec);
}

void CheckAlphabet(const Source& source, int alphabet) {
  auto reader = source.Open();
  Chunk chunk;
  std::uint64_t index = 0;
  while (reader->Next(chunk)) {
    const std::uint64_t offset = FirstOutside(chunk, alphabet);
    if (offset < chunk.length()) {
      ThrowOutsideAlphabet(source, index + offset, chunk.at(offset), alphabet);
    }
    index += chunk.length();
  }
}

std::vector<Token> ReadAll(const Source& source, std::uint64_t max_length) {
  const std::uint64_t length = source.length();
  if (length > max_length) {
    throw InputError(source.name() + ": string of length " + std::to_string(length) +
                     " is longer than the limit " + std::to_string(max_length) +
                     " for this operation");
  }
  std::vector<Token> tokens;
  tokens.reserve(length);
  auto reader = source.Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    switch (chunk.kind) {
      case Chunk::Kind::kRun:
        tokens.insert(tokens.end(), chunk.run.count, chunk.run.token);
        break;
      case Chunk::Kind::kBytes:
        tokens.insert(tokens.end(), chunk.bytes, chunk.bytes + chunk.size);
        break;
      case Chunk::Kind::kWords:
        tokens.insert(tokens.end(), chunk.words, chunk.words + chunk.size);
        break;
    }
  }
  return tokens;
}

void AppendRun(std::vector<Run>& runs, Token token, std::uint64_t count) {
  if (!runs.empty() && runs.back().token == token)
    runs.back().count += count;
  else
    runs.push_back(Run{token, count});
}

std::vector<Token> FromRuns(const std::vector<Run>& runs) {
  std::vector<Token> tokens;
  for (const Run& run : runs) tokens.insert(tokens.end(), run.count, run.token);
  return tokens;
}

std::vector<Run> ToRuns(const std::vector<Token>& tokens) {
  std::vector<Run> runs;
  for (Token token : tokens) AppendRun(runs, token, 1);
  return runs;
}

}  // namespace ltsim
