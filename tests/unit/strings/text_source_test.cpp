// Unit tests for text strings: parsing, runs, errors with line:column, Locate and writing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"
#include "ltsim_test/temp_dir_test.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;

std::vector<Chunk> ChunksOf(const Source& source) {
  std::vector<Chunk> chunks;
  auto reader = source.Open();
  Chunk chunk;
  while (reader->Next(chunk)) chunks.push_back(chunk);  // pointers unused after the next call
  return chunks;
}

std::string ErrorOf(const std::string& text) {
  try {
    ParseTextString(text, "x.txt");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

class TextFileTest : public test::TempDirTest {
 protected:
  TextFileTest() : TempDirTest("text") {}

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST(TextSourceTest, ParsesTokensAndSkipsComments) {
  const auto source = ParseTextString("# header 99x\n1 2  3\t4 # tail 5\n\n5#x 6\r\n65534\n", "x");
  EXPECT_EQ(source->length(), 6u);
  EXPECT_EQ(ReadAll(*source, 100), (std::vector<Token>{1, 2, 3, 4, 5, 65534}));
  EXPECT_EQ(source->name(), "x");
}

TEST(TextSourceTest, RunsBecomeRunChunksBetweenWordChunks) {
  const auto source = ParseTextString("0^1000000 1 1 0^3 7^1", "x");
  EXPECT_EQ(source->length(), 1000006u);
  const auto chunks = ChunksOf(*source);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks[0].kind, Chunk::Kind::kRun);
  EXPECT_EQ(chunks[0].run, (ltsim::Run{0, 1000000}));
  EXPECT_EQ(chunks[1].kind, Chunk::Kind::kWords);
  EXPECT_EQ(chunks[1].size, 2u);
  EXPECT_EQ(chunks[2].run, (ltsim::Run{0, 3}));
  EXPECT_EQ(chunks[3].kind, Chunk::Kind::kWords);  // a count of 1 is a plain token
  EXPECT_EQ(chunks[3].size, 1u);
}

TEST(TextSourceTest, HugeRunCountIsOneRunChunk) {
  const auto source = ParseTextString("0^10000000000", "x");
  EXPECT_EQ(source->length(), 10000000000u);
  const auto chunks = ChunksOf(*source);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].kind, Chunk::Kind::kRun);
  EXPECT_EQ(chunks[0].length(), 10000000000u);
}

TEST(TextSourceTest, PlainTokensAreBatched) {
  std::string text;
  for (int k = 0; k < 200000; ++k) text += std::to_string(k % 7) + (k % 10 == 9 ? "\n" : " ");
  const auto source = ParseTextString(text, "x");
  std::uint64_t total = 0;
  for (const Chunk& chunk : ChunksOf(*source)) {
    EXPECT_EQ(chunk.kind, Chunk::Kind::kWords);
    EXPECT_LE(chunk.size, 65536u);
    total += chunk.size;
  }
  EXPECT_EQ(total, 200000u);
  const auto tokens = ReadAll(*source, 200000);
  for (int k = 0; k < 200000; ++k) ASSERT_EQ(tokens[k], k % 7);
}

TEST(TextSourceTest, ErrorsNameLineAndColumn) {
  EXPECT_EQ(ErrorOf("1 2\n  2a"), "x.txt:2:3: malformed token '2a'");
  EXPECT_EQ(ErrorOf("70000"), "x.txt:1:1: token 70000 exceeds the largest token 65534");
  EXPECT_EQ(ErrorOf("65534 65535"), "x.txt:1:7: token 65535 exceeds the largest token 65534");
  EXPECT_EQ(ErrorOf("99999999999999999999999"),
            "x.txt:1:1: token 99999999999999999999999 exceeds the largest token 65534");
  EXPECT_EQ(ErrorOf("# c\n\t3^0"), "x.txt:2:2: run count must be at least 1");
  EXPECT_EQ(ErrorOf("1^99999999999999999999"),
            "x.txt:1:1: run count 99999999999999999999 does not fit in 64 bits");
  EXPECT_EQ(ErrorOf("0^18446744073709551615 1"), "x.txt:1:24: string too long for 64 bits");
  EXPECT_EQ(ErrorOf("^3"), "x.txt:1:1: malformed token '^3'");
  EXPECT_EQ(ErrorOf("1 3^"), "x.txt:1:3: malformed token '3^'");
  EXPECT_EQ(ErrorOf("1^2^3"), "x.txt:1:1: malformed token '1^2^3'");
  EXPECT_EQ(ErrorOf("-1"), "x.txt:1:1: malformed token '-1'");
  EXPECT_EQ(ErrorOf("1.5"), "x.txt:1:1: malformed token '1.5'");
  EXPECT_EQ(ErrorOf("1 x#comment"), "x.txt:1:3: malformed token 'x'");
  EXPECT_EQ(ErrorOf(std::string(100, '1')),
            "x.txt:1:1: malformed token '" + std::string(64, '1') + "'...");
}

