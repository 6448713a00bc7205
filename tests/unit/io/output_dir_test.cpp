// Output directories: locked while written, result sets swapped in whole, nothing removed that
// ltsim did not write, no write through symbolic links.
#include "ltsim/io/output_dir.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "ltsim/core/error.h"
#include "ltsim/io/output_file.h"

namespace ltsim::io {
namespace {

namespace fs = std::filesystem;

fs::path Dir() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir =
      fs::temp_directory_path() /
      ("ltsim_output_dir_test_" + std::string(test->name()) + "_" + std::to_string(::getpid()));
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

std::set<std::string> Names(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    names.insert(fs::relative(entry.path(), dir).string());
  return names;
}

// Writes one set of `files` (name → text) into `out` as `command`.
void WriteSet(const fs::path& out, const std::map<std::string, std::string>& files,
              const std::string& command = "sweep") {
  OutputSet set(out.string(), command);
  for (const auto& [name, text] : files) {
    fs::create_directories((fs::path(set.staging()) / name).parent_path());
    WriteFileAtomically((fs::path(set.staging()) / name).string(), text);
  }
  set.Commit();
}

std::string ErrorOf(const std::function<void()>& run) {
  try {
    run();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

TEST(OutputSet, ARerunReplacesTheWholeSetAndLeavesNoStaleFileOrStagingDirectory) {
  const fs::path root = Dir();
  const fs::path out = root / "run";
  WriteSet(out, {{"sweep.json", "1"}, {"period/p0_m0.point.json", "old witness"}});
  WriteSet(out, {{"sweep.json", "2"}, {"period/p1_m0.point.json", "new witness"}});
  EXPECT_EQ(Names(out), (std::set<std::string>{".ltsim-output", "sweep.json", "period",
                                               "period/p1_m0.point.json"}));
  EXPECT_EQ(Read(out / "sweep.json"), "2");
  EXPECT_EQ(Names(root), (std::set<std::string>{"run", "run/.ltsim-output", "run/sweep.json",
                                                "run/period", "run/period/p1_m0.point.json"}));
}

TEST(OutputSet, UntilCommitTheDirectoryKeepsItsSetAndAnAbandonedStagingIsRemoved) {
  const fs::path root = Dir();
  const fs::path out = root / "run";
  WriteSet(out, {{"f.json", "f1"}, {"g.json", "g1"}});
  {
    OutputSet set(out.string(), "sweep");
    WriteFileAtomically((fs::path(set.staging()) / "f.json").string(), "f2");
    // A reader now, or after an error before Commit: the old pair, never f2 with g1.
    EXPECT_EQ(Read(out / "f.json"), "f1");
    EXPECT_EQ(Read(out / "g.json"), "g1");
  }
  EXPECT_EQ(Read(out / "f.json"), "f1");
  EXPECT_EQ(Names(root).size(), 4u);  // run, its marker, f.json, g.json: no staging left
}

TEST(OutputSet, AKilledRunsStagingIsCleanedByTheNextRun) {
  const fs::path root = Dir();
  const fs::path out = root / "run";
  fs::create_directories(root / ".run.ltsim-stage.999999.0");  // what a SIGKILL leaves
  WriteSet(out, {{"a", "1"}});
  EXPECT_FALSE(fs::exists(root / ".run.ltsim-stage.999999.0"));
}

TEST(OutputSet, ADirectoryHoldingOtherFilesOrAnotherCommandsSetIsRefusedUntouched) {
  const fs::path root = Dir();
  const fs::path mine = root / "mine";
  fs::create_directories(mine);
  std::ofstream(mine / "notes.txt") << "keep";
  const std::string e = ErrorOf([&] { OutputSet set(mine.string(), "sweep"); });
  EXPECT_NE(e.find("not an ltsim output set"), std::string::npos) << e;
  EXPECT_EQ(Names(mine), (std::set<std::string>{"notes.txt"}));
  const fs::path other = root / "other";
  WriteSet(other, {{"refute.json", "{}"}}, "refute");
  const std::string o = ErrorOf([&] { OutputSet set(other.string(), "sweep"); });
  EXPECT_NE(o.find("holds the output of `ltsim refute`"), std::string::npos) << o;
  EXPECT_EQ(Read(other / "refute.json"), "{}");
  EXPECT_NE(ErrorOf([&] { OutputSet set(".", "sweep"); }).find("name a directory of its own"),
            std::string::npos);
}

TEST(OutputSet, ASecondWriterOfOneDirectoryIsRefusedWhileTheFirstHoldsIt) {
  const fs::path out = Dir() / "run";
  OutputSet first(out.string(), "sweep");
  const std::string e = ErrorOf([&] { OutputSet second(out.string(), "sweep"); });
  EXPECT_NE(e.find("another ltsim run is writing this directory"), std::string::npos) << e;
  EXPECT_NE(ErrorOf([&] { DirectoryLock lock(out.string()); }).find("another ltsim run"),
            std::string::npos);
  first.Commit();
}

TEST(OutputSet, SymbolicLinksAreNeverWrittenThrough) {
  const fs::path root = Dir();
  fs::create_directories(root / "elsewhere");
  fs::create_directory_symlink(root / "elsewhere", root / "link");
  EXPECT_NE(
      ErrorOf([&] { OutputSet set((root / "link").string(), "sweep"); }).find("is a symbolic link"),
      std::string::npos);
  std::ofstream(root / "victim") << "keep";
  fs::create_symlink(root / "victim", root / "out.txt");
  EXPECT_NE(ErrorOf([&] {
              WriteFileAtomically((root / "out.txt").string(), "x");
            }).find("is a symbolic link"),
            std::string::npos);
  EXPECT_EQ(Read(root / "victim"), "keep");
  std::ofstream(root / "file") << "keep";
  EXPECT_NE(ErrorOf([&] {
              DirectoryLock lock((root / "file").string());
            }).find("exists and is not a directory"),
            std::string::npos);
}

}  // namespace
}  // namespace ltsim::io
