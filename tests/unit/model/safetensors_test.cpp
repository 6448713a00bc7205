// Safetensors models: a file written here reads as the same model as its JSON, and every kind
// of malformed file is one InputError naming the file and the tensor or key.
#include "ltsim/model/safetensors.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/eval/evaluate.h"
#include "ltsim/model/model_file.h"
#include "ltsim/strings/sources.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Two layers (softmax with log bias scaling and an MLP; finite), Δ = 2, τ = 1, two outputs.
constexpr char kModel[] = R"({
  "format": "ltsim-model", "version": 1, "name": "st",
  "alphabet": 3, "width": 2, "period": 2, "locality": 1, "tie_tolerance": 1e-9,
  "embedding": [[1, 0.5], [-0.25, 1], [0.125, -2]],
  "positional": [[0, 0.75], [0.3, -0.1]],
  "layers": [
    { "attention": "softmax", "bias_scaling": "log",
      "heads": [ { "qk": [[0.5, -1], [0.25, 2]], "ov": [[1, 0], [0.5, -0.5]], "bias": [0.1, 1.5] },
                 { "qk": [[-0.5, 0], [0, 0.5]], "ov": [[0, 1], [1, 0]], "bias": [0, -1] } ],
      "mlp": { "in": [[1, -1], [0.5, 0.5], [2, 0]], "in_bias": [0, -0.5, 0.1],
               "out": [[1, 0, -1], [0.5, 2, 0]] } },
    { "attention": "finite", "precision_bits": 6, "bias_scaling": "none",
      "heads": [ { "qk": [[1, 0], [0, 1]], "ov": [[0.5, 0], [0, 0.5]], "bias": [0.2, 0] } ] }
  ],
  "readout": { "weight": [[1, -1], [0.5, 0.25]], "bias": [0.1, -0.2] },
  "meta": { "trained": {"steps": 3} }
})";

// One tensor to write: name, dtype, shape and the values in row-major order.
struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::vector<double> values;
};

// A safetensors writer of the test's own (independent of any library code): tensors laid out
// back to back in the given order; `edit` may change the header before it is written.
class FileBuilder {
 public:
  explicit FileBuilder(const std::string& model_json, const std::string& dtype = "F64") {
    Json model = Json::parse(model_json);
    Json config = model;
    config.erase("embedding");
    config.erase("positional");
    config.erase("readout");
    config["layers"] = Json::array();
    Add("embedding", dtype, model["embedding"]);
    Add("positional", dtype, model["positional"]);
    for (std::size_t l = 0; l < model["layers"].size(); ++l) {
      Json layer = model["layers"][l];
      const std::string prefix = "layers." + std::to_string(l) + ".";
      for (std::size_t h = 0; h < layer["heads"].size(); ++h) {
        for (const char* key : {"qk", "ov", "bias"})
          Add(prefix + "heads." + std::to_string(h) + "." + key, dtype, layer["heads"][h][key]);
      }
      layer["heads"] = layer["heads"].size();
      if (layer.contains("mlp")) {
        for (const char* key : {"in", "in_bias", "out"})
          Add(prefix + "mlp." + key, dtype, layer["mlp"][key]);
        layer["mlp"] = true;
      }
      config["layers"].push_back(layer);
    }
    Add("readout.weight", dtype, model["readout"]["weight"]);
    Add("readout.bias", dtype, model["readout"]["bias"]);
    metadata = config;
  }

  void Add(const std::string& name, const std::string& dtype, const Json& array) {
    TensorSpec t{name, dtype, {array.size()}, {}};
    if (array.size() > 0 && array[0].is_array()) {
      t.shape.push_back(array[0].size());
      for (const Json& row : array)
        for (const Json& v : row) t.values.push_back(v.get<double>());
    } else {
      for (const Json& v : array) t.values.push_back(v.get<double>());
    }
    tensors.push_back(t);
  }