TEST(TextSourceTest, EmptyStringsAreErrors) {
  EXPECT_EQ(ErrorOf(""), "x.txt: empty string");
  EXPECT_EQ(ErrorOf("  \n# only a comment 1 2\n\n"), "x.txt: empty string");
}

TEST(TextSourceTest, LocateGivesLineAndColumnOfTheToken) {
  const auto source = ParseTextString("5 6\n  7^10 8", "x.txt");
  EXPECT_EQ(source->Locate(0), "x.txt:1:1");
  EXPECT_EQ(source->Locate(1), "x.txt:1:3");
  EXPECT_EQ(source->Locate(2), "x.txt:2:3");
  EXPECT_EQ(source->Locate(11), "x.txt:2:3");
  EXPECT_EQ(source->Locate(12), "x.txt:2:8");
}

TEST(TextSourceTest, CheckAlphabetNamesThePosition) {
  const auto source = ParseTextString("0 1\n 2 0^5 7", "x.txt");
  EXPECT_NO_THROW(CheckAlphabet(*source, 8));
  try {
    CheckAlphabet(*source, 3);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "x.txt:2:8: token 7 is outside the alphabet {0..2} of the model");
  }
}

TEST(TextSourceTest, ReadAllRefusesLongStrings) {
  const auto source = ParseTextString("1^11", "x.txt");
  EXPECT_EQ(ReadAll(*source, 11).size(), 11u);
  try {
    ReadAll(*source, 10);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(),
                 "x.txt: string of length 11 is longer than the limit 10 for this operation");
  }
}

TEST(TextSourceTest, ToRunsCompresses) {
  EXPECT_EQ(ToRuns({3, 3, 1, 3, 3, 3}), (std::vector<ltsim::Run>{{3, 2}, {1, 1}, {3, 3}}));
  EXPECT_TRUE(ToRuns({}).empty());
}

TEST(TextSourceTest, ReadersAreIndependent) {
  const auto source = ParseTextString("1 2 3^4 5", "x");
  auto first = source->Open();
  auto second = source->Open();
  Chunk a, b;
  ASSERT_TRUE(first->Next(a));
  ASSERT_TRUE(first->Next(a));
  ASSERT_TRUE(second->Next(b));
  EXPECT_EQ(a.kind, Chunk::Kind::kRun);
  EXPECT_EQ(b.kind, Chunk::Kind::kWords);
  EXPECT_EQ(b.size, 2u);
}

TEST_F(TextFileTest, ReadsAFileAndNamesItInErrors) {
  const std::string path = Write("s.txt", "# a string\n4 4 4\n9^3\n");
  const auto source = OpenTextFile(path);
  EXPECT_EQ(source->length(), 6u);
  EXPECT_EQ(ReadAll(*source, 6), (std::vector<Token>{4, 4, 4, 9, 9, 9}));
  EXPECT_EQ(source->Locate(4), path + ":3:1");
  EXPECT_EQ(OpenSource(path)->length(), 6u);

  const std::string bad = Write("bad.txt", "1\n1 1 1z\n");
  try {
    OpenSource(bad);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()), bad + ":2:5: malformed token '1z'");
  }
  const std::string missing = (dir_ / "missing.txt").string();
  EXPECT_THROW(OpenTextFile(missing), InputError);
  try {
    OpenTextFile(missing);
  } catch (const InputError& error) {
    EXPECT_EQ(std::string(error.what()), missing + ": cannot open string file");
  }
}

