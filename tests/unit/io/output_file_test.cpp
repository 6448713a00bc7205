// Atomic outputs: the target is complete or untouched; an output that is an input is refused.
#include "ltsim/io/output_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ltsim/core/error.h"

namespace ltsim::io {
namespace {

namespace fs = std::filesystem;

// One directory per test and process: CTest runs the tests of this file in parallel (and
// other build trees run them at the same time), so a shared name would race.
fs::path Dir() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir =
      fs::temp_directory_path() /
      ("ltsim_output_file_test_" + std::string(test->name()) + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(AtomicFile, TargetUnchangedUntilCommitAndNoTemporaryLeft) {
  const fs::path dir = Dir();
  const fs::path target = dir / "out.txt";
  std::ofstream(target) << "old";
  {
    AtomicFile file(target.string());
    file.stream() << "new";
    EXPECT_EQ(Read(target), "old");
  }  // no Commit: an error happened while writing
  EXPECT_EQ(Read(target), "old");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  WriteFileAtomically(target.string(), "new");
  EXPECT_EQ(Read(target), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(AtomicFile, DirectoryTargetAndMissingDirectoryAreInputErrors) {
  const fs::path dir = Dir();
  EXPECT_THROW(AtomicFile(dir.string()), InputError);
  EXPECT_THROW(AtomicFile((dir / "missing" / "x").string()), InputError);
}

TEST(RefuseOutputIsInput, SameFileUnderAnyNameIsRefused) {
  const fs::path dir = Dir();
  const fs::path input = dir / "x.txt";
  std::ofstream(input) << "0 1";
  fs::create_symlink(input, dir / "link.txt");
  EXPECT_THROW(RefuseOutputIsInput(input.string(), {input.string()}), InputError);
  EXPECT_THROW(RefuseOutputIsInput((dir / "." / "x.txt").string(), {input.string()}), InputError);
  EXPECT_THROW(RefuseOutputIsInput((dir / "link.txt").string(), {input.string()}), InputError);
  EXPECT_NO_THROW(RefuseOutputIsInput((dir / "y.txt").string(), {input.string(), "iid:length=3"}));
}

}  // namespace
}  // namespace ltsim::io
