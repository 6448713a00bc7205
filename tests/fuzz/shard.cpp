// Fuzz harness: shard files read by `ltsim merge` (docs/distributed.md §4.1). Any bytes either
// read as shards whose items replay in index order, each decoded under its origin, or are
// refused with InputError; never an internal check or a crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ltsim/core/bytes.h"
#include "ltsim/core/error.h"
#include "ltsim/dist/dist.h"

namespace {

const std::string& ScratchPath() {
  static const std::string path = [] {
    std::error_code error;
    const std::string dir = std::filesystem::is_directory("/dev/shm", error) ? "/dev/shm" : "/tmp";
    return dir + "/ltsim_fuzz_shard_" + std::to_string(::getpid()) + ".ltsim-shard";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(ScratchPath(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    ltsim::dist::ShardReplay replay({ScratchPath()});
    // Replays every recorded deal the way the deals were recorded (ranges from the header are
    // not known here: the first Deal that does not match is an InputError too). Each item is
    // decoded as a count and a string, as consumers decode theirs: malformed bytes must be an
    // InputError naming the item.
    const ltsim::ItemConsume consume = [](std::uint64_t, std::string&& bytes) {
      ltsim::ByteReader r(bytes);
      const auto n = r.Get<std::uint64_t>();
      for (std::uint64_t k = 0; k < n && k < 4; ++k) r.GetString();
      r.Get<bool>();
      return true;
    };
    const ltsim::ChunkCompute none = [](std::uint64_t b, std::uint64_t e) {
      return std::vector<std::string>(e - b);
    };
    for (std::uint64_t end : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{8}})
      replay.Deal(0, end, 1, none, consume);
  } catch (const ltsim::InputError&) {
    return 0;
  }
  return 0;
}
