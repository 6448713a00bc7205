// Fuzz harness: strings. The first byte picks the form (text, .u8, .u16 or a generator
// spec), the rest is the content; a string either opens and reads back exactly its stated
// length, or is refused with InputError.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/strings/source.h"
#include "ltsim/strings/sources.h"

namespace {

// One scratch file per process for the binary forms, which are read from files.
std::string Scratch(const char* suffix) {
  return "/tmp/ltsim_fuzz_strings_" + std::to_string(::getpid()) + suffix;
}

void Consume(const ltsim::Source& source) {
  // Only short strings are read to the end (a valid `0^1000000000000` is fine but long).
  constexpr std::uint64_t kReadLimit = std::uint64_t{1} << 22;
  if (source.length() > kReadLimit) return;
  std::uint64_t total = 0;
  ltsim::Chunk chunk;
  const auto reader = source.Open();
  while (reader->Next(chunk)) {
    LTSIM_CHECK(chunk.length() > 0);
    total += chunk.length();
    (void)chunk.at(chunk.kind == ltsim::Chunk::Kind::kRun ? 0 : chunk.size - 1);
  }
  LTSIM_CHECK(total == source.length());
  if (source.length() > 0) (void)source.Locate(source.length() - 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    std::unique_ptr<ltsim::Source> source;
    switch (data[0] % 4) {
      case 0:
        source = ltsim::ParseTextString(body, "fuzz.txt");
        break;
      case 1:
      case 2: {
        const std::string path = Scratch(data[0] % 4 == 1 ? ".u8" : ".u16");
        std::ofstream(path, std::ios::binary | std::ios::trunc) << body;
        source = ltsim::OpenBinaryFile(path, data[0] % 4);
        break;
      }
      default:
        source = ltsim::OpenSource("iid:" + body);
        break;
    }
    Consume(*source);
  } catch (const ltsim::InputError&) {
  }
  return 0;
}