  // The header JSON and data buffer as they would be written.
  Json Header(std::string& data) const {
    Json header;
    header["__metadata__"] = {{"ltsim", metadata.dump()}};
    for (const TensorSpec& t : tensors) {
      const std::size_t begin = data.size();
      for (double v : t.values) {
        if (t.dtype == "F32") {
          const auto bits = std::bit_cast<std::uint32_t>(static_cast<float>(v));
          for (int i = 0; i < 4; ++i) data.push_back(static_cast<char>(bits >> (8 * i)));
        } else {
          const auto bits = std::bit_cast<std::uint64_t>(v);
          for (int i = 0; i < 8; ++i) data.push_back(static_cast<char>(bits >> (8 * i)));
        }
      }
      header[t.name] = {
          {"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
    }
    return header;
  }

  Json metadata;
  std::vector<TensorSpec> tensors;
};

// Writes 8-byte little-endian length, header text, data.
void WriteRaw(const fs::path& path, const std::string& header, const std::string& data,
              std::uint64_t length_field) {
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(length_field >> (8 * i)));
  out << header << data;
}

class SafetensorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("ltsim_safetensors_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const FileBuilder& b,
                    const std::function<void(Json&, std::string&)>& edit = {}) {
    std::string data;
    Json header = b.Header(data);
    if (edit) edit(header, data);
    const std::string text = header.dump();
    const std::string path = (dir_ / "model.safetensors").string();
    WriteRaw(path, text, data, text.size());
    return path;
  }

  // The InputError message of reading `path`; fails the test if it reads.
  std::string Error(const std::string& path) {
    try {
      ReadModel(path);
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_EQ(message.rfind(path, 0), 0u) << message;
      return message;
    }
    ADD_FAILURE() << "read without error";
    return "";
  }

  std::string ErrorOf(const std::function<void(Json&, std::string&)>& edit) {
    return Error(Write(FileBuilder(kModel), edit));
  }

  fs::path dir_;
};

void ExpectSameModel(const Transformer& a, const Transformer& b) {
  EXPECT_EQ(ModelToJson(a), ModelToJson(b));
}

TEST_F(SafetensorsTest, F64FileIsTheJsonModelExactly) {
  const Transformer json = ParseModel(kModel, "json");
  const Transformer st = ReadModel(Write(FileBuilder(kModel, "F64")));
  ExpectSameModel(json, st);
  EXPECT_EQ(st.meta_json, json.meta_json);
  const auto x = ParseTextString("0 1 2 2 1 0 0 2 1 1", "x");
  const Vector a = Evaluate(json, *x), b = Evaluate(st, *x);
  for (Eigen::Index i = 0; i < a.size(); ++i) EXPECT_EQ(a(i), b(i));
}

TEST_F(SafetensorsTest, F32FileRoundsEachWeightToFloat) {
  const Transformer st = ReadModel(Write(FileBuilder(kModel, "F32")));
  const Transformer json = ParseModel(kModel, "json");
  EXPECT_EQ(st.layers[0].mlp->in_bias(2), static_cast<double>(0.1f));
  EXPECT_EQ(st.readout_bias(1), static_cast<double>(-0.2f));
  EXPECT_EQ(st.embedding(2, 1), json.embedding(2, 1));  // −2 is exact in float
}

TEST_F(SafetensorsTest, MixedDtypesAndExtraStringMetadataRead) {
  FileBuilder b(kModel);
  b.tensors[0].dtype = "F32";
  const std::string path =
      Write(b, [](Json& h, std::string&) { h["__metadata__"]["format"] = "pt"; });
  EXPECT_EQ(ReadModel(path).name, "st");
}

TEST_F(SafetensorsTest, ShortFileAndBadHeaderLength) {
  const std::string path = (dir_ / "short.safetensors").string();
  std::ofstream(path, std::ios::binary) << "abc";
  EXPECT_NE(Error(path).find("header: file shorter than"), std::string::npos);
  WriteRaw(path, "{}", "", 1000);
  EXPECT_NE(Error(path).find("header length 1000 exceeds the file"), std::string::npos);
  WriteRaw(path, "{}", "", std::uint64_t(1) << 62);
  EXPECT_NE(Error(path).find("header length"), std::string::npos);
}

