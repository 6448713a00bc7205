// Strings and outputs: an output that is an input is refused
// with the input intact; outputs appear whole or not at all; generator specs are strict.
#include "hardening_fixture.h"

namespace ltsim::hardening {
namespace {

TEST_F(HardeningTest, GenerateOntoItsOwnInputIsRefusedAndTheInputKept) {
  // Text: exit 0 and an empty file before; .u8: exit 2 and the file deleted (defect 5).
  const std::string text = Temp("x.txt", "0 1 1 0^5\n");
  ExpectInputError({"generate", text, "--out", text}, "x.txt");
  EXPECT_EQ(ReadText(text), "0 1 1 0^5\n");
  const std::string bytes = Temp("x.u8", std::string("\x00\x01\x01", 3));
  ExpectInputError({"generate", bytes, "--out", bytes}, "x.u8");
  EXPECT_EQ(ReadText(bytes), std::string("\x00\x01\x01", 3));
  const std::string z = Temp("z.txt", "keep");
  ExpectInputError({"simulate", "--model", kModelF, z, "--length", "3", "--out", z}, "z.txt");
  EXPECT_EQ(ReadText(z), "keep");
}

TEST_F(HardeningTest, AFailedWriteLeavesTheOldOutput) {
  const std::string out = Temp("out.u8", "old");
  // Token 300 does not fit a byte: refused mid-write, and out.u8 keeps its old bytes.
  const std::string text = Temp("big.txt", "0 1 300\n");
  const Result r = Run({"generate", text, "--out", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(ReadText(out), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 4)
      << "a temporary file was left behind";
}

TEST_F(HardeningTest, HugeBinaryOutputsAreRefusedBeforeWriting) {
  // Wrote without a size check before (defect 10).
  ExpectInputError(
      {"generate", Temp("huge.txt", "0^18446744073709551615\n"), "--out", Path("huge.u8").string()},
      "huge.u8");
  EXPECT_FALSE(fs::exists(Path("huge.u8")));
}

TEST_F(HardeningTest, GeneratorSpecsAreStrict) {
  const std::string out = Path("o.txt").string();
  ExpectInputError({"generate", "iid:length=10,alphabet=2,seed=1,", "--out", out}, "iid:");
  ExpectInputError({"generate", "iid:length=10,alphabet=2,seed=-1", "--out", out}, "seed");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace ltsim::hardening
