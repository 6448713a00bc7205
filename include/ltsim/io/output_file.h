// Output files that are complete or absent: written to a temporary file in the same
// directory and renamed over the target, never truncated in place (docs/formats.md, Outputs).
#pragma once

#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace ltsim::io {

/// An output file being written. The target appears (atomically, by rename) only on
/// Commit; until then, and if Commit is never reached (an error, an exception), the target
/// keeps whatever it held and the temporary file is removed.
class AtomicFile {
 public:
  /// Opens a temporary file next to `path`; InputError naming `path` when it cannot, or when
  /// `path` is a directory or a symbolic link (never written through).
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }
  /// Flushes, checks every write succeeded, and renames the temporary file over `path`.
  void Commit();

 private:
  std::string path_;
  std::string temp_;
  std::ofstream out_;
  int slot_ = -1;  // in the registry RemoveTemporaryFiles empties
  bool committed_ = false;
};

/// Removes every AtomicFile's temporary file still being written (async-signal-safe: only
/// unlink(2)); for a signal handler, since a signal ends the process without destructors.
void RemoveTemporaryFiles();

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that call RemoveTemporaryFiles and then
/// end the process by the same signal (a command that handles these signals itself, to stop
/// cleanly, replaces them; its destructors then remove the files).
void RemoveTemporaryFilesOnSignals();

/// Writes `text` to `path` through an AtomicFile.
void WriteFileAtomically(const std::string& path, std::string_view text);

/// True when `a` and `b` name the same file (the same inode once both exist, else the same
/// normalised path).
bool SameFile(const std::string& a, const std::string& b);

/// InputError "OUTPUT: is also an input (INPUT); choose another output file" when `output`
/// is one of `inputs` (inputs that are not files, like generator specs, never match).
void RefuseOutputIsInput(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace ltsim::io
