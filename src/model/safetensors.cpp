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

namespace ltsim {
namespace {

using Json = nlohmann::ordered_json;

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "safetensors F32/F64 are IEEE 754 binary32/binary64");

constexpr char kFormatName[] = "ltsim-model";
constexpr int kFormatVersion = 1;
constexpr char kMetadataKey[] = "__metadata__";

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

class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path) : path_(path), file_(path) {}

  Transformer Read() {
    const Json header = ReadHeader();
    ReadEntries(header);
    const Json config = Metadata(header);
    Transformer model = Configure(config);
    FillTensors(model);
    ValidateTransformer(model, path_);
    return model;
  }

 private:
  [[noreturn]] void Fail(const std::string& where, const std::string& rule) const {
    throw InputError(path_ + ": " + where + ": " + rule);
  }
  [[noreturn]] void FailTensor(const std::string& name, const std::string& rule) const {
    Fail("tensor '" + name + "'", rule);
  }
  [[noreturn]] void FailMeta(const std::string& key, const std::string& rule) const {
    Fail(std::string(kMetadataKey) + ".ltsim" + (key.empty() ? "" : "." + key), rule);
  }

  // Parses JSON refusing duplicate keys at any depth; `where` names it in errors.
  Json ParseStrict(const std::string& text, const std::string& where) const {
    std::vector<std::set<std::string>> frames;
    std::string duplicate;
    const Json::parser_callback_t callback = [&](int, Json::parse_event_t event, Json& parsed) {
      switch (event) {
        case Json::parse_event_t::object_start:
          frames.emplace_back();
          break;
        case Json::parse_event_t::object_end:
          frames.pop_back();
          break;
        case Json::parse_event_t::key:
          if (duplicate.empty() && !frames.back().insert(parsed.get<std::string>()).second)
            duplicate = parsed.get<std::string>();
          break;
        default:
          break;
      }
      return true;
    };
    Json json;
    try {
      json = Json::parse(text, callback);
    } catch (const Json::exception& error) {
      std::string reason = error.what();
      const std::size_t colon = reason.find("]");
      if (colon != std::string::npos) reason = reason.substr(colon + 2);
      if (reason.size() > 120) reason = reason.substr(0, 120) + "...";
      Fail(where, "invalid JSON: " + reason);
    }
    if (!duplicate.empty()) Fail(where, "duplicate key \"" + duplicate + "\"");
    return json;
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
      FailTensor(name, std::string(key) + ": expected non-negative integers, got " + value.dump());
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
          FailTensor(name, field.key() + ": unknown key");
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
        FailTensor(name, "dtype: unsupported " + dtype.dump() + " (expected \"F32\" or \"F64\")");
      }
      const Json& shape = value.at("shape");
      if (!shape.is_array() || shape.size() > 2)
        FailTensor(name, "shape: expected an array of at most 2 sizes, got " + shape.dump());
      std::uint64_t count = 1;
      for (const Json& size : shape) {
        const std::uint64_t n = Unsigned(size, name, "shape");
        if (n > kMaxSafetensorsElements) FailTensor(name, "shape: too large");
        entry.shape.push_back(n);
        count *= n;  // ≤ 2^54: no overflow with two sizes ≤ 2^27
      }
      const Json& offsets = value.at("data_offsets");
      if (!offsets.is_array() || offsets.size() != 2)
        FailTensor(name, "data_offsets: expected [begin, end], got " + offsets.dump());
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
        FailTensor(name, "more than " + std::to_string(kMaxSafetensorsElements) + " entries in all");
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
        FailTensor(sorted[i]->name, "data_offsets: overlaps tensor '" + sorted[i - 1]->name + "'");
    }
  }

  Json Metadata(const Json& header) const {
    if (!header.contains(kMetadataKey)) Fail(kMetadataKey, "missing key (needs \"ltsim\")");
    const Json& metadata = header.at(kMetadataKey);
    if (!metadata.is_object()) Fail(kMetadataKey, "expected an object of strings");
    for (const auto& item : metadata.items()) {
      if (!item.value().is_string())
        Fail(std::string(kMetadataKey) + "." + item.key(), "expected a string");
    }
    if (!metadata.contains("ltsim")) Fail(std::string(kMetadataKey) + ".ltsim", "missing key");
    Json config = ParseStrict(metadata.at("ltsim").get<std::string>(),
                              std::string(kMetadataKey) + ".ltsim");
    if (!config.is_object()) FailMeta("", "expected a JSON object");
    return config;
  }

  void CheckKeys(const Json& object, const std::string& where,
                 std::initializer_list<const char*> allowed,
                 std::initializer_list<const char*> required) const {
    for (const auto& item : object.items()) {
      if (std::none_of(allowed.begin(), allowed.end(),
                       [&](const char* key) { return item.key() == key; })) {
        const bool array = item.key() == "embedding" || item.key() == "positional" ||
                           item.key() == "readout";
        FailMeta(where + item.key(), array ? "arrays belong in tensors, not in the metadata"
                                           : "unknown key");
      }
    }
    for (const char* key : required) {
      if (!object.contains(key)) FailMeta(where + key, "missing key");
    }
  }

  int Int(const Json& object, const std::string& where, const char* key, long long min,
          long long max = std::numeric_limits<int>::max()) const {
    const Json& value = object.at(key);
    const bool ok = value.is_number_integer() &&
                    !(value.is_number_unsigned() && value.get<std::uint64_t>() > std::uint64_t(max)) &&
                    value.get<long long>() >= min && value.get<long long>() <= max;
    if (!ok) {
      FailMeta(where + key, "expected an integer between " + std::to_string(min) + " and " +
                                std::to_string(max) + ", got " + value.dump());
    }
    return static_cast<int>(value.get<long long>());
  }

  Transformer Configure(const Json& config) const {
    CheckKeys(config, "",
              {"format", "version", "name", "alphabet", "width", "period", "locality",
               "tie_tolerance", "layers", "meta"},
              {"format", "version", "alphabet", "width", "period", "locality", "layers"});
    if (config.at("format") != kFormatName)
      FailMeta("format", "expected \"ltsim-model\", got " + config.at("format").dump());
    if (config.at("version") != kFormatVersion || !config.at("version").is_number_integer())
      FailMeta("version", "unsupported version " + config.at("version").dump() + ", expected 1");
    Transformer model;
    if (config.contains("name")) {
      if (!config.at("name").is_string()) FailMeta("name", "expected a string");
      model.name = config.at("name").get<std::string>();
    }
    model.alphabet = Int(config, "", "alphabet", 1, kMaxAlphabet);
    model.width = Int(config, "", "width", 1);
    model.period = Int(config, "", "period", 1);
    model.locality = Int(config, "", "locality", 0);
    if (config.contains("tie_tolerance")) {
      const Json& theta = config.at("tie_tolerance");
      if (!theta.is_number() || !(theta.get<double>() >= 0) || !std::isfinite(theta.get<double>()))
        FailMeta("tie_tolerance", "expected a finite number ≥ 0, got " + theta.dump());
      model.tie_tolerance = theta.get<double>();
    }
    if (config.contains("meta")) {
      if (!config.at("meta").is_object()) FailMeta("meta", "expected an object");
      model.meta_json = config.at("meta").dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    const Json& layers = config.at("layers");
    if (!layers.is_array() || layers.empty()) FailMeta("layers", "expected a non-empty array");
    std::uint64_t heads = 0;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      model.layers.push_back(ConfigureLayer(layers[l], "layers[" + std::to_string(l) + "]."));
      heads += model.layers.back().heads.size();
      // Every head needs three tensors of the header: a count beyond them cannot be complete.
      if (heads > entries_.size()) FailMeta("layers", "more heads than the file has tensors");
    }
    return model;
  }

  Layer ConfigureLayer(const Json& value, const std::string& where) const {
    if (!value.is_object()) FailMeta(where.substr(0, where.size() - 1), "expected an object");
    CheckKeys(value, where, {"attention", "bias_scaling", "precision_bits", "heads", "mlp"},
              {"attention", "heads"});
    Layer layer;
    const Json& attention = value.at("attention");
    bool known = false;
    for (Attention mode : {Attention::kSoftmax, Attention::kHardmax, Attention::kFinite}) {
      if (attention == AttentionName(mode)) layer.attention = mode, known = true;
    }
    if (!known)
      FailMeta(where + "attention", "expected \"softmax\", \"hardmax\" or \"finite\", got " +
                                        attention.dump());
    if (value.contains("bias_scaling")) {
      const Json& scaling = value.at("bias_scaling");
      if (scaling == "none") {
        layer.bias_scaling = BiasScaling::kNone;
      } else if (scaling == "log") {
        layer.bias_scaling = BiasScaling::kLog;
      } else {
        FailMeta(where + "bias_scaling", "expected \"none\" or \"log\", got " + scaling.dump());
      }
    }
    const bool finite = layer.attention == Attention::kFinite;
    if (finite != value.contains("precision_bits")) {
      FailMeta(where + "precision_bits", finite ? "missing key (required when attention is finite)"
                                                : "only allowed when attention is finite");
    }
    if (finite) layer.precision_bits = Int(value, where, "precision_bits", 1);
    const Json& heads = value.at("heads");
    if (!heads.is_number_unsigned() && !(heads.is_number_integer() && heads.get<long long>() >= 0))
      FailMeta(where + "heads", "expected the number of heads, got " + heads.dump());
    if (heads.get<std::uint64_t>() > entries_.size())
      FailMeta(where + "heads", "more heads than the file has tensors");
    layer.heads.resize(heads.get<std::size_t>());
    if (value.contains("mlp")) {
      if (!value.at("mlp").is_boolean())
        FailMeta(where + "mlp", "expected true or false, got " + value.at("mlp").dump());
      if (value.at("mlp").get<bool>()) layer.mlp = Mlp{};
    }
    return layer;
  }

  // Takes tensor `name` (refusing it when missing), checks its shape against the expected
  // rows and columns (a negative expectation takes the file's size, which must be ≥ 1).
  const TensorEntry& Take(const std::string& name, long long rows, long long cols,
                          const std::string& rows_label, const std::string& cols_label) {
    const auto it = entries_.find(name);
    if (it == entries_.end()) FailTensor(name, "missing (the metadata needs it)");
    const TensorEntry& entry = it->second;
    taken_.insert(name);
    const bool matrix = cols != 0;
    const std::string want = matrix ? "[" + rows_label + ", " + cols_label + "]" : "[" + rows_label + "]";
    auto show = [&] {
      std::string s = "[";
      for (std::size_t i = 0; i < entry.shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(entry.shape[i]);
      return s + "]";
    };
    const std::size_t dims = matrix ? 2 : 1;
    bool ok = entry.shape.size() == dims;
    if (ok) ok = rows < 0 ? entry.shape[0] >= 1 : entry.shape[0] == std::uint64_t(rows);
    if (ok && matrix) ok = entry.shape[1] == std::uint64_t(cols);
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
          FailTensor(entry.name, "row " + std::to_string(r) + ", column " + std::to_string(c) +
                                     ": not finite");
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
      if (!std::isfinite(v(i))) FailTensor(entry.name, "entry " + std::to_string(i) + ": not finite");
    }
    return v;
  }

  void FillTensors(Transformer& model) {
    const long long s = model.alphabet, d = model.width, delta = model.period;
    const std::string dl = "width = " + std::to_string(d);
    model.embedding = ReadMatrix(Take("embedding", s, d, "alphabet = " + std::to_string(s), dl));
    model.positional =
        ReadMatrix(Take("positional", delta, d, "period = " + std::to_string(delta), dl));
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
      Layer& layer = model.layers[l];
      const std::string prefix = "layers." + std::to_string(l) + ".";
      for (std::size_t h = 0; h < layer.heads.size(); ++h) {
        const std::string head = prefix + "heads." + std::to_string(h) + ".";
        layer.heads[h].qk = ReadMatrix(Take(head + "qk", d, d, dl, dl));
        layer.heads[h].ov = ReadMatrix(Take(head + "ov", d, d, dl, dl));
        layer.heads[h].bias = ReadVector(Take(head + "bias", model.locality + 1, 0,
                                              "locality+1 = " + std::to_string(model.locality + 1), ""));
      }
      if (layer.mlp) {
        const TensorEntry& in = Take(prefix + "mlp.in", -1, d, "m ≥ 1", dl);
        const long long m = static_cast<long long>(in.shape[0]);
        const std::string ml = "m = " + std::to_string(m);
        layer.mlp->in = ReadMatrix(in);
        layer.mlp->in_bias = ReadVector(Take(prefix + "mlp.in_bias", m, 0, ml, ""));
        layer.mlp->out = ReadMatrix(Take(prefix + "mlp.out", d, m, dl, ml));
      }
    }
    const TensorEntry& weight = Take("readout.weight", -1, d, "k ≥ 1", dl);
    model.readout_weight = ReadMatrix(weight);
    model.readout_bias = ReadVector(
        Take("readout.bias", static_cast<long long>(weight.shape[0]), 0,
             "k = " + std::to_string(weight.shape[0]), ""));
    for (const auto& [name, entry] : entries_) {
      if (!taken_.count(name))
        FailTensor(name, "unknown tensor (not in the metadata's configuration, docs/python.md)");
    }
  }

  std::string path_;
  MappedFile file_;
  const unsigned char* data_ = nullptr;
  std::uint64_t data_size_ = 0;
  std::map<std::string, TensorEntry> entries_;
  std::set<std::string> taken_;
};

}  // namespace

Transformer ReadSafetensorsModel(const std::string& path) {
  return SafetensorsReader(path).Read();
}

}  // namespace ltsim
