// Strict reader of safetensors model files (docs/python.md "safetensors layout").
#include "ltsim/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/io/json.h"
#include "ltsim/model/limits.h"
#include "model/model_json.h"

namespace ltsim {
namespace {

using Json = io::Json;
using model_json::Expected;
using model_json::kAnyPositive;

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "safetensors F32/F64 are IEEE 754 binary32/binary64");

constexpr char kMetadataKey[] = "__metadata__";

// A name or value from the file as a message shows it: control characters escaped, cut to a
// bounded length, so that an error stays one short line whatever the file holds.
std::string Shown(const std::string& text) { return io::Printable(text, 60); }
std::string Shown(const Json& value) {
  return io::Printable(value.dump(-1, ' ', false, Json::error_handler_t::replace), 60);
}

// A read-only memory map of a whole file, unmapped on destruction.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path + ": cannot open model file");
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
      ::close(fd);
      throw InputError(path + ": cannot open model file (not a regular file)");
    }
    size_ = static_cast<std::uint64_t>(info.st_size);
    if (size_ > 0) {
      void* data = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (data == MAP_FAILED) {
        ::close(fd);
        throw InputError(path + ": cannot memory-map model file");
      }
      data_ = static_cast<const unsigned char*>(data);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<unsigned char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  std::uint64_t size_ = 0;
};

// Little-endian bytes to an integer, whatever the host's byte order.
template <typename Int>
Int LoadLittleEndian(const unsigned char* bytes) {
  Int value = 0;
  for (std::size_t i = 0; i < sizeof(Int); ++i) value |= Int(bytes[i]) << (8 * i);
  return value;
}

double LoadNumber(const unsigned char* bytes, int itemsize) {
  if (itemsize == 4) return std::bit_cast<float>(LoadLittleEndian<std::uint32_t>(bytes));
  return std::bit_cast<double>(LoadLittleEndian<std::uint64_t>(bytes));
}

// One tensor's header entry: dtype size, shape and byte range in the data buffer.
struct TensorEntry {
  std::string name;
  int itemsize = 0;
  std::vector<std::uint64_t> shape;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// The configuration is read by the model format's own reader (model_json.h), the one strict
// reader of both formats; this class supplies the tensors.
class SafetensorsReader final : public model_json::TensorSource {
 public:
  explicit SafetensorsReader(const std::string& path) : path_(path), file_(path) {}

  Transformer Read() {
    const Json header = ReadHeader();
    ReadEntries(header);
    const Json config = Metadata(header);
    Transformer model =
        model_json::ReadModelDocument(config, path_, std::string(kMetadataKey) + ".ltsim", this);
    for (const auto& [name, entry] : entries_) {
      if (!taken_.count(name))
        FailTensor(name, "unknown tensor (not in the metadata's configuration, docs/python.md)");
    }
    ValidateTransformer(model, path_);
    return model;
  }

  Matrix ReadMatrix(const std::string& name, const Expected& rows, const Expected& cols) override {
    return ReadMatrix(Take(name, rows, &cols));
  }
  Vector ReadVector(const std::string& name, const Expected& size) override {
    return ReadVector(Take(name, size, nullptr));
  }
  std::size_t Count() const override { return entries_.size(); }

 private:
  [[noreturn]] void Fail(const std::string& where, const std::string& rule) const {
    throw InputError(path_ + ": " + where + ": " + rule);
  }
  [[noreturn]] void FailTensor(const std::string& name, const std::string& rule) const {
    Fail("tensor '" + Shown(name) + "'", rule);
  }

  // The strict JSON layer of every format (io/json.h): its depth and size limits, duplicate
  // keys and overflowing numbers refused, errors as "FILE: WHERE:LINE:COL: rule".
  Json ParseStrict(const std::string& text, const std::string& where) const {
    return io::ParseJson(text, path_ + ": " + where);
  }

