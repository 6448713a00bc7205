// The kernels behind FirstLayerStream's compact blocks (first_layer.h): every head's attention at
// a block of positions kept as far counts, table rows and τ+1 suffix weights, and the second
// layer's logits and weighted sums taken from that form without expanding it.
#pragma once

#include <cstddef>
#include <vector>

namespace ltsim::compact {

/// Largest D of a compact block (the kernels keep D-vectors of at most this size).
inline constexpr int kMaxTypes = 64;

/// What the kernels read of a block (n positions, D types, H heads, window W = τ+1) and of the
/// stream's tables, which do not change within a compact block.
struct View {
  int n = 0, d = 0, heads = 0, window = 0;
  const int* types = nullptr;  ///< n + W types: types[j] leaves the window at position j, and
                               ///< s_t = types[j + W − t] (q_j = types[j + W])
  const double* const* rows = nullptr;     ///< per head, E_h row-major (D × D)
  const double* const* columns = nullptr;  ///< per head, E_h column-major
  const double* far = nullptr;             ///< far counts before the block (D)
  const int* distinct = nullptr;           ///< the block's distinct query types
  int distinct_count = 0;
};

/// Reused buffers of the kernels.
struct Scratch {
  std::vector<double> values;
  std::vector<int> indices;
};

/// e_{j,h,t} = E_h[q_j, s_t]·p_{h,t}(j) into suffix (n × H·W, column h·W + t) and 1 / Z_{j,h}
/// into inverse (n × H, column h), where Z_{j,h} = Σ_κ F_j[κ]·E_h[q_j, κ] + Σ_t e_{j,h,t}.
/// `powers` is n × H·W, column h·W + t.
void Totals(const View& v, const double* powers, double* suffix, double* inverse, Scratch& scratch);

/// logits(j, g) = u_query[q_j, g] + Σ_h (Σ_κ F_j[κ]·E_h[q_j, κ]·u_(g,h)[κ] + Σ_t e_{j,h,t}·
/// u_(g,h)[s_t]) / Z_{j,h}, with u_(g,h) = rows h·D … h·D + D − 1 of u_attention's column g.
/// u_query is D × G, u_attention H·D × G and logits n × G, all column-major.
void Logits(const View& v, const double* suffix, const double* inverse, const double* u_query,
            const double* u_attention, int g_count, double* logits, Scratch& scratch);

/// sums.col(g) += Σ_j weights(j, g)·[e_{q_j} ; α_{j,1} ; … ; α_{j,H}] (sums (D + H·D) × G with
/// column stride sums_stride, weights with column stride weights_stride).
void Accumulate(const View& v, const double* suffix, const double* inverse, const double* weights,
                std::ptrdiff_t weights_stride, int g_count, double* sums,
                std::ptrdiff_t sums_stride, Scratch& scratch);

}  // namespace ltsim::compact
