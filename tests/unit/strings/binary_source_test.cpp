// Unit tests for .u8/.u16 files and in-memory sources: round trips, endianness, errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ltsim/core/error.h"
#include "ltsim/strings/sources.h"
#include "ltsim_test/temp_dir_test.h"

namespace ltsim {
namespace {

namespace fs = std::filesystem;

std::string ErrorOf(const auto& action) {
  try {
    action();
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

class BinaryFileTest : public test::TempDirTest {
 protected:
  BinaryFileTest() : TempDirTest("binary") {}
  std::string WriteRaw(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(Path(name), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return Path(name);
  }
  static std::vector<std::uint8_t> ReadRaw(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

std::vector<std::uint8_t> PatternBytes(std::size_t size) {
  std::vector<std::uint8_t> bytes(size);
  std::uint64_t state = 12345;
  for (auto& byte : bytes) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    byte = static_cast<std::uint8_t>(state >> 56);
  }
  return bytes;
}

TEST_F(BinaryFileTest, U8RoundTripInMegabyteChunks) {
  const auto bytes = PatternBytes(3 * (1 << 20) + 17);
  const std::string path = Path("s.u8");
  WriteBinary(*MakeByteSource(bytes, "memory"), path, 1);
  EXPECT_EQ(ReadRaw(path), bytes);

  const auto source = OpenBinaryFile(path, 1);
  EXPECT_EQ(source->length(), bytes.size());
  auto reader = source->Open();
  Chunk chunk;
  std::size_t offset = 0;
  while (reader->Next(chunk)) {
    ASSERT_EQ(chunk.kind, Chunk::Kind::kBytes);
    ASSERT_LE(chunk.size, 1u << 20);
    ASSERT_TRUE(std::equal(chunk.bytes, chunk.bytes + chunk.size, bytes.begin() + offset));
    offset += chunk.size;
  }
  EXPECT_EQ(offset, bytes.size());
}

TEST_F(BinaryFileTest, U16IsLittleEndianBothWays) {
  const std::string raw = WriteRaw("raw.u16", {0x02, 0x01, 0xb0, 0xa0, 0xff, 0xff});
  EXPECT_EQ(ReadAll(*OpenBinaryFile(raw, 2), 3), (std::vector<Token>{0x0102, 0xa0b0, 0xffff}));

  const std::string path = Path("s.u16");
  WriteBinary(*MakeTokenSource({0x0102, 0xa0b0, 7}, "memory"), path, 2);
  EXPECT_EQ(ReadRaw(path), (std::vector<std::uint8_t>{0x02, 0x01, 0xb0, 0xa0, 7, 0}));
}

TEST_F(BinaryFileTest, U16RoundTripOfRunsAndBytes) {
  const auto runs = MakeRunSource({{65534, 1500000}, {3, 1}, {0, 0}, {9, 700000}}, "runs");
  const std::string path = Path("runs.u16");
  WriteBinary(*runs, path, 2);
  const auto source = OpenSource(path);
  EXPECT_EQ(source->length(), 2200001u);
  EXPECT_EQ(ToRuns(ReadAll(*source, 1 << 22)),
            (std::vector<ltsim::Run>{{65534, 1500000}, {3, 1}, {9, 700000}}));

  const auto bytes = PatternBytes(1000);
  WriteBinary(*MakeByteSource(bytes, "memory"), path, 2);
  const auto tokens = ReadAll(*OpenBinaryFile(path, 2), 1000);
  EXPECT_TRUE(std::equal(tokens.begin(), tokens.end(), bytes.begin()));
}

TEST_F(BinaryFileTest, OpenSourceDispatchesOnExtension) {
  const std::string u8 = WriteRaw("a.u8", {1, 2, 3, 4});
  const std::string u16 = WriteRaw("a.u16", {1, 2, 3, 4});
  EXPECT_EQ(OpenSource(u8)->length(), 4u);
  EXPECT_EQ(OpenSource(u16)->length(), 2u);
  EXPECT_EQ(OpenSource(u16)->Locate(1), u16 + ": offset 2");
  EXPECT_EQ(OpenSource(u8)->Locate(3), u8 + ": offset 3");
}

TEST_F(BinaryFileTest, BadFilesAreErrors) {
  const std::string odd = WriteRaw("odd.u16", {1, 2, 3});
  EXPECT_EQ(ErrorOf([&] { OpenBinaryFile(odd, 2); }),
            odd + ": size 3 bytes is odd, but a .u16 string has 2 bytes a token");
  const std::string empty8 = WriteRaw("empty.u8", {});
  const std::string empty16 = WriteRaw("empty.u16", {});
  EXPECT_EQ(ErrorOf([&] { OpenSource(empty8); }), empty8 + ": empty string");
  EXPECT_EQ(ErrorOf([&] { OpenSource(empty16); }), empty16 + ": empty string");
  const std::string missing = Path("missing.u8");
  EXPECT_EQ(ErrorOf([&] { OpenSource(missing); }), missing + ": cannot open string file");
}

TEST_F(BinaryFileTest, CheckAlphabetGivesTheOffset) {
  auto bytes = std::vector<std::uint8_t>(3000000, 4);
  bytes[1234567] = 200;
  bytes[2000000] = 201;
  const std::string u8 = Path("bad.u8");
  WriteBinary(*MakeByteSource(bytes, "memory"), u8, 1);
  EXPECT_EQ(ErrorOf([&] { CheckAlphabet(*OpenBinaryFile(u8, 1), 10); }),
            u8 + ": offset 1234567: token 200 is outside the alphabet {0..9} of the model");
  EXPECT_NO_THROW(CheckAlphabet(*OpenBinaryFile(u8, 1), 202));

  const std::string u16 = WriteRaw("bad.u16", {1, 0, 0xff, 0xff});
  EXPECT_EQ(ErrorOf([&] { CheckAlphabet(*OpenBinaryFile(u16, 2), kMaxAlphabet); }),
            u16 + ": offset 2: token 65535 is outside the alphabet {0..65534} of the model");
}

TEST_F(BinaryFileTest, U8RefusesWideTokensAndLeavesNoFile) {
  const std::string path = Path("wide.u8");
  const auto source = MakeTokenSource({1, 2, 300}, "memory");
  EXPECT_EQ(ErrorOf([&] { WriteBinary(*source, path, 1); }),
            path +
                ": memory: token 3 is 300, which does not fit in one byte (.u8 needs tokens "
                "below 256; use .u16)");
  EXPECT_FALSE(fs::exists(path));
  const auto runs = MakeRunSource({{1, 5}, {256, 2}}, "runs");
  EXPECT_NE(ErrorOf([&] { WriteBinary(*runs, path, 1); }).find("runs: token 6"), std::string::npos);
}

TEST_F(BinaryFileTest, WriteFailureNamesThePath) {
  const std::string path = Path("no_such_dir/out.u8");
  EXPECT_EQ(ErrorOf([&] { WriteBinary(*MakeByteSource({1}, "m"), path, 1); }),
            path + ": cannot open for writing");
}

TEST_F(BinaryFileTest, ReadersAreIndependent) {
  const auto bytes = PatternBytes(2 * (1 << 20) + 5);
  const std::string path = Path("s.u8");
  WriteBinary(*MakeByteSource(bytes, "memory"), path, 1);
  const auto source = OpenBinaryFile(path, 1);
  auto first = source->Open();
  auto second = source->Open();
  Chunk a, b;
  ASSERT_TRUE(first->Next(a));
  ASSERT_TRUE(first->Next(a));
  ASSERT_TRUE(second->Next(b));
  EXPECT_EQ(a.bytes[0], bytes[1 << 20]);
  EXPECT_EQ(b.bytes[0], bytes[0]);
}

TEST(MemorySourceTest, ByteAndTokenSourcesHandOutSlices) {
  const auto bytes = PatternBytes(2 * (1 << 20) + 3);
  const auto source = MakeByteSource(bytes, "memory");
  EXPECT_EQ(source->length(), bytes.size());
  std::vector<std::size_t> sizes;
  auto reader = source->Open();
  Chunk chunk;
  while (reader->Next(chunk)) {
    EXPECT_EQ(chunk.kind, Chunk::Kind::kBytes);
    sizes.push_back(chunk.size);
  }
  EXPECT_EQ(sizes, (std::vector<std::size_t>{1 << 20, 1 << 20, 3}));
  EXPECT_EQ(source->Locate(4), "memory: token 5");

  const auto tokens = MakeTokenSource({5, 65535, 5}, "tokens");
  EXPECT_EQ(ReadAll(*tokens, 3), (std::vector<Token>{5, 65535, 5}));
}

TEST(MemorySourceTest, RunSourceSkipsEmptyRuns) {
  const auto source = MakeRunSource({{0, 0}, {2, 3}, {1, 0}, {2, 1}}, "runs");
  EXPECT_EQ(source->length(), 4u);
  auto reader = source->Open();
  Chunk chunk;
  ASSERT_TRUE(reader->Next(chunk));
  EXPECT_EQ(chunk.run, (ltsim::Run{2, 3}));
  ASSERT_TRUE(reader->Next(chunk));
  EXPECT_EQ(chunk.run, (ltsim::Run{2, 1}));
  EXPECT_FALSE(reader->Next(chunk));
}

}  // namespace
}  // namespace ltsim
