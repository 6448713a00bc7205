// `ltsim replay FILE`: one command for both witness kinds, one exit convention (replay.h).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "help.h"
#include "ltsim/core/error.h"
#include "ltsim/core/suggest.h"
#include "ltsim/eval/precise.h"
#include "ltsim/fuzz/recorded.h"
#include "ltsim/fuzz/witness.h"
#include "ltsim/io/json.h"
#include "ltsim/search/witness_io.h"
#include "output.h"
#include "replay.h"

namespace ltsim::cli {
namespace {

constexpr const char* kFuzzFormat = "ltsim-witness";
constexpr const char* kSearchFormat = "ltsim-search-witness";

constexpr const char* kPointFormat = "ltsim-point";
constexpr const char* kRawFormat = "ltsim-raw-search-witness";
constexpr const char* kAttackFormat = "ltsim-attack-point";
constexpr const char* kTwoLayerFormat = "ltsim-two-layer-search";
// A refute.json has no format key; its result keys tell it apart.
constexpr const char* kRefuteResult = "refute";

// The witness kind: the file's "format" key, read through the strict JSON layer (bounded
// read, file:line:col syntax errors); the kind's own reader then checks everything else.
std::string FormatOf(const std::string& path) {
  const io::Json doc = io::ReadJsonFile(path, "witness file");
  const std::vector<std::string> known = {kFuzzFormat, kSearchFormat, kPointFormat,
                                          kRawFormat,  kAttackFormat, kTwoLayerFormat};
  const std::string names = std::string(kFuzzFormat) + ", " + kSearchFormat + ", " + kPointFormat +
                            ", " + kRawFormat + ", " + kAttackFormat + ", " + kTwoLayerFormat +
                            " (or a refute.json)";
  if (doc.is_object() && !doc.contains("format") && doc.contains("bound") &&
      doc.contains("refuted"))
    return kRefuteResult;
  if (!doc.is_object() || !doc.contains("format") || !doc["format"].is_string())
    throw InputError(path + ": format: missing (a witness has format " + names + ")");
  const std::string format = doc["format"].get<std::string>();
  if (std::find(known.begin(), known.end(), format) == known.end())
    throw InputError(path + ": format: '" + format.substr(0, 60) + "' is not a witness format" +
                     DidYouMean(format, known) + " (known: " + names + ")");
  return format;
}

}  // namespace

int RunFuzzReplay(const std::string& path, bool json) {
  const Witness w = ReadWitness(path);
  CaseResult result;
  const bool refuted = Reproduces(w, result);
  // Reproduced: the property is still refuted and every recorded result is the recomputed one.
  const std::vector<std::string> differences = WitnessDifferences(w, result);
  const bool again = refuted && differences.empty();
  const Outcome& o = result.outcome(w.property);
  const Recheck& r = o.recheck;
  if (json) {
    Json doc;
    doc["context"] = Context("replay", 0);
    doc["file"] = path;
    doc["format"] = kFuzzFormat;
    doc["property"] = PropertyName(w.property);
    doc["case"] = w.spec.index;
    doc["recorded_ratio"] = Number(w.recorded_ratio);
    doc["observed"] = Number(o.observed);
    doc["bound"] = Number(o.bound);
    doc["ratio"] = Number(o.ratio);
    doc["recheck"] = kRecheckClaimNames.Name(r.status);
    doc["recorded_recheck"] = w.recorded_recheck;
    doc["still_refuted"] = refuted;
    doc["differences"] = differences;
    doc["reproduced"] = again;
    PrintJson(doc);
    return again ? kReproduced : kNotReproduced;
  }
  std::cout << fmt::format(
      "{}: property {} on case {}: recorded ratio {}, now observed {} vs bound {} (ratio {}): "
      "{}\n",
      path, PropertyName(w.property), w.spec.index, Show(w.recorded_ratio), Show(o.observed),
      Show(o.bound), Show(o.ratio), refuted ? "still refuted" : "no longer refuted");
  if (r.status == RecheckStatus::kNone) {
    std::cout << "  recheck: none (the double check holds)\n";
  } else if (r.status == RecheckStatus::kSkipped) {
    std::cout << fmt::format("  recheck: skipped ({})\n", r.reason);
  } else {
    std::cout << fmt::format("  recheck in {} digits: {}, observed {} vs bound {}{}\n",
                             kPreciseDigits, kRecheckClaimNames.Name(r.status), r.observed, r.bound,
                             r.reason.empty() ? "" : " (" + r.reason + ")");
  }
  if (!w.recorded_recheck.empty())
    std::cout << fmt::format("  recorded recheck: {}\n", w.recorded_recheck);
  if (!differences.empty())
    std::cout << fmt::format("  recorded results that differ: {}\n",
                             DifferenceSummary(differences));
  std::cout << (again     ? "reproduced: the recorded refutation still stands (exit 0)\n"
                : refuted ? "NOT reproduced: the recorded results differ (exit 1)\n"
                          : "NOT reproduced: the property now holds (exit 1)\n");
  return again ? kReproduced : kNotReproduced;
}

int RunSearchReplay(const std::string& path, bool json) {
  const SearchReplay r = ReplaySearchWitness(path);
  const std::string recorded = r.recorded_recheck_status == RecheckStatus::kNone
                                   ? "none"
                                   : kRecheckValueNames.Name(r.recorded_recheck_status);
  if (json) {
    Json out;
    out["context"] = Context("search", 0);
    out["replay"] = {{"objective", kSearchObjectiveNames.Name(r.witness.objective)},
                     {"value", Number(r.value)},
                     {"stored", Number(r.stored)},
                     {"recheck", kRecheckValueNames.Name(r.recheck.status)},
                     {"recorded_recheck", recorded},
                     {"precise", r.recheck.precise_text},
                     {"differences", r.differences},
                     {"reproduced", r.reproduced}};
    out["file"] = path;
    out["format"] = kSearchFormat;
    out["reproduced"] = r.reproduced;
    PrintJson(out);
  } else {
    std::cout << fmt::format(
        "replay {}: {} = {} (stored {}); recheck {} (recorded {}), precise {}: {}\n", path,
        kSearchObjectiveNames.Name(r.witness.objective), Show(r.value), Show(r.stored),
        kRecheckValueNames.Name(r.recheck.status), recorded, r.recheck.precise_text,
        r.reproduced ? "reproduced" : "DIFFERS");
    if (!r.differences.empty())
      std::cout << fmt::format("  recorded results that differ: {}\n",
                               DifferenceSummary(r.differences));
  }
  return r.reproduced ? kReproduced : kNotReproduced;
}

int RunReplay(const std::string& path, bool json) {
  const std::string format = FormatOf(path);
  if (format == kFuzzFormat) return RunFuzzReplay(path, json);
  if (format == kSearchFormat) return RunSearchReplay(path, json);
  if (format == kPointFormat) return RunPointReplay(path, json);
  if (format == kAttackFormat) return RunAttackReplay(path, json);
  return RunRefuteReplay(path, json);  // a refute.json, a raw or a two-layer search witness
}

void AddReplayCommand(CLI::App& app, int& exit_code) {
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* replay = app.add_subcommand(
      "replay",
      "Re-run a witness (a fuzz .witness.json, a search .search.json, a tightness, sweep or "
      "experiment .point.json "
      "or a refute DIR/refute.json): exit 0 when the recorded result reproduces, 1 when it does "
      "not, 2 on bad input.");
  replay
      ->add_option("FILE", *path,
                   "a witness file written by `ltsim fuzz`, `search`, `tightness`, `sweep`, "
                   "`experiment paper` or `refute`")
      ->required();
  replay->add_flag("--json", *json, "print the replay as JSON");
  SetExamples(replay,
              {"ltsim replay corpus/witnesses/c33ba7f86c142710.witness.json",
               "ltsim replay corpus/witnesses/4d6facb0c7da087c.search.json"},
              "Exit codes: 0 = the recorded result reproduced (a fuzz refutation still refutes; "
              "a search objective and its recheck came out as recorded; a point's T* or needed "
              "n is the recorded one), 1 = it did not, 2 = "
              "bad input (missing file, malformed witness).");
  replay->callback([path, json, &exit_code] { exit_code = RunReplay(*path, *json); });
}

}  // namespace ltsim::cli
