// Command-line tests of bad input: exit 2, one line on stderr naming the culprit (docs/design.md
// §8).
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, MissingModelFile) {
  const std::string x = Temp("x.txt", "0 1\n");
  const std::string missing = Path("no-such-model.json").string();
  ExpectInputError({"eval", missing, x}, missing);
  ExpectInputError({"info", missing}, missing);
  ExpectInputError({"sandwich", kModelF, missing, x, "--z-length", "10"}, missing);
}

TEST_F(CliTest, MissingStringFile) {
  const std::string missing = Path("no-such-string.txt").string();
  ExpectInputError({"eval", kModelF, missing}, missing);
  ExpectInputError({"sandwich", kModelF, kModelG, missing, "--z-length", "10"}, missing);
}

TEST_F(CliTest, MalformedModelJson) {
  const std::string x = Temp("x.txt", "0 1\n");
  const std::string bad = Temp("bad.json", "{ \"format\": \"ltsim-model\", \n");
  ExpectInputError({"eval", bad, x}, bad);
  ExpectInputError({"info", bad}, bad);
  const std::string empty_object = Temp("empty.json", "{}\n");
  ExpectInputError({"info", empty_object}, empty_object);
}

TEST_F(CliTest, UnknownMethod) {
  const std::string x = Temp("x.txt", "0 1 1 2\n");
  ExpectInputError({"sandwich", kModelF, kModelG, x, "--method", "bogus", "--z-length", "10"},
                   "--method");
  ExpectInputError({"simulate", "--model", kModelF, "--method", "bogus", "--z-length", "10",
                    "--out", Path("z.txt").string(), x},
                   "--method");
}

TEST_F(CliTest, BadFlag) {
  const std::string x = Temp("x.txt", "0 1\n");
  ExpectInputError({"eval", kModelF, x, "--bogus"}, "--bogus");
  ExpectInputError({"info", kModelF, "--frobnicate"}, "--frobnicate");
}

TEST_F(CliTest, TokenOutsideTheAlphabetNamesItsPosition) {
  // The models' alphabet is {0, 1, 2}; token 7 is on line 2, column 3.
  const std::string x = Temp("x.txt", "0 1\n1 7 0\n");
  ExpectInputError({"eval", kModelF, x}, x + ":2:3");
  ExpectInputError({"sandwich", kModelF, kModelG, x, "--z-length", "10"}, x + ":2:3");
  // A run-length token: the run 5^4 starts at line 1, column 5.
  const std::string runs = Temp("runs.txt", "0^2 5^4 1\n");
  ExpectInputError({"eval", kModelF, runs}, runs + ":1:5");
  // Binary: the offset names the position.
  const std::string binary = Path("x.u8").string();
  WriteFile(binary, std::string("\x00\x01\x05", 3));
  ExpectInputError({"eval", kModelF, binary}, "offset 2");
}

TEST_F(CliTest, LengthZeroIsRefused) {
  const std::string x = Temp("x.txt", "0 1 1 2\n");
  ExpectInputError({"sandwich", kModelF, kModelG, x, "--z-length", "0"}, "--z-length");
  ExpectInputError(
      {"simulate", "--model", kModelF, "--z-length", "0", "--out", Path("z.txt").string(), x},
      "--z-length");
}

TEST_F(CliTest, UnknownCommandAndTooManyModelsAreRefused) {
  ExpectInputError({"frobnicate"}, "frobnicate");
  const std::string x = Temp("x.txt", "0 1 1 2\n");
  ExpectInputError({"simulate", "--model", kModelF, "--model", kModelG, "--model", kModelG,
                    "--z-length", "3", x, "--out", Path("z.txt").string()},
                   "--model");
}

// The library names a bad option by its field; the command line names it by the command's
// flag (commands.h: SetCommandFlags, FlagForOption), as before the library stopped naming flags.
TEST_F(CliTest, LibraryOptionErrorsNameTheCommandsFlag) {
  ExpectInputError({"sweep", "--parameter", "alphabet", "--values", "2,3", "--precision", "0"},
                   "--precision: must be in [1, 64]");
  ExpectInputError({"tightness", "--budget", "0"}, "--budget: must be at least 1");
  ExpectInputError({"tightness", "--precision", "13"}, "--precision: must be in [1, 12]");
  ExpectInputError({"tightness", "--theorem", "4.3"},
                   "--theorem: unknown theorem '4.3' (known: 4.1, 4.2, 5.2, 5.3)");
  ExpectInputError({"experiment", "paper", "--kgram-seeds", "0"}, "--kgram-seeds: must be");
  ExpectInputError({"statistic", "--sweep", "--z-lengths", "16,160", "--methods", "markov"},
                   "--z-lengths: a rate needs at least 3 lengths");
  // One key, two flags: search's n is --max-length for disagreement-length, else --z-length.
  ExpectInputError({"search", "--objective", "disagreement-length", "--max-length", "0"},
                   "--max-length: the disagreement search's longest length must be in [1, ");
  ExpectInputError({"search", "--z-length", "5000"}, "--z-length: must be in [1, |x|]");
  ExpectInputError({"search", "--restarts", "0"}, "--restarts: must be at least 1");
  const std::vector<std::string> refute = {
      "refute", "--bound",     "L", "--eps",      "0.1", "--max-lipschitz", "2", "--alphabet",
      "2",      "--period",    "1", "--locality", "0",   "--width",         "2", "--heads",
      "1",      "--mlp-width", "0"};
  std::vector<std::string> bad = refute;
  bad.insert(bad.end(), {"--max-length", "10", "--precision", "0"});
  ExpectInputError(bad, "--precision: must be in [1, 64], not 0");
  bad = refute;
  bad.insert(bad.end(), {"--max-length", "0"});
  ExpectInputError(bad, "--max-length: must be in [1, ");
}

}  // namespace
}  // namespace ltsim::cli_test
