// A fast 64-bit content digest for detecting accidental changes to bytes read from files
// (a shard's items, a string file's blocks). Not cryptographic: anyone can recompute it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ltsim/core/seed.h"

namespace ltsim {

/// Streaming digest: Update() any number of times, then value(). Each 8-byte word is mixed
/// with the SplitMix64 finaliser (Mix64), so every bit of the input affects every bit of the
/// result; the total length is mixed in last, so inputs that differ only by trailing zero
/// bytes differ. The same bytes give the same digest however they are split into Update calls.
class Digest64 {
 public:
  explicit Digest64(std::uint64_t seed = 0) : h_(Mix64(seed ^ 0x6c7473696d646967ULL)) {}

  void Update(const void* data, std::size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
    length_ += size;
    while (size > 0 && pending_ > 0) {  // complete a word begun by an earlier call
      word_ |= std::uint64_t{*p++} << (8 * pending_);
      --size;
      if (++pending_ == 8) Flush();
    }
    for (; size >= 8; size -= 8, p += 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      h_ = Mix64(h_ ^ w);
    }
    for (; size > 0; --size) {
      word_ |= std::uint64_t{*p++} << (8 * pending_);
      ++pending_;
    }
  }
  void Update(std::string_view text) { Update(text.data(), text.size()); }

  /// The digest of everything passed so far (Update may continue afterwards).
  std::uint64_t value() const {
    std::uint64_t h = h_;
    if (pending_ > 0) h = Mix64(h ^ word_);
    return Mix64(h ^ Mix64(length_));
  }

 private:
  void Flush() {
    h_ = Mix64(h_ ^ word_);
    word_ = 0;
    pending_ = 0;
  }
  std::uint64_t h_;
  std::uint64_t word_ = 0;
  std::uint64_t length_ = 0;
  int pending_ = 0;
};

/// The digest of one byte range.
inline std::uint64_t DigestOf(std::string_view bytes, std::uint64_t seed = 0) {
  Digest64 d(seed);
  d.Update(bytes);
  return d.value();
}

}  // namespace ltsim
