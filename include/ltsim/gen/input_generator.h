// Input distributions for x in fuzzing campaigns: seeded, replayable from their spec alone.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "ltsim/io/names.h"
#include "ltsim/strings/source.h"

namespace ltsim {

/// The input families of x (campaigns, searches, sweeps; docs/witnesses.md §1 lists their keys).
enum class InputKind {
  kUniform,    ///< i.i.d. uniform tokens
  kDirichlet,  ///< π ~ Dir(α) once per string, then i.i.d. from π (Theorem 4.2's prior)
  kSparse,     ///< k-sparse planted correlation: each position copies a noisy
               ///< function of k parents among earlier positions
  kMarkov,     ///< an order-1 Markov chain with a random transition matrix
  kPeriodic,   ///< a random pattern repeated, with rare substitutions
  kStress,     ///< built to stress simulators: rare maximal types, suffix ties, mixed-scale counts
  /// Lemma 5.3's families that adapt to n (docs/lemma53.md §2), streamed, never in memory:
  kRuns,      ///< runs of one token, lengths 1 + Geometric with mean `run_length`
  kLongRuns,  ///< the same generator; a sweep gives it 4 times the runs' mean
  kStride,    ///< runs of exactly `run_length` tokens cycling through the alphabet
};

/// The names of the input kinds in campaign files, witnesses and on the command line.
inline constexpr io::NameTable<InputKind, 9> kInputKindNames{"input kind",
                                                             {{{InputKind::kUniform, "uniform"},
                                                               {InputKind::kDirichlet, "dirichlet"},
                                                               {InputKind::kSparse, "sparse"},
                                                               {InputKind::kMarkov, "markov"},
                                                               {InputKind::kPeriodic, "periodic"},
                                                               {InputKind::kStress, "stress"},
                                                               {InputKind::kRuns, "runs"},
                                                               {InputKind::kLongRuns, "long-runs"},
                                                               {InputKind::kStride, "stride"}}}};

/// The fixed families (the first six kinds): their strings do not depend on a target length.
inline constexpr int kFixedInputKinds = 6;

/// Whether `kind` is one of Lemma 5.3's families that adapt to n (runs, long-runs, stride).
inline bool AdaptsToLength(InputKind kind) {
  return kind == InputKind::kRuns || kind == InputKind::kLongRuns || kind == InputKind::kStride;
}

/// "uniform", "dirichlet", "sparse", "markov", "periodic", "stress", "runs", "long-runs", "stride".
const char* InputKindName(InputKind kind);
/// Inverse of InputKindName; InputError naming the valid names.
InputKind ParseInputKind(const std::string& name);

/// Everything that determines an input string.
struct InputSpec {
  InputKind kind = InputKind::kUniform;
  std::uint64_t length = 1000;
  int alphabet = 2;
  std::uint64_t seed = 0;
  double alpha = 1.0;  ///< Dirichlet concentration (all α_s equal)
  int parents = 2;     ///< k of the sparse family
  double noise = 0.1;  ///< sparse/periodic substitution rate
  int pattern = 5;     ///< periodic pattern length
  /// runs, long-runs: the mean run length; stride: the run length (≥ 1). Written to JSON only
  /// for these kinds (docs/witnesses.md §1).
  std::uint64_t run_length = 1;
};

/// The string of a spec: the same string on every call and every pass, on any thread.
/// Generated in memory as runs (|x| up to ~10^7 is the intended range), except runs, long-runs
/// and stride, which are streamed a run at a time, and uniform beyond 2^24 tokens, streamed from
/// the i.i.d. generator (any |x| up to 10^9).
std::unique_ptr<Source> MakeInput(const InputSpec& spec);

/// Spec ↔ JSON, for witnesses (x is stored as its generator spec, not its tokens).
nlohmann::json InputSpecToJson(const InputSpec& spec);
/// Strict: unknown or missing keys are InputErrors naming the key (prefix `where`).
InputSpec InputSpecFromJson(const nlohmann::json& json, const std::string& where);

}  // namespace ltsim
