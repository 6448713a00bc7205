// Fuzz harness: search witnesses (ltsim search --replay's reader). Any bytes either read as
// a witness whose pair and input fit together, or are refused with InputError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/io/json.h"
#include "ltsim/search/witness_io.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ltsim::SearchWitness w = ltsim::SearchWitnessFromText(text, "fuzz.search.json");
    LTSIM_CHECK(w.candidate.f.alphabet == w.candidate.g.alphabet);
    LTSIM_CHECK(w.candidate.input.alphabet <= w.candidate.f.alphabet);
  } catch (const ltsim::InputError&) {
  }
  return 0;
}