  Json ReadHeader() {
    if (file_.size() < 8) Fail("header", "file shorter than the 8-byte header length");
    const std::uint64_t length = LoadLittleEndian<std::uint64_t>(file_.data());
    if (length > kMaxSafetensorsHeader || length > file_.size() - 8) {
      Fail("header", "header length " + std::to_string(length) + " exceeds the file (" +
                         std::to_string(file_.size()) + " bytes) or the limit of " +
                         std::to_string(kMaxSafetensorsHeader) + " bytes");
    }
    data_ = file_.data() + 8 + length;
    data_size_ = file_.size() - 8 - length;
    const std::string text(reinterpret_cast<const char*>(file_.data()) + 8, length);
    Json header = ParseStrict(text, "header");
    if (!header.is_object()) Fail("header", "expected a JSON object");
    return header;
  }

  std::uint64_t Unsigned(const Json& value, const std::string& name, const char* key) const {
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<long long>() >= 0))
      FailTensor(name, std::string(key) + ": expected non-negative integers, got " + Shown(value));
    return value.get<std::uint64_t>();
  }

  void ReadEntries(const Json& header) {
    std::uint64_t elements = 0;
    for (const auto& item : header.items()) {
      if (item.key() == kMetadataKey) continue;
      const std::string& name = item.key();
      const Json& value = item.value();
      if (!value.is_object()) FailTensor(name, "expected an object");
      for (const auto& field : value.items()) {
        if (field.key() != "dtype" && field.key() != "shape" && field.key() != "data_offsets")
          FailTensor(name, Shown(field.key()) + ": unknown key");
      }
      for (const char* key : {"dtype", "shape", "data_offsets"}) {
        if (!value.contains(key)) FailTensor(name, std::string(key) + ": missing key");
      }
      TensorEntry entry;
      entry.name = name;
      const Json& dtype = value.at("dtype");
      if (dtype == "F32") {
        entry.itemsize = 4;
      } else if (dtype == "F64") {
        entry.itemsize = 8;
      } else {
        FailTensor(name, "dtype: unsupported " + Shown(dtype) + " (expected \"F32\" or \"F64\")");
      }
      const Json& shape = value.at("shape");
      if (!shape.is_array() || shape.size() > 2)
        FailTensor(name, "shape: expected an array of at most 2 sizes, got " + Shown(shape));
      std::uint64_t count = 1;
      for (const Json& size : shape) {
        const std::uint64_t n = Unsigned(size, name, "shape");
        if (n > kMaxSafetensorsElements) FailTensor(name, "shape: too large");
        entry.shape.push_back(n);
        count *= n;  // ≤ 2^54: no overflow with two sizes ≤ 2^27
      }
      const Json& offsets = value.at("data_offsets");
      if (!offsets.is_array() || offsets.size() != 2)
        FailTensor(name, "data_offsets: expected [begin, end], got " + Shown(offsets));
      entry.begin = Unsigned(offsets[0], name, "data_offsets");
      entry.end = Unsigned(offsets[1], name, "data_offsets");
      if (entry.begin > entry.end || entry.end > data_size_) {
        FailTensor(name, "data_offsets: [" + std::to_string(entry.begin) + ", " +
                             std::to_string(entry.end) + ") is not inside the data buffer (" +
                             std::to_string(data_size_) + " bytes)");
      }
      if (entry.end - entry.begin != count * entry.itemsize) {
        FailTensor(name, "data_offsets: " + std::to_string(entry.end - entry.begin) +
                             " bytes, but dtype and shape need " +
                             std::to_string(count * entry.itemsize));
      }
      elements += count;
      if (elements > kMaxSafetensorsElements)
        FailTensor(name,
                   "more than " + std::to_string(kMaxSafetensorsElements) + " entries in all");
      entries_.emplace(name, std::move(entry));
    }
    CheckOverlap();
  }

  void CheckOverlap() const {
    std::vector<const TensorEntry*> sorted;
    for (const auto& [name, entry] : entries_) {
      if (entry.end > entry.begin) sorted.push_back(&entry);
    }
    std::sort(sorted.begin(), sorted.end(), [](const TensorEntry* a, const TensorEntry* b) {
      return a->begin != b->begin ? a->begin < b->begin : a->name < b->name;
    });
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      if (sorted[i]->begin < sorted[i - 1]->end)
        FailTensor(sorted[i]->name,
                   "data_offsets: overlaps tensor '" + Shown(sorted[i - 1]->name) + "'");
    }
  }

  Json Metadata(const Json& header) const {
    if (!header.contains(kMetadataKey)) Fail(kMetadataKey, "missing key (needs \"ltsim\")");
    const Json& metadata = header.at(kMetadataKey);
    if (!metadata.is_object()) Fail(kMetadataKey, "expected an object of strings");
    for (const auto& item : metadata.items()) {
      if (!item.value().is_string())
        Fail(std::string(kMetadataKey) + "." + Shown(item.key()), "expected a string");
    }
    if (!metadata.contains("ltsim")) Fail(std::string(kMetadataKey) + ".ltsim", "missing key");
    Json config =
        ParseStrict(metadata.at("ltsim").get<std::string>(), std::string(kMetadataKey) + ".ltsim");
    if (!config.is_object()) Fail(std::string(kMetadataKey) + ".ltsim", "expected a JSON object");
    return config;
  }

  // Takes tensor `name` (refusing it when missing) and checks its shape against the expected
  // rows and columns (`cols` null: a vector).
  const TensorEntry& Take(const std::string& name, const Expected& rows, const Expected* cols) {
    const auto it = entries_.find(name);
    if (it == entries_.end()) FailTensor(name, "missing (the metadata needs it)");
    const TensorEntry& entry = it->second;
    taken_.insert(name);
    const auto label = [](const Expected& e) {
      return e.size == kAnyPositive ? e.label + " ≥ 1" : e.label + " = " + std::to_string(e.size);
    };
    std::string want = "[";  // appended piecewise: g++ 12 warns (-Wrestrict) on "[" + string
    want += label(rows);
    if (cols) want += ", " + label(*cols);
    want += "]";
    auto show = [&] {
      std::string text = "[";
      for (std::size_t i = 0; i < entry.shape.size(); ++i)
        text += (i ? ", " : "") + std::to_string(entry.shape[i]);
      return text + "]";
    };
    const auto fits = [](std::uint64_t size, const Expected& e) {
      return e.size == kAnyPositive ? size >= 1 : size == static_cast<std::uint64_t>(e.size);
    };
    bool ok = entry.shape.size() == (cols ? 2u : 1u) && fits(entry.shape[0], rows);
    if (ok && cols) ok = fits(entry.shape[1], *cols);
    if (!ok) FailTensor(name, "shape " + show() + ", expected " + want);
    return entry;
  }

  Matrix ReadMatrix(const TensorEntry& entry) const {
    Matrix m(static_cast<Eigen::Index>(entry.shape[0]), static_cast<Eigen::Index>(entry.shape[1]));
    const unsigned char* p = data_ + entry.begin;
    for (Eigen::Index r = 0; r < m.rows(); ++r) {
      for (Eigen::Index c = 0; c < m.cols(); ++c, p += entry.itemsize) {
        m(r, c) = LoadNumber(p, entry.itemsize);
        if (!std::isfinite(m(r, c))) {
          FailTensor(entry.name,
                     "row " + std::to_string(r) + ", column " + std::to_string(c) + ": not finite");
        }
      }
    }
    return m;
  }

  Vector ReadVector(const TensorEntry& entry) const {
    Vector v(static_cast<Eigen::Index>(entry.shape[0]));
    const unsigned char* p = data_ + entry.begin;
    for (Eigen::Index i = 0; i < v.size(); ++i, p += entry.itemsize) {
      v(i) = LoadNumber(p, entry.itemsize);
      if (!std::isfinite(v(i)))
        FailTensor(entry.name, "entry " + std::to_string(i) + ": not finite");
    }
    return v;
  }

  std::string path_;
  MappedFile file_;
  const unsigned char* data_ = nullptr;
  std::uint64_t data_size_ = 0;
  std::map<std::string, TensorEntry> entries_;
  std::set<std::string> taken_;
};

}  // namespace

Transformer ReadSafetensorsModel(const std::string& path) { return SafetensorsReader(path).Read(); }

}  // namespace ltsim
