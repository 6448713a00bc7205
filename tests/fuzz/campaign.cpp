// Fuzz harness: campaign directories. The input is campaign.json, a line "\n--\n", then
// cases.jsonl; both are read as `fuzz --resume` reads them (strict options, every complete
// line a case record) and either accepted or refused with InputError.
#include "ltsim/fuzz/campaign.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ltsim/core/error.h"
#include "ltsim/io/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t split = input.find("\n--\n");
  const std::string_view options = input.substr(0, split);
  try {
    const ltsim::CampaignOptions o = ltsim::CampaignOptionsFromJson(
        ltsim::io::ParseJson(options, "campaign.json"), "campaign.json");
    LTSIM_CHECK(!o.modes.empty() && !o.pairs.empty() && !o.inputs.empty() && !o.layers.empty());
    LTSIM_CHECK(o.min_length <= o.max_length && o.min_target <= o.max_target);
  } catch (const ltsim::InputError&) {
  }
  if (split == std::string_view::npos) return 0;
  std::string_view lines = input.substr(split + 4);
  std::uint64_t number = 0;
  try {
    for (std::size_t end; (end = lines.find('\n')) != std::string_view::npos; ++number) {
      const ltsim::CaseRecord record =
          ltsim::ReadCaseLine(lines.substr(0, end), "cases.jsonl", number);
      LTSIM_CHECK(record.index == number);
      lines.remove_prefix(end + 1);
    }
  } catch (const ltsim::InputError&) {
  }
  return 0;
}
