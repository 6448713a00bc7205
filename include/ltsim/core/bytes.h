// Exact byte serialisation of work-item results (numbers keep every bit), for ItemDealer.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/core/types.h"

namespace ltsim {

/// Where the bytes being decoded on this thread were read from ("a.ltsim-shard: item 7"), or
/// empty for bytes that never left the run. Set by ScopedByteOrigin around the consumption of
/// bytes read from a file (a shard's items in `ltsim merge`), so that every ByteReader made
/// meanwhile reports malformed bytes as an InputError naming that origin instead of failing an
/// invariant (docs/design.md §3).
inline thread_local std::string g_byte_origin;

/// Sets the byte origin of this thread for its lifetime (restoring the previous one).
class ScopedByteOrigin {
 public:
  explicit ScopedByteOrigin(std::string origin) : previous_(std::move(g_byte_origin)) {
    g_byte_origin = std::move(origin);
  }
  ~ScopedByteOrigin() { g_byte_origin = std::move(previous_); }
  ScopedByteOrigin(const ScopedByteOrigin&) = delete;
  ScopedByteOrigin& operator=(const ScopedByteOrigin&) = delete;

 private:
  std::string previous_;
};

/// Appends values to a byte string in the host's representation: the writer and the reader
/// are the same binary (every rank of a run, or a shard and its merge on one platform).
class ByteWriter {
 public:
  template <typename T>
  void Put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void PutString(const std::string& text) {
    Put<std::uint64_t>(text.size());
    bytes_ += text;
  }
  template <typename T>
  void PutVector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>);
    Put<std::uint64_t>(values.size());
    bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }
  void PutMatrix(const Matrix& m) {
    Put<std::int64_t>(m.rows());
    Put<std::int64_t>(m.cols());
    bytes_.append(reinterpret_cast<const char*>(m.data()), m.size() * sizeof(double));
  }
  void PutEigenVector(const Vector& v) {
    Put<std::int64_t>(v.size());
    bytes_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
  }
  std::string& bytes() { return bytes_; }
  std::string Take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

/// Reads what ByteWriter wrote, in the same order. Malformed bytes (a short buffer, a bool
/// that is neither 0 nor 1, a failed Require) are a broken invariant (LTSIM_CHECK) for bytes
/// that never left the run, and an InputError naming `where` for bytes read from a file (when
/// `where` is given, or else the thread's ScopedByteOrigin).
class ByteReader {
 public:
  explicit ByteReader(const std::string& bytes, std::string where = "")
      : bytes_(bytes), where_(where.empty() ? g_byte_origin : std::move(where)) {}
  template <typename T>
  T Get() {
    static_assert(std::is_trivially_copyable_v<T>);
    if constexpr (std::is_same_v<T, bool>) {
      // Any other byte is not a bool: loading it as one is undefined behaviour.
      const auto byte = static_cast<unsigned char>(*Take(1));
      Expect(byte <= 1, "malformed (a flag that is neither 0 nor 1)");
      return byte == 1;
    } else {
      T value;
      std::memcpy(&value, Take(sizeof(T)), sizeof(T));
      return value;
    }
  }
  /// A decoded value's own rule (a size, an enum's range): the same channel as a short buffer.
  void Require(bool ok, const char* what) const { Expect(ok, what); }
  /// Whether malformed bytes are input (an InputError naming where()) rather than a bug.
  bool from_file() const { return !where_.empty(); }
  const std::string& where() const { return where_; }
  std::string GetString() {
    const auto n = Get<std::uint64_t>();
    return std::string(Take(n), n);
  }
  template <typename T>
  std::vector<T> GetVector() {
    const auto n = Get<std::uint64_t>();
    Fits(n, sizeof(T));  // before allocating: a count read from a file may be anything
    std::vector<T> values(n);
    CopyTo(values.data(), n * sizeof(T));
    return values;
  }
  Matrix GetMatrix() {
    const auto rows = Get<std::int64_t>(), cols = Get<std::int64_t>();
    Expect(rows >= 0 && cols >= 0);
    // rows·cols doubles still in the buffer (checked without overflow) before allocating.
    Expect(rows == 0 || static_cast<std::uint64_t>(cols) <=
                            Remaining() / sizeof(double) / static_cast<std::uint64_t>(rows),
           "truncated");
    Matrix m(rows, cols);
    CopyTo(m.data(), static_cast<std::size_t>(m.size()) * sizeof(double));
    return m;
  }
  Vector GetEigenVector() {
    const auto n = Get<std::int64_t>();
    Expect(n >= 0);
    Fits(static_cast<std::uint64_t>(n), sizeof(double));
    Vector v(n);
    CopyTo(v.data(), static_cast<std::size_t>(n) * sizeof(double));
    return v;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::uint64_t Remaining() const { return bytes_.size() - at_; }
  void Expect(bool ok, const char* what = "malformed") const {
    if (!where_.empty() && !ok) throw InputError(where_ + ": " + what);
    LTSIM_CHECK(ok);
  }
  // `count` items of `size` bytes are still in the buffer (no overflow in count·size).
  void Fits(std::uint64_t count, std::size_t size) const {
    Expect(count <= Remaining() / size, "truncated");
  }
  // memcpy never sees a null pointer (an empty vector's data()): n = 0 copies nothing.
  void CopyTo(void* out, std::size_t n) {
    const char* p = Take(n);
    if (n > 0) std::memcpy(out, p, n);
  }
  const char* Take(std::size_t n) {
    if (!where_.empty() && n > bytes_.size() - at_) throw InputError(where_ + ": truncated");
    LTSIM_CHECK(n <= bytes_.size() - at_);
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& bytes_;
  std::string where_;
  std::size_t at_ = 0;
};

}  // namespace ltsim