TEST_F(SafetensorsTest, InvalidAndDuplicateKeyJson) {
  const std::string path = (dir_ / "bad.safetensors").string();
  WriteRaw(path, "{\"a\": ", "", 6);
  EXPECT_NE(Error(path).find(": header:1:7: invalid JSON"), std::string::npos);
  WriteRaw(path, "[1, 2]", "", 6);
  EXPECT_NE(Error(path).find("header: expected a JSON object"), std::string::npos);
  const std::string dup = R"({"x": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}, "x": 1})";
  WriteRaw(path, dup, "abcd", dup.size());
  EXPECT_NE(Error(path).find("header: x: duplicate key"), std::string::npos);
}

TEST_F(SafetensorsTest, MissingFileAndDirectory) {
  EXPECT_NE(Error((dir_ / "none.safetensors").string()).find("cannot open"), std::string::npos);
  fs::create_directories(dir_ / "d.safetensors");
  EXPECT_NE(Error((dir_ / "d.safetensors").string()).find("cannot open"), std::string::npos);
}

TEST_F(SafetensorsTest, DtypeOtherThanF32OrF64) {
  const std::string e = ErrorOf([](Json& h, std::string&) { h["embedding"]["dtype"] = "BF16"; });
  EXPECT_NE(e.find("tensor 'embedding': dtype: unsupported \"BF16\""), std::string::npos) << e;
}

TEST_F(SafetensorsTest, ShapeDiffersFromMetadata) {
  // Same byte count (3·2 = 2·3), wrong shape for alphabet = 3, width = 2.
  const std::string e = ErrorOf([](Json& h, std::string&) { h["embedding"]["shape"] = {2, 3}; });
  EXPECT_NE(e.find("tensor 'embedding': shape [2, 3], expected [alphabet = 3, width = 2]"),
            std::string::npos)
      << e;
  const std::string bias = ErrorOf([](Json& h, std::string&) {
    h["layers.0.heads.1.bias"]["shape"] = {2, 1};
  });
  EXPECT_NE(bias.find("tensor 'layers.0.heads.1.bias': shape [2, 1], expected [locality+1 = 2]"),
            std::string::npos)
      << bias;
}

TEST_F(SafetensorsTest, OffsetsOutsideTheBufferOrNotMatchingTheShape) {
  const std::string outside = ErrorOf([](Json& h, std::string& data) {
    h["readout.bias"]["data_offsets"] = {data.size() - 8, data.size() + 8};
  });
  EXPECT_NE(outside.find("tensor 'readout.bias': data_offsets:"), std::string::npos) << outside;
  EXPECT_NE(outside.find("not inside the data buffer"), std::string::npos) << outside;
  const std::string reversed = ErrorOf([](Json& h, std::string&) {
    h["embedding"]["data_offsets"] = {16, 8};
  });
  EXPECT_NE(reversed.find("not inside"), std::string::npos) << reversed;
  const std::string size = ErrorOf([](Json& h, std::string&) {
    const std::uint64_t begin = h["positional"]["data_offsets"][0];
    h["positional"]["data_offsets"][1] = begin + 8;
  });
  EXPECT_NE(size.find("tensor 'positional': data_offsets: 8 bytes, but dtype and shape need 32"),
            std::string::npos)
      << size;
  const std::string negative = ErrorOf([](Json& h, std::string&) {
    h["embedding"]["shape"] = {-3, 2};
  });
  EXPECT_NE(negative.find("tensor 'embedding': shape: expected non-negative integers"),
            std::string::npos);
}

TEST_F(SafetensorsTest, OverlappingTensors) {
  const std::string e = ErrorOf([](Json& h, std::string&) {
    h["positional"]["data_offsets"] = h["embedding"]["data_offsets"];
    h["positional"]["data_offsets"][1] = std::uint64_t(h["positional"]["data_offsets"][0]) + 32;
  });
  EXPECT_NE(e.find("overlaps tensor"), std::string::npos) << e;
}

