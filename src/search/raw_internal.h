// Private pieces of the raw-T* search: statistics, the residual a unit reads, proposals.
#pragma once

#include <boost/random/mersenne_twister.hpp>
#include <functional>
#include <string>
#include <vector>

#include "ltsim/eval/type_counts.h"
#include "ltsim/search/raw_threshold_search.h"

namespace ltsim::raw {

using Engine = boost::random::mt19937_64;

/// Every statistic (far counts per type, suffix) of strings of length T in the view, in a fixed
/// order; `visit` returns false to stop.
void ForEachStatistic(int alphabet, int period, int locality, std::uint64_t length,
                      const std::function<bool(const TypeCounts&)>& visit);

/// A random statistic of length T: per residue class a random split of its positions among the
/// tokens (uniform cut points), a uniform suffix.
TypeCounts RandomStatistic(int alphabet, int period, int locality, std::uint64_t length,
                           Engine& engine);

/// The statistic with the far counts of `counts` scaled by k (per residue class, by largest
/// remainder, so each class keeps its exact size) and the same suffix.
TypeCounts ScaleStatistic(const TypeCounts& counts, std::uint64_t factor);

/// Local search over the statistics of one length maximising `score`: `starts` random starts,
/// `moves` moves each (k units of one residue class moved between two tokens, k a power of 2).
TypeCounts MaximiseOverStatistics(int alphabet, int period, int locality, std::uint64_t length,
                                  const std::function<double(const TypeCounts&)>& score, int starts,
                                  int moves, Engine& engine, double* best);

/// u_T: the residual stream entering the MLP at the last position (y⁰_T plus every head's
/// output), for a one-layer model.
Vector ResidualBeforeMlp(const Transformer& model, const TypeCounts& counts);

/// ‖f − g‖_∞ on a statistic of the joint view (+∞ when an output is not finite).
double StatisticGap(const Transformer& f, const Transformer& g, const TypeCounts& joint);

/// A random pair of the class: f with grid weights (so hardmax ties occur), g = f with its MLP
/// and readout perturbed; both projected. Pure in the engine's state.
std::pair<Transformer, Transformer> RandomPair(const PairClass& cls, Engine& engine);

/// The proposal kinds, in order (docs/refute.md).
const std::vector<std::string>& ProposalNames();

/// The proposals' relative frequencies, in ProposalNames' order.
const std::vector<double>& ProposalWeights();

/// What a climb remembers between proposals: the mechanism f − g is built with (0: half-space,
/// 1: tent, −1: none yet) and the targets of its direction w in the residual stream: the
/// values w should read off each key type directly and through each head (ReadMap), so that a
/// change of attention or values keeps what w means.
struct Memory {
  int mechanism = -1;
  Vector targets;
  /// The conditions composed by the `chain` proposal, innermost first: the heads, the tokens
  /// each head's maximal key set holds, and the query token s₀ (−1: none). Empty when the
  /// direction was not built by a chain.
  std::vector<int> chain_heads;
  std::vector<std::vector<char>> chain_sets;
  int chain_query = -1;
};

/// One chain of k composed conditions on k distinct heads (docs/refute.md §3, `chain`): token
/// sets A₁ ⊊ A₂ ⊊ … ⊊ A_k and a query token s₀ ∉ A₁. Head 1 attends (hardmax) to the keys of
/// A₁ and, through its slot bias, to the query, and reads s₀: its share 1/(C₁ + 1) with
/// C_j the count of A_j's tokens. Head j ≥ 2 attends to A_j's keys and reads A_{j−1}: its share
/// C_{j−1}/C_j. Each head writes its share into its own direction orthogonal to the key
/// vectors; the other heads write nothing. The targets read −1 from each share and −1 from a
/// query token other than s₀, so w·u = −Σ_j share_j (query s₀) approaches its supremum only
/// when every ratio is small at once. `extend` adds one condition to `memory`'s chain (a head
/// outside it with a superset of A_k reading A_k, or a query-tied head inside A₁) when it can;
/// otherwise (or without `extend`) a fresh chain of 2 … min(H, |Σ|) conditions is drawn (false
/// when there are fewer free directions than it needs). Writes the chain and its targets to
/// `memory` (mechanism: half-space). `conditions` > 0 draws a fresh chain of exactly that many
/// conditions (1 is a single ratio, the comparison the unit test makes). False when the class has
/// no room (fewer heads, tokens or free directions than conditions, or key vectors that are not
/// independent).
bool ComposeChain(const RawSearchOptions& options, Memory& memory, Transformer& f, Transformer& g,
                  Engine& engine, bool extend, int conditions = 0);

/// Rebuilds f − g with the remembered mechanism and direction on f's current attention (a new
/// random one when none is remembered); `hint` receives a long statistic where the gap is about
/// 1.05κε. False when it does not apply.
bool ApplyMechanism(const RawSearchOptions& options, Memory& memory, Transformer& f, Transformer& g,
                    Engine& engine, TypeCounts* hint);

/// The rows of w ↦ (w·K_κ for every key type κ = (s, r), K_κ = E_s + P_r: the skip; then
/// w·O_h·K_κ for every head h): what a direction w of the residual reads off each type.
Matrix ReadMap(const Transformer& model);

/// The one-sided mechanism on direction w (unit): f − g := c·ReLU(w·u − z₀) with c the largest
/// L₀ allows and z₀ = z_hi − 1.05κε/c, z_hi the largest w·u found at long lengths (its statistic
/// goes to `hint`). Attention, embeddings and values are f's, copied to g.
/// `thorough` searches the long statistics harder (4 starts of 160 moves a length instead of
/// 2 of 40): for directions whose supremum needs several ratios small at once (ComposeChain).
bool HalfSpace(const RawSearchOptions& options, const Vector& w, Transformer& f, Transformer& g,
               Engine& engine, TypeCounts* hint, bool thorough = false);

/// The two-sided mechanism on direction w: a tent of height ≥ 1.05κε on w·u whose left foot is
/// the least value of w·u found and whose peak is at a value some long statistic attains.
bool Tent(const RawSearchOptions& options, const Vector& w, Transformer& f, Transformer& g,
          Engine& engine, TypeCounts* hint);

/// Applies proposal `kind` to (f, g) in place; false when it does not apply. The caller
/// projects and evaluates; `hint` (may stay empty) is a statistic for the separation search.
bool Propose(int kind, const RawSearchOptions& options, Memory& memory, Transformer& f,
             Transformer& g, Engine& engine, TypeCounts* hint);

}  // namespace ltsim::raw
