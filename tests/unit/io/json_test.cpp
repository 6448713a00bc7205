// The strict JSON layer: positions, key paths, integer and number rules, depth and size
// limits, directories and devices.
#include "ltsim/io/json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ltsim::io {
namespace {

namespace fs = std::filesystem;

std::string ErrorOf(const auto& call) {
  try {
    call();
  } catch (const InputError& error) {
    return error.what();
  }
  return "(no error)";
}

std::string Temp(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / ("ltsim_io_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

TEST(ParseJson, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(ErrorOf([] {
              ParseJson("{\n  \"a\": 1,\n  \"b\": ]\n}", "f.json");
            }).rfind("f.json:3:8: invalid JSON", 0),
            0u)
      << ErrorOf([] { ParseJson("{\n  \"a\": 1,\n  \"b\": ]\n}", "f.json"); });
  // A line of a .jsonl file is numbered from its place in the file.
  EXPECT_EQ(ErrorOf([] { ParseJson("{\"a\": }", "c.jsonl", {}, 7); }).rfind("c.jsonl:7:", 0), 0u);
}

TEST(ParseJson, DuplicateKeysAndHugeNumbersByKeyPath) {
  EXPECT_EQ(ErrorOf([] { ParseJson(R"({"a": {"b": 1, "b": 2}})", "f"); }), "f: a.b: duplicate key");
  EXPECT_EQ(ErrorOf([] { ParseJson(R"({"a": [1, 1e400]})", "f"); }),
            "f: a: entry 1: 1e400 is not finite (too large for a double)");
  EXPECT_EQ(ErrorOf([] { ParseJson(R"({"m": [[1], [2, -1e999]]})", "f"); }),
            "f: m: row 1, column 1: -1e999 is not finite (too large for a double)");
}

TEST(ParseJson, DepthIsLimitedBeforeParsing) {
  // 100 000 levels overflowed the parser's and dump's recursion before (defect 2).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(ErrorOf([&] {
              ParseJson(deep, "deep.json");
            }).find("deep.json:1:65: JSON nested deeper than 64"),
            std::string::npos);
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(ParseJson(ok, "ok.json"));
  // Brackets inside strings do not count.
  EXPECT_NO_THROW(ParseJson("{\"a\": \"" + std::string(1000, '[') + "\\\"\"}", "s.json"));
}

TEST(ParseJson, SizeIsLimited) {
  JsonLimits limits;
  limits.max_bytes = 10;
  EXPECT_NE(
      ErrorOf([&] { ParseJson("[1, 2, 3, 4, 5]", "big", limits); }).find("larger than the limit"),
      std::string::npos);
}

TEST(ReadFile, DirectoriesDevicesAndMissingFilesFailCleanly) {
  const fs::path dir =
      fs::temp_directory_path() / ("ltsim_io_test_dir_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_EQ(ErrorOf([&] { ReadFile(dir.string(), "model file", kMaxJsonBytes); }),
            dir.string() + ": is a directory, expected a model file");
  EXPECT_EQ(ErrorOf([] { ReadFile("/nonexistent/x.json", "model file", kMaxJsonBytes); }),
            "/nonexistent/x.json: cannot open model file");
  // /dev/zero has no size and never ends: refused at its first chunk (defect 10).
  EXPECT_EQ(ErrorOf([] { ReadFile("/dev/zero", "model file", kMaxJsonBytes); }),
            "/dev/zero: not a text file (a NUL byte at offset 0), expected a model file");
  const std::string big = Temp("big.json", std::string(2000, ' ') + "{}");
  EXPECT_NE(ErrorOf([&] { ReadFile(big, "witness", 1000); }).find("larger than the limit of 1000"),
            std::string::npos);
  EXPECT_EQ(ReadFile(big, "witness", 5000).size(), 2002u);
}

TEST(JsonReader, IntegersAreIntegersInRange) {
  const Json doc =
      ParseJson(R"({"a": -1, "b": 2.5, "c": 1e30, "d": 18446744073709551615, "e": 3})", "f");
  const JsonReader r(doc, "f");
  EXPECT_EQ(ErrorOf([&] { r.At("a").UInt(); }),
            "f: a: must be an integer at least 0, got the number -1");
  EXPECT_EQ(ErrorOf([&] { r.At("b").UInt(); }), "f: b: expected an integer, got the number 2.5");
  EXPECT_EQ(ErrorOf([&] { r.At("c").Int(); }), "f: c: expected an integer, got the number 1e+30");
  EXPECT_EQ(r.At("d").UInt(), 18446744073709551615ull);
  EXPECT_EQ(ErrorOf([&] { r.At("d").Int(); }).rfind("f: d: must be an integer", 0), 0u);
  EXPECT_EQ(r.At("e").Int(1, 3), 3);
  EXPECT_EQ(ErrorOf([&] { r.At("e").Int(4, 9); }),
            "f: e: must be an integer between 4 and 9, got the number 3");
  EXPECT_EQ(ErrorOf([&] { r.At("zz"); }), "f: zz: missing key");
}

TEST(JsonReader, KeysNumbersStringsAndEnums) {
  enum class Color { kRed, kBlue };
  constexpr NameTable<Color, 2> kColors{"color", {{{Color::kRed, "red"}, {Color::kBlue, "blue"}}}};
  const Json doc =
      ParseJson(R"({"x": {"n": -1, "s": "green", "t": true, "extra": 0}, "l": [1, 2]})", "f");
  const JsonReader x = JsonReader(doc, "f").At("x");
  EXPECT_EQ(ErrorOf([&] { x.Keys({"n", "s", "t"}, {}); }), "f: x.extra: unknown key");
  EXPECT_EQ(ErrorOf([&] { x.Keys({"n", "s", "t", "extra", "u"}, {"u"}); }), "f: x.u: missing key");
  EXPECT_EQ(ErrorOf([&] { x.At("n").Positive(); }), "f: x.n: must be positive, got the number -1");
  EXPECT_EQ(ErrorOf([&] { x.At("n").Number(0, 1); }),
            "f: x.n: must be between 0.0 and 1.0, got the number -1");
  EXPECT_EQ(ErrorOf([&] { x.At("s").Enum(kColors); }),
            "f: x.s: unknown color 'green' (known: red, blue)");
  EXPECT_EQ(ErrorOf([&] { x.At("t").String(); }), "f: x.t: expected a string, got a boolean");
  EXPECT_TRUE(x.At("t").Bool());
  const JsonReader l = JsonReader(doc, "f").At("l");
  EXPECT_EQ(ErrorOf([&] { l.Array(3); }), "f: l: has 2 elements, expected at least 3");
  EXPECT_EQ(l.Array()[1].path(), "l[1]");
}

TEST(NameTable, NameAndParseAreInverse) {
  enum class Mode { kA, kB, kC };
  constexpr NameTable<Mode, 3> kModes{"mode",
                                      {{{Mode::kA, "a"}, {Mode::kB, "b"}, {Mode::kC, "c"}}}};
  for (Mode m : kModes.Values()) EXPECT_EQ(kModes.Parse(kModes.Name(m)), m);
  EXPECT_EQ(kModes.Known(), "a, b, c");
  EXPECT_EQ(ErrorOf([&] { kModes.Parse(std::string(1000, 'x')); }),
            "unknown mode '" + std::string(60, 'x') + "...' (known: a, b, c)");
}

}  // namespace
}  // namespace ltsim::io
