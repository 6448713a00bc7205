// Locked output directories and output sets swapped in whole (docs/formats.md §7).
#include "ltsim/io/output_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "ltsim/core/error.h"
#include "ltsim/io/json.h"
#include "ltsim/io/output_file.h"

namespace ltsim::io {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStage = ".ltsim-stage.";
constexpr const char* kOld = ".ltsim-old.";

// A unique sibling name of `dir`: PARENT/.NAME<kind>PID.N.
fs::path Sibling(const fs::path& dir, const char* kind) {
  static std::atomic<unsigned long> counter{0};
  std::string name = ".";  // appended piecewise: g++ 12 warns (-Wrestrict) on "." + string
  name += dir.filename().string();
  name += kind + std::to_string(::getpid()) + "." + std::to_string(counter++);
  return dir.parent_path() / name;
}

// `dir` without trailing separators, refused when it names no directory entry of its own
// ("." or "/"), which a swap could not replace.
fs::path EntryPath(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.has_filename() == false && p.has_parent_path()) p = p.parent_path();
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..")
    throw InputError(dir + ": name a directory of its own for the output (not . or /)");
  return p;
}

// Whether `path` can be locked now (no run holds it): then it is nobody's.
bool Unlocked(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return free;
}

// Removes staging and old directories of `dir` that an interrupted run left (a killed run
// cannot clean up): only those no run holds locked.
void RemoveLeftovers(const fs::path& dir) {
  std::string prefix = ".";
  prefix += dir.filename().string();
  std::error_code error;
  const fs::path parent = dir.has_parent_path() ? dir.parent_path() : fs::path(".");
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const std::string rest = name.substr(prefix.size());
    if (!rest.starts_with(kStage) && !rest.starts_with(kOld)) continue;
    if (entry.is_symlink(error) || !entry.is_directory(error)) continue;
    if (Unlocked(entry.path())) fs::remove_all(entry.path(), error);
  }
}

}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(dir, error);
  if (fs::is_symlink(status))
    throw InputError(dir + ": is a symbolic link; give the directory it points to");
  if (fs::exists(status) && !fs::is_directory(status))
    throw InputError(dir + ": exists and is not a directory");
  if (!fs::exists(status)) {
    fs::create_directories(dir, error);
    if (error) throw InputError(dir + ": cannot create the directory (" + error.message() + ")");
  }
  // The path must still name the directory that was locked: an output set's swap may have
  // replaced it meanwhile, and then the lock is taken again on the new one.
  for (int attempt = 0; attempt < 16; ++attempt) {
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd_ < 0)
      throw InputError(dir + ": cannot open the directory (" + std::strerror(errno) + ")");
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int code = errno;
      if (code == EWOULDBLOCK) {
        ::close(fd_);
        fd_ = -1;
        throw InputError(dir +
                         ": another ltsim run is writing this directory (it is locked); wait "
                         "for it to finish or choose another directory");
      }
      return;  // a file system without flock: written unlocked (docs/formats.md §7)
    }
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::lstat(dir.c_str(), &named) == 0 &&
        held.st_dev == named.st_dev && held.st_ino == named.st_ino)
      return;
    ::close(fd_);
    fd_ = -1;
  }
  throw InputError(dir + ": keeps being replaced while ltsim tries to lock it");
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

OutputSet::OutputSet(std::string dir, std::string command)
    : dir_(EntryPath(dir).string()), command_(std::move(command)), lock_(dir_) {
  // Only an empty directory or a set of this command may be replaced: nothing else is ever
  // removed (checked before any work, so a refused run costs nothing).
  std::error_code error;
  bool empty = true;
  for (const auto& entry : fs::directory_iterator(dir_, error)) {
    (void)entry;
    empty = false;
    break;
  }
  if (error) throw InputError(dir_ + ": cannot read the directory (" + error.message() + ")");
  if (!empty) {
    const fs::path marker = fs::path(dir_) / kOutputSetMarker;
    std::string writer;
    std::set<std::string> files;
    if (fs::is_regular_file(fs::symlink_status(marker, error))) {
      try {
        const Json doc = ReadJsonFile(marker.string(), "output marker", {kMaxJsonBytes, 4});
        if (doc.is_object() && doc.value("format", "") == "ltsim-output" && doc.contains("files") &&
            doc.at("files").is_array()) {
          writer = doc.value("command", "");
          for (const Json& name : doc.at("files"))
            if (name.is_string()) files.insert(name.get<std::string>());
        }
      } catch (const InputError&) {
        writer.clear();
      }
    }
    if (writer.empty())
      throw InputError(dir_ + ": holds files that are not an ltsim output set (no " +
                       std::string(kOutputSetMarker) +
                       "); choose a new or empty directory (nothing in it was changed)");
    if (writer != command_)
      throw InputError(dir_ + ": holds the output of `ltsim " + writer + "`, not of `ltsim " +
                       command_ + "`; choose another directory (nothing in it was changed)");
    // Replacing the set must not remove a file someone added beside it.
    for (const auto& entry : fs::recursive_directory_iterator(dir_, error)) {
      if (entry.is_directory(error) && !entry.is_symlink(error)) continue;
      const std::string name = fs::relative(entry.path(), dir_, error).string();
      if (name != kOutputSetMarker && !files.count(name))
        throw InputError(dir_ + ": holds " + Printable(name, 60) +
                         ", which is not part of its ltsim output set; move it or choose "
                         "another directory (nothing in it was changed)");
    }
    if (error) throw InputError(dir_ + ": cannot read the directory (" + error.message() + ")");
  }
  RemoveLeftovers(dir_);
  for (int attempt = 0; staging_.empty(); ++attempt) {
    const fs::path stage = Sibling(dir_, kStage);
    if (::mkdir(stage.c_str(), 0777) == 0) {
      staging_ = stage.string();
    } else if (errno != EEXIST || attempt > 100) {
      throw InputError(dir_ + ": cannot create a staging directory beside it (" +
                       std::strerror(errno) + ")");
    }
  }
}

OutputSet::~OutputSet() {
  if (committed_) return;
  std::error_code error;
  fs::remove_all(staging_, error);
}

void OutputSet::Commit() {
  // The marker names the writer and every file of the set (in name order), so that a re-run
  // replaces exactly what this one wrote.
  std::error_code error;
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(staging_, error))
    if (!entry.is_directory(error)) files.insert(fs::relative(entry.path(), staging_).string());
  if (error) throw InputError(dir_ + ": cannot list the new output (" + error.message() + ")");
  Json marker = {
      {"format", "ltsim-output"}, {"version", 1}, {"command", command_}, {"files", Json(files)}};
  WriteFileAtomically((fs::path(staging_) / kOutputSetMarker).string(), marker.dump(1) + "\n");
  // One rename swaps the two directories: a reader resolving DIR/FILE sees either set whole.
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, dir_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;
    fs::remove_all(staging_, error);  // now the previous set
    return;
  }
  if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    throw InputError(dir_ + ": cannot put the new output in place (" + std::strerror(errno) + ")");
  // No exchange on this file system: move the previous set aside, then the new one in.
  const fs::path old = Sibling(dir_, kOld);
  if (std::rename(dir_.c_str(), old.c_str()) != 0 ||
      std::rename(staging_.c_str(), dir_.c_str()) != 0)
    throw InputError(dir_ + ": cannot put the new output in place (" + std::strerror(errno) + ")");
  committed_ = true;
  fs::remove_all(old, error);
}

}  // namespace ltsim::io
