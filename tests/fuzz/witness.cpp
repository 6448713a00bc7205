// Fuzz harness: fuzz witnesses (ltsim replay's reader). Any bytes either read as a witness
// whose case can be drawn up, or are refused with InputError.
#include "ltsim/fuzz/witness.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/io/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ltsim::Witness w = ltsim::WitnessFromJson(ltsim::io::ParseJson(text, "fuzz.witness.json"),
                                                    "fuzz.witness.json");
    LTSIM_CHECK(w.spec.f.alphabet == w.spec.g.alphabet);
    LTSIM_CHECK(w.spec.input.alphabet <= w.spec.f.alphabet);
    LTSIM_CHECK(w.spec.target_length >= 1);
  } catch (const ltsim::InputError&) {
  }
  return 0;
}