TEST_F(SafetensorsTest, TensorEntryKeys) {
  EXPECT_NE(ErrorOf([](Json& h, std::string&) {
              h["embedding"]["extra"] = 1;
            }).find("tensor 'embedding': extra: unknown key"),
            std::string::npos);
  EXPECT_NE(ErrorOf([](Json& h, std::string&) {
              h["embedding"].erase("shape");
            }).find("tensor 'embedding': shape: missing key"),
            std::string::npos);
}

TEST_F(SafetensorsTest, MissingAndUnknownTensors) {
  const std::string missing = ErrorOf([](Json& h, std::string&) { h.erase("readout.bias"); });
  EXPECT_NE(missing.find("tensor 'readout.bias': missing"), std::string::npos) << missing;
  const std::string unknown = ErrorOf([](Json& h, std::string& data) {
    h["layers.0.heads.2.qk"] = {
        {"dtype", "F64"}, {"shape", {1}}, {"data_offsets", {data.size(), data.size() + 8}}};
    data.append(8, '\0');
  });
  EXPECT_NE(unknown.find("tensor 'layers.0.heads.2.qk': unknown tensor"), std::string::npos)
      << unknown;
  // An MLP tensor for a layer whose metadata says no MLP.
  FileBuilder b(kModel);
  b.metadata["layers"][0].erase("mlp");
  EXPECT_NE(Error(Write(b)).find("tensor 'layers.0.mlp.in': unknown tensor"), std::string::npos);
}

TEST_F(SafetensorsTest, NonFiniteEntry) {
  FileBuilder b(kModel);
  b.tensors[3].values[1] = std::numeric_limits<double>::quiet_NaN();  // layers.0.heads.0.ov
  const std::string e = Error(Write(b));
  EXPECT_NE(e.find("tensor 'layers.0.heads.0.ov': row 0, column 1: not finite"), std::string::npos)
      << e;
}

TEST_F(SafetensorsTest, MetadataMissingOrIncomplete) {
  EXPECT_NE(ErrorOf([](Json& h, std::string&) {
              h.erase("__metadata__");
            }).find(": __metadata__: missing key"),
            std::string::npos);
  EXPECT_NE(ErrorOf([](Json& h, std::string&) {
              h["__metadata__"].erase("ltsim");
            }).find("__metadata__.ltsim: missing key"),
            std::string::npos);
  EXPECT_NE(ErrorOf([](Json& h, std::string&) {
              h["__metadata__"]["ltsim"] = "{\"format\": ";
            }).find("__metadata__.ltsim:1:12: invalid JSON"),
            std::string::npos);
  EXPECT_NE(ErrorOf([](Json& h, std::string&) {
              h["__metadata__"]["other"] = 3;
            }).find("__metadata__.other: expected a string"),
            std::string::npos);
  const auto meta_error = [&](const std::function<void(Json&)>& edit) {
    FileBuilder b(kModel);
    edit(b.metadata);
    return Error(Write(b));
  };
  EXPECT_NE(meta_error([](Json& m) {
              m.erase("alphabet");
            }).find("__metadata__.ltsim.alphabet: missing key"),
            std::string::npos);
  EXPECT_NE(meta_error([](Json& m) { m["format"] = "other"; }).find("__metadata__.ltsim.format"),
            std::string::npos);
  EXPECT_NE(
      meta_error([](Json& m) { m["extra"] = 1; }).find("__metadata__.ltsim.extra: unknown key"),
      std::string::npos);
  EXPECT_NE(
      meta_error([](Json& m) { m["embedding"] = Json::array(); }).find("arrays belong in tensors"),
      std::string::npos);
  EXPECT_NE(meta_error([](Json& m) {
              m["layers"][1].erase("precision_bits");
            }).find("__metadata__.ltsim.layers[1].precision_bits: missing key"),
            std::string::npos);
  EXPECT_NE(meta_error([](Json& m) {
              m["layers"][0]["attention"] = "linear";
            }).find("__metadata__.ltsim.layers[0].attention"),
            std::string::npos);
  EXPECT_NE(meta_error([](Json& m) {
              m["layers"][0]["heads"] = Json::array();
            }).find("__metadata__.ltsim.layers[0].heads: expected the number of heads"),
            std::string::npos);
  EXPECT_NE(meta_error([](Json& m) {
              m["layers"][0]["heads"] = 4000000000LL;
            }).find("more heads than the file has tensors"),
            std::string::npos);
  EXPECT_NE(meta_error([](Json& m) {
              m["layers"][0]["heads"] = 3;
            }).find("tensor 'layers.0.heads.2.qk': missing"),
            std::string::npos);
}

