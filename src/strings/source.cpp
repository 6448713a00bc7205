// Source defaults and whole-string helpers: opening by name, alphabet checks, ReadAll, runs.
#include "ltsim/strings/source.h"

#include <algorithm>
#include <filesystem>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"
#include "strings/iid_spec.h"

namespace ltsim {
namespace {

constexpr std::size_t kScanBlock = 4096;

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

}  // namespace

std::string Source::Locate(std::uint64_t index) const {
  return name() + ": token " + std::to_string(index + 1);
}

std::unique_ptr<Source> OpenSource(const std::string& spec) {
  if (spec.starts_with("iid:")) return OpenIidSpec(spec);
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
