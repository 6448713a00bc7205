// Fuzz harness: safetensors model files (docs/python.md). The reader memory-maps a path, so
// each input is written to a file of this process first. Any bytes either read into a model
// that validates and round-trips through the JSON format, or are refused with InputError.
#include "ltsim/model/safetensors.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"

namespace {

// In /dev/shm (memory) when the machine has it: the write per input is then no disk I/O.
const std::string& ScratchPath() {
  static const std::string path = [] {
    std::error_code error;
    const std::string dir = std::filesystem::is_directory("/dev/shm", error) ? "/dev/shm" : "/tmp";
    return dir + "/ltsim_fuzz_safetensors_" + std::to_string(::getpid()) + ".safetensors";
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(ScratchPath(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ltsim::Transformer model;
  try {
    model = ltsim::ReadSafetensorsModel(ScratchPath());
  } catch (const ltsim::InputError&) {
    return 0;
  }
  // What the reader accepts is a valid model: it writes and re-reads to the same text.
  const std::string written = ltsim::ModelToJson(model);
  LTSIM_CHECK(ltsim::ModelToJson(ltsim::ParseModel(written, "written.json")) == written);
  return 0;
}
