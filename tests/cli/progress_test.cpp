// Command-line tests of progress: every long command reports on stderr (plain lines when not a
// terminal). LTSIM_PROGRESS_EVERY=0 asks for a line at every update, so the short runs of a
// test show the lines a long run prints every 5 s.
#include "cli_test_support.h"

namespace ltsim::cli_test {
namespace {

TEST_F(CliTest, LongCommandsReportProgressWhenPiped) {
  struct Case {
    std::string label, args;
  };
  const std::string f = Quote(kModelF), g = Quote(kModelG), x = Quote(kDefaultString);
  const std::vector<Case> cases = {
      {"eval: ", "eval " + f + " " + x},
      {"sandwich: ", "sandwich " + f + " " + g + " " + x + " --z-length 2000"},
      {"statistic: ", "statistic " + x + " --z-length 2000 --lipschitz 1"},
      {"search: ", "search --restarts 3 --iterations 2 --x-length 400 --z-length 40"},
      {"sweep: ",
       "sweep --parameter period --values 1,2 --pairs 2 --strategy random "
       "--x-length 1000"},
      {"experiment: ",
       "experiment paper --omegas 1,2 --primes 2 --alphabets '' --ks '' "
       "--x-length 1000"},
      {"threshold: ", "threshold " + f + " " + g + " --eps 0.7 --max-length 200"},
      {"tightness: ", "tightness --parameters eps --points 3 --seeds 1 --no-validate"},
      {"statistic --adversarial: ", "statistic " + x +
                                        " --z-length 500 --lipschitz 2 "
                                        "--adversarial --iterations 5"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const Result r = Shell("LTSIM_PROGRESS_EVERY=0 \"$LTSIM\" " + c.args + " >/dev/null");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(c.label), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("/s"), std::string::npos) << r.err;  // a rate
    // Plain lines, never a terminal's carriage returns.
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  }
  // eval reports tokens of its pass over x.
  const Result eval = Shell("LTSIM_PROGRESS_EVERY=0 \"$LTSIM\" eval " + f + " " + x);
  EXPECT_NE(eval.err.find("1000355/1000355 tokens"), std::string::npos) << eval.err;
  EXPECT_NE(eval.err.find("pass 1"), std::string::npos) << eval.err;
}

}  // namespace
}  // namespace ltsim::cli_test