// One strict reader for both formats (model/model_json.h): the header and the configuration go
// through the JSON layer's limits, so nesting that a JSON model file refuses is refused here.
TEST_F(SafetensorsTest, DeepNestingInTheHeaderOrTheMetadataIsRefusedByTheJsonLayer) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  // A raw header whose dtype is nested 100,000 deep (as the attack's 200 KB file).
  const std::string path = (dir_ / "deep.safetensors").string();
  const std::string header = "{\"x\": {\"dtype\": " + deep + "}}";
  WriteRaw(path, header, "", header.size());
  EXPECT_NE(Error(path).find("nested deeper than 64"), std::string::npos);
  const std::string metadata = "{\"__metadata__\": " + deep + "}";
  WriteRaw(path, metadata, "", metadata.size());
  EXPECT_NE(Error(path).find("nested deeper than 64"), std::string::npos);
  // meta nested 100 deep inside __metadata__.ltsim, as a JSON model file refuses it.
  FileBuilder b(kModel);
  Json meta = Json::object();
  for (int k = 0; k < 100; ++k) meta = Json{{"m", meta}};
  b.metadata["meta"] = meta;
  EXPECT_NE(Error(Write(b)).find("__metadata__.ltsim:1:"), std::string::npos);
  EXPECT_NE(Error(Write(b)).find("nested deeper than 64"), std::string::npos);
}

TEST_F(SafetensorsTest, ZeroHeadsAndHugeLocalityAreRefusedAsInAJsonModel) {
  FileBuilder zero(kModel);
  zero.metadata["layers"][0]["heads"] = 0;
  EXPECT_NE(Error(Write(zero)).find("__metadata__.ltsim.layers[0].heads: must be between 1 and"),
            std::string::npos);
  FileBuilder far(kModel);
  far.metadata["locality"] = 2147483647;  // locality + 1 would overflow an int
  EXPECT_NE(Error(Write(far)).find("__metadata__.ltsim.locality: must be between 0 and 4096"),
            std::string::npos);
  FileBuilder wide(kModel);
  wide.metadata["width"] = 100000;
  EXPECT_NE(Error(Write(wide)).find("__metadata__.ltsim.width: must be between 1 and 1024"),
            std::string::npos);
}

TEST_F(SafetensorsTest, NamesAndValuesFromTheFileAreEscapedAndCut) {
  // A tensor name with a newline and a terminal escape, and a 60 KB one: one short line each.
  const std::string odd = ErrorOf([](Json& h, std::string& data) {
    h["bad\nname\x1b[31m"] = {
        {"dtype", "F64"}, {"shape", {1}}, {"data_offsets", {data.size(), data.size() + 8}}};
    data.append(8, '\0');
  });
  EXPECT_NE(odd.find("tensor 'bad\\nname\\x1b[31m': unknown tensor"), std::string::npos) << odd;
  const std::string long_name = ErrorOf([](Json& h, std::string& data) {
    h[std::string(60000, 'n')] = {
        {"dtype", "F64"}, {"shape", {1}}, {"data_offsets", {data.size(), data.size() + 8}}};
    data.append(8, '\0');
  });
  EXPECT_LT(long_name.size(), 400u) << long_name.size();
  const std::string dtype =
      ErrorOf([](Json& h, std::string&) { h["embedding"]["dtype"] = std::string(60000, 'F'); });
  EXPECT_LT(dtype.size(), 400u) << dtype.size();
}

}  // namespace
}  // namespace ltsim
