// Exact byte serialisation of work-item results (numbers keep every bit), for ItemDealer.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
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

// ---------------------------------------------------------------------------------------------
// Field lists: one list of a dealt struct's fields drives both byte codecs.
//
// A struct T lists its fields once, in a function template in T's own namespace (found by
// argument-dependent lookup; Self is T when reading and const T when writing):
//
//   template <typename Visit, FieldsOf<T> Self>
//   void ByteFields(Visit& visit, Self& s) { visit(s.index, s.seed, s.trajectory); }
//
// PutFields(writer, value) then writes and GetFields(reader, value) reads those fields in that
// order. A field is written as ByteWriter writes its kind: a trivially copyable value as its
// bytes (bool checked on reading), a string, a vector of trivially copyable values or an Eigen
// matrix or vector with its sizes; an optional as a flag and its value; any other vector or a
// map as a count and its elements; a pair as its two members; a struct with its own field list
// as that list. A type with its own checked codec (a Transformer: model/model_bytes.h) gives
// PutField and GetField overloads. Checks of a decoded value against its context stay with the
// decoder, after GetFields.
// ---------------------------------------------------------------------------------------------

namespace bytes_detail {

struct FieldProbe {
  template <typename... T>
  void operator()(T&...) {}
};

template <typename T>
concept HasByteFields = requires(FieldProbe& probe, T& value) {
  ByteFields(probe, value);
};

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T, typename A>
struct IsVector<std::vector<T, A>> : std::true_type {};
template <typename T>
struct IsPair : std::false_type {};
template <typename A, typename B>
struct IsPair<std::pair<A, B>> : std::true_type {};
template <typename T>
struct IsMap : std::false_type {};
template <typename K, typename V, typename C, typename A>
struct IsMap<std::map<K, V, C, A>> : std::true_type {};

}  // namespace bytes_detail

/// `Self` is T or const T: the parameter of a field list `ByteFields(visit, Self& s)`.
template <typename Self, typename T>
concept FieldsOf = std::is_same_v<std::remove_const_t<Self>, T>;

template <typename T>
void PutField(ByteWriter& out, const T& value);
template <typename T>
void GetField(ByteReader& in, T& value);

/// The visitor PutFields passes to a field list (also for a list that is not a struct's own).
struct FieldWriter {
  ByteWriter& out;
  template <typename... T>
  void operator()(const T&... fields) {
    (PutField(out, fields), ...);
  }
};

/// The visitor GetFields passes to a field list.
struct FieldReader {
  ByteReader& in;
  template <typename... T>
  void operator()(T&... fields) {
    (GetField(in, fields), ...);
  }
};

/// Writes every field `ByteFields` lists for `value`, in its order.
template <typename T>
void PutFields(ByteWriter& out, const T& value) {
  FieldWriter visit{out};
  ByteFields(visit, value);
}

/// Reads every field `ByteFields` lists for `value`, in its order.
template <typename T>
void GetFields(ByteReader& in, T& value) {
  FieldReader visit{in};
  ByteFields(visit, value);
}

template <typename T>
void PutField(ByteWriter& out, const T& value) {
  using namespace bytes_detail;
  if constexpr (HasByteFields<T>) {
    PutFields(out, value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    out.PutString(value);
  } else if constexpr (std::is_same_v<T, Matrix>) {
    out.PutMatrix(value);
  } else if constexpr (std::is_same_v<T, Vector>) {
    out.PutEigenVector(value);
  } else if constexpr (IsOptional<T>::value) {
    out.Put<bool>(value.has_value());
    if (value) PutField(out, *value);
  } else if constexpr (IsVector<T>::value) {
    using E = typename T::value_type;
    if constexpr (std::is_trivially_copyable_v<E> && !HasByteFields<E>) {
      out.PutVector(value);
    } else {
      out.Put<std::uint64_t>(value.size());
      for (const E& e : value) PutField(out, e);
    }
  } else if constexpr (IsMap<T>::value) {
    out.Put<std::uint64_t>(value.size());
    for (const auto& [key, mapped] : value) {
      PutField(out, key);
      PutField(out, mapped);
    }
  } else if constexpr (IsPair<T>::value) {
    PutField(out, value.first);
    PutField(out, value.second);
  } else {
    static_assert(std::is_trivially_copyable_v<T>, "a field kind ByteWriter cannot write");
    out.Put(value);
  }
}

template <typename T>
void GetField(ByteReader& in, T& value) {
  using namespace bytes_detail;
  if constexpr (HasByteFields<T>) {
    GetFields(in, value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    value = in.GetString();
  } else if constexpr (std::is_same_v<T, Matrix>) {
    value = in.GetMatrix();
  } else if constexpr (std::is_same_v<T, Vector>) {
    value = in.GetEigenVector();
  } else if constexpr (IsOptional<T>::value) {
    value.reset();
    if (in.Get<bool>()) GetField(in, value.emplace());
  } else if constexpr (IsVector<T>::value) {
    using E = typename T::value_type;
    if constexpr (std::is_trivially_copyable_v<E> && !HasByteFields<E>) {
      value = in.GetVector<E>();
    } else {
      // Elements are appended one by one as they decode: a count read from a file may be
      // anything, and a truncated buffer stops the loop before memory follows the count.
      const auto n = in.Get<std::uint64_t>();
      value.clear();
      for (std::uint64_t k = 0; k < n; ++k) GetField(in, value.emplace_back());
    }
  } else if constexpr (IsMap<T>::value) {
    const auto n = in.Get<std::uint64_t>();
    value.clear();
    for (std::uint64_t k = 0; k < n; ++k) {
      typename T::key_type key{};
      GetField(in, key);
      GetField(in, value[key]);
    }
  } else if constexpr (IsPair<T>::value) {
    GetField(in, value.first);
    GetField(in, value.second);
  } else {
    static_assert(std::is_trivially_copyable_v<T>, "a field kind ByteReader cannot read");
    value = in.Get<T>();
  }
}

}  // namespace ltsim
