// Concrete sources: files (text, .u8, .u16), memory, runs and seeded i.i.d. generators.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ltsim/strings/source.h"

namespace ltsim {

/// Text file: whitespace-separated tokens `s` or `s^c` (c copies), `#` comments to end of
/// line. Scanned once on construction: malformed tokens, counts < 1, tokens > 65534 and an
/// empty string are InputErrors naming "path:line:column".
std::unique_ptr<Source> OpenTextFile(const std::string& path);

/// Parses text in the same format from memory (`name` is used in messages).
std::unique_ptr<Source> ParseTextString(const std::string& text, const std::string& name);

/// Binary file of one byte (.u8) or one little-endian 16-bit word (.u16) per token.
std::unique_ptr<Source> OpenBinaryFile(const std::string& path, int bytes_per_token);

/// Tokens held in memory as bytes (all < 256).
std::unique_ptr<Source> MakeByteSource(std::vector<std::uint8_t> tokens, std::string name);
/// Tokens held in memory.
std::unique_ptr<Source> MakeTokenSource(std::vector<Token> tokens, std::string name);
/// A run-length string held in memory (the natural form of a constructed z).
std::unique_ptr<Source> MakeRunSource(std::vector<Run> runs, std::string name);

/// Seeded i.i.d. tokens: uniform over the alphabet when `probs` is empty, else with
/// probabilities proportional to these weights (normalised: probs=1/3 means 1/4, 3/4). Chunk k is a
/// pure function of (seed, k), so every pass, on any thread, sees the same string.
std::unique_ptr<Source> MakeIidSource(std::uint64_t length, int alphabet, std::uint64_t seed,
                                      std::vector<double> probs);

/// Writes a string as run-length text ("s^c" for runs longer than 1, 16 tokens a line); the
/// path `-` is standard output (as `-` is standard input for OpenSource).
void WriteRunLengthText(const Source& source, const std::string& path);
/// Writes a string as .u8 (every token must be < 256) or .u16; `-` is standard output.
void WriteBinary(const Source& source, const std::string& path, int bytes_per_token);

}  // namespace ltsim
