// Fuzz harness: model files. Any bytes either parse into a model that validates, writes
// and re-reads to the same text, or are refused with InputError; nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/model/constants.h"
#include "ltsim/model/model_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ltsim::Transformer model;
  try {
    model = ltsim::ParseModel(text, "fuzz.json");
  } catch (const ltsim::InputError&) {
    return 0;
  }
  const std::string written = ltsim::ModelToJson(model);
  const std::string again = ltsim::ModelToJson(ltsim::ParseModel(written, "written.json"));
  LTSIM_CHECK(written == again);
  // The constants `info` prints must not crash on anything the reader accepts (they may be
  // ∞ or NaN: "not applicable" has its own spelling in the output).
  if (model.layers.size() == 1 && model.types() <= 4096) {
    (void)ltsim::LogitMargin(model);
    (void)ltsim::LipschitzConstant(model);
  }
  return 0;
}
