// Fuzz harness: point witnesses (format ltsim-point, docs/witnesses.md). The reader takes a
// path, so each input is written to a file of this process first. Any bytes either read into
// a witness whose models validate, or are refused with InputError; nothing else may happen.
#include "ltsim/study/point_witness.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/model/model_file.h"

namespace {

const std::string& ScratchPath() {
  static const std::string path =
      "/tmp/ltsim_fuzz_point_" + std::to_string(::getpid()) + ".point.json";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(ScratchPath(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const ltsim::PointWitness w = ltsim::ReadPointWitness(ScratchPath());
    // Its models were validated: they write and re-read to the same text.
    for (const ltsim::Transformer* m : {&w.f, &w.g}) {
      const std::string written = ltsim::ModelToJson(*m);
      LTSIM_CHECK(ltsim::ModelToJson(ltsim::ParseModel(written, "written.json")) == written);
    }
  } catch (const ltsim::InputError&) {
  }
  return 0;
}
