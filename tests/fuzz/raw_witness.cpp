// Fuzz harness: raw search witnesses (format ltsim-raw-search-witness, docs/witnesses.md),
// which `ltsim replay` reads. Any bytes either read into a pair whose models validate and
// whose separation statistic lies in f's view, or are refused with InputError; nothing else
// may happen. Reading only: the replay itself (an exact threshold up to max_length) is not
// run here.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>

#include "ltsim/core/error.h"
#include "ltsim/io/json.h"
#include "ltsim/search/raw_threshold_search.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const ltsim::ReplayInput in =
        ltsim::RawWitnessFromJson(ltsim::io::ParseJson(text, "fuzz.raw.json"), "fuzz.raw.json");
    LTSIM_CHECK(in.eps > 0 && in.max_length >= 1);
    if (in.sup_statistic) {
      const ltsim::TypeCounts& c = *in.sup_statistic;
      LTSIM_CHECK(c.far.size() == static_cast<std::size_t>(in.f.alphabet) * in.f.period);
      const std::uint64_t far = std::accumulate(c.far.begin(), c.far.end(), std::uint64_t{0});
      for (const std::uint64_t count : c.far) LTSIM_CHECK(count <= c.length);
      LTSIM_CHECK(far + c.suffix.size() == c.length);
      LTSIM_CHECK(in.f.layers.size() == 1 && in.g.layers.size() == 1);
      LTSIM_CHECK(in.g.alphabet == in.f.alphabet && in.g.period == in.f.period &&
                  in.g.locality == in.f.locality);
      for (const auto token : c.suffix) LTSIM_CHECK(token < in.f.alphabet);
    }
  } catch (const ltsim::InputError&) {
  }
  return 0;
}
