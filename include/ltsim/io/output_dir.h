// Output directories: locked while a run writes them, and result sets that appear whole
// (docs/formats.md §7).
#pragma once

#include <string>

namespace ltsim::io {

/// An exclusive lock on a directory for the object's lifetime (flock(2) on the directory
/// itself), so that two runs never write one directory at once. The directory is created when
/// missing (with its parents); a symbolic link or a path that is not a directory is refused.
/// InputError "DIR: another ltsim run is writing this directory" when the lock is held.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

/// A set of output files that readers see whole: every file is written into a staging
/// directory beside DIR (`.NAME.ltsim-stage.PID.N`), and Commit swaps it with DIR in one
/// rename (renameat2 RENAME_EXCHANGE; where the file system lacks it, two renames, between
/// which DIR is briefly absent, never mixed), then removes the previous set. Until Commit, and
/// when it is never reached (an error, a signal), DIR keeps the set it held.
///
/// DIR is locked for the object's lifetime (DirectoryLock) and must be absent, empty, or a set
/// that the same command wrote (its marker file `.ltsim-output` names the command and lists
/// the set's files) holding nothing else: a directory holding anything else is refused before
/// any work, so nothing ltsim did not write is ever removed, and a re-run replaces the whole
/// previous set (no stale witness survives).
class OutputSet {
 public:
  /// Locks and checks DIR and creates the staging directory; InputError naming DIR otherwise.
  /// `command` names the writer ("sweep", "construct family").
  OutputSet(std::string dir, std::string command);
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  /// Where to write the set's files (a directory that exists until Commit).
  const std::string& staging() const { return staging_; }
  /// The directory the set appears in.
  const std::string& dir() const { return dir_; }
  /// Writes the marker and swaps the staging directory in; InputError when it cannot.
  void Commit();

 private:
  std::string dir_, command_, staging_;
  DirectoryLock lock_;
  bool committed_ = false;
};

/// The marker file of an output set, inside its directory.
inline constexpr char kOutputSetMarker[] = ".ltsim-output";

}  // namespace ltsim::io
