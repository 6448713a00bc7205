// Named, indexed random streams: every stream is a pure function of (master seed, name, index).
#pragma once

#include <cstdint>
#include <string_view>

namespace ltsim {

/// SplitMix64 finaliser: a bijective mix of 64 bits.
constexpr std::uint64_t Mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// FNV-1a (64-bit) of `text`: stream names, and the content-hash names of witness files.
constexpr std::uint64_t Fnv1a(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

/// Seed of the stream `name` for item `index` under `master` (docs/design.md §4): never a
/// function of threads, time or scheduling.
constexpr std::uint64_t StreamSeed(std::uint64_t master, std::string_view name,
                                   std::uint64_t index = 0) {
  return Mix64(Mix64(master ^ Fnv1a(name)) ^ Mix64(index));
}

}  // namespace ltsim