TEST_F(TextFileTest, LargeFileStreamsAcrossReadBlocks) {
  std::string text;
  std::vector<Token> expected;
  for (int k = 0; k < 300000; ++k) {  // ~1.5 MB, several 256 KiB read blocks
    expected.push_back(static_cast<Token>(k % 1000));
    text += std::to_string(k % 1000) + ' ';
  }
  const auto source = OpenTextFile(Write("big.txt", text));
  EXPECT_EQ(ReadAll(*source, expected.size()), expected);
}

TEST_F(TextFileTest, WriteRunLengthTextRoundTrips) {
  const auto runs = MakeRunSource({{3, 2}, {3, 5}, {4, 1}, {0, 0}, {4, 10000000000}}, "runs");
  const std::string path = (dir_ / "runs.txt").string();
  WriteRunLengthText(*runs, path);
  EXPECT_EQ(Slurp(path), "# ltsim string, length 10000000008\n3^7 4^10000000001\n");
  EXPECT_EQ(OpenTextFile(path)->length(), 10000000008u);

  std::vector<Token> tokens;
  for (int k = 0; k < 40; ++k) tokens.push_back(static_cast<Token>(k % 2 ? 65534 : k));
  const auto plain = MakeTokenSource(tokens, "plain");
  WriteRunLengthText(*plain, path);
  const std::string written = Slurp(path);
  EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 4);  // header + 16 + 16 + 8
  EXPECT_EQ(ReadAll(*OpenTextFile(path), 40), tokens);
}

TEST_F(TextFileTest, WriteFailureNamesThePath) {
  const auto source = ParseTextString("1", "x");
  const std::string path = (dir_ / "no_such_dir" / "out.txt").string();
  try {
    WriteRunLengthText(*source, path);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find(path), std::string::npos);
  }
}

// Every token of every pass, as one vector.
std::vector<Token> Tokens(const Source& source) {
  std::vector<Token> out;
  auto reader = source.Open();
  Chunk chunk;
  while (reader->Next(chunk))
    for (std::uint64_t k = 0; k < chunk.length(); ++k) out.push_back(chunk.at(k));
  return out;
}

// One descriptor for every pass: a file renamed over the path after opening does not swap
// the string between passes (the earlier bug: a later pass read another file's tokens).
TEST_F(TextFileTest, AFileRenamedOverThePathDoesNotChangeTheString) {
  const std::string path = Write("x.txt", "0 1 2 1 0");
  const auto source = OpenTextFile(path);
  const std::string other = Write("y.txt", "7 7 7 7 7 7 7 7 7 7 7 7");
  fs::rename(other, path);
  EXPECT_EQ(source->length(), 5u);
  EXPECT_EQ(Tokens(*source), (std::vector<Token>{0, 1, 2, 1, 0}));
  EXPECT_EQ(source->Locate(2), path + ":1:5");
}

// A file changed in place between two passes (or during one) is an InputError, never a pass
// that mixes two contents: here a token the first pass never saw (outside every alphabet the
// first pass checked).
TEST_F(TextFileTest, AFileChangedInPlaceIsAnInputErrorOnTheNextPass) {
  std::string text;
  for (int k = 0; k < 200000; ++k) text += k % 2 ? "1 " : "0 ";  // two 256 KiB blocks
  const std::string path = Write("x.txt", text);
  const auto source = OpenTextFile(path);
  EXPECT_EQ(Tokens(*source).size(), 200000u);
  text[300000] = '9';  // same size, the second block
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(300000);
    file.put('9');
  }
  try {
    Tokens(*source);
    ADD_FAILURE() << "a changed file was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": the file changed while ltsim was reading it"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(TextFileTest, ABinaryFileChangedInPlaceIsAnInputErrorOnTheNextPass) {
  const std::string path = (dir_ / "x.u8").string();
  std::ofstream(path, std::ios::binary) << std::string(3 << 20, '\1');
  const auto source = OpenBinaryFile(path, 1);
  EXPECT_EQ(Tokens(*source).size(), 3u << 20);
  std::ofstream(path, std::ios::binary | std::ios::app) << "\1";  // appended
  EXPECT_THROW(Tokens(*source), InputError);
}

}  // namespace
}  // namespace ltsim
