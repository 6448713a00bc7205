// Compact blocks' kernels (compact_block.h). Each is a few passes over the block: the running
// far parts, which depend on the previous position, in one sequential pass per head keeping a
// D-vector in registers; everything else in passes over the positions that the compiler
// vectorises. They are compiled for AVX-512, AVX2 and the baseline ISA (kernel_clones.h); every
// operation is an elementwise + or · in a fixed order, so each ISA gives the same bits.
#include "eval/compact_block.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "eval/kernel_clones.h"

namespace ltsim::compact {
namespace {

template <int kD>
constexpr bool kRegisterVector = kD >= 2 && kD <= 16 && (kD & (kD - 1)) == 0;

template <int kD>
struct VectorOf {
  typedef double Type __attribute__((vector_size(kD * sizeof(double))));
};

// A running D-vector: a GCC vector (registers of whatever width the ISA has) when D is a power
// of two up to 16, else an array.
template <int kD, bool = kRegisterVector<kD>>
class Running {
 public:
  explicit Running(int) {}
  void Add(const double* p) {
    Type b;
    std::memcpy(&b, p, sizeof b);
    v_ += b;
  }
  void AddScaled(const double* p, double c) {
    Type b;
    std::memcpy(&b, p, sizeof b);
    v_ += c * b;
  }
  double operator[](int k) const { return v_[k]; }
  // dst[k] += c·v[k].
  void AddTo(double* dst, double c) const {
    Type a;
    std::memcpy(&a, dst, sizeof a);
    a += c * v_;
    std::memcpy(dst, &a, sizeof a);
  }

 private:
  using Type = typename VectorOf<kD>::Type;
  Type v_ = {};
};

template <int kD>
class Running<kD, false> {
 public:
  explicit Running(int d) : d_(kD > 0 ? kD : d) { std::fill(v_, v_ + d_, 0.0); }
  void Add(const double* p) {
    for (int k = 0; k < d_; ++k) v_[k] += p[k];
  }
  void AddScaled(const double* p, double c) {
    for (int k = 0; k < d_; ++k) v_[k] += c * p[k];
  }
  double operator[](int k) const { return v_[k]; }
  void AddTo(double* dst, double c) const {
    for (int k = 0; k < d_; ++k) dst[k] += c * v_[k];
  }

 private:
  int d_;
  double v_[kMaxTypes];
};

// call(std::integral_constant<int, kD>) with kD = d for the common small D, else 0.
template <typename Call>
[[gnu::always_inline]] inline void WithTypes(int d, Call&& call) {
  switch (d) {
    case 2:
      return call(std::integral_constant<int, 2>{});
    case 4:
      return call(std::integral_constant<int, 4>{});
    case 8:
      return call(std::integral_constant<int, 8>{});
    case 16:
      return call(std::integral_constant<int, 16>{});
    default:
      return call(std::integral_constant<int, 0>{});
  }
}

// out[j] = Σ_κ F_j[κ]·table[q_j, κ] over the block (table column-major D × D): one running
// D-vector over every query type, started from the far counts before the block and raised by
// column κ when κ leaves the window. Rows of the table for query types outside the block may
// be stale or infinite; they only reach lanes that are never read.
template <int kD>
[[gnu::always_inline]] inline void FarPart(const View& v, const double* __restrict table,
                                           double* __restrict out) {
  const int d = kD > 0 ? kD : v.d;
  const int* q = v.types + v.window;
  Running<kD> far(d);
  for (int k = 0; k < d; ++k)
    if (v.far[k] != 0.0) far.AddScaled(table + static_cast<std::ptrdiff_t>(k) * d, v.far[k]);
  for (int j = 0; j < v.n; ++j) {
    far.Add(table + static_cast<std::ptrdiff_t>(v.types[j]) * d);
    out[j] = far[q[j]];
  }
}

template <int kD>
[[gnu::always_inline]] inline void TotalsBody(const View& v, const double* __restrict powers,
                                              double* __restrict suffix, double* __restrict inverse,
                                              int* __restrict pairs) {
  const int d = kD > 0 ? kD : v.d;
  const int n = v.n, window = v.window;
  const int* types = v.types;
  const int* q = types + window;
  // pairs[t·n + j] = q_j·D + s_t, the entry of E_h that weighs s_t for query q_j.
  for (int t = 0; t < window; ++t)
    for (int j = 0; j < n; ++j) pairs[t * n + j] = q[j] * d + types[j + window - t];
  for (int h = 0; h < v.heads; ++h) {
    double* z = inverse + static_cast<std::ptrdiff_t>(h) * n;
    FarPart<kD>(v, v.columns[h], z);
    const double* table = v.rows[h];
    for (int t = 0; t < window; ++t) {
      const std::ptrdiff_t column = static_cast<std::ptrdiff_t>(h * window + t) * n;
      const int* pair = pairs + static_cast<std::ptrdiff_t>(t) * n;
      const double* power = powers + column;
      double* e = suffix + column;
      for (int j = 0; j < n; ++j) {
        e[j] = table[pair[j]] * power[j];
        z[j] += e[j];
      }
    }
    for (int j = 0; j < n; ++j) z[j] = 1.0 / z[j];
  }
}

template <int kD>
[[gnu::always_inline]] inline void LogitsBody(const View& v, const double* __restrict suffix,
                                              const double* __restrict inverse,
                                              const double* __restrict u_query,
                                              const double* __restrict u_attention, int g_count,
                                              double* __restrict logits, double* __restrict part,
                                              double* __restrict scaled,
                                              double* __restrict by_index) {
  const int d = kD > 0 ? kD : v.d;
  const int n = v.n, window = v.window, heads = v.heads;
  const int* types = v.types;
  const int* q = types + window;
  for (int g = 0; g < g_count; ++g) {
    double* out = logits + static_cast<std::ptrdiff_t>(g) * n;
    const double* uq = u_query + static_cast<std::ptrdiff_t>(g) * d;
    for (int j = 0; j < n; ++j) out[j] = uq[q[j]];
    for (int h = 0; h < heads; ++h) {
      const double* u = u_attention + (static_cast<std::ptrdiff_t>(g) * heads + h) * d;
      const double* columns = v.columns[h];
      // scaled column κ = u[κ]·E_h[·, κ]: the far part of the logit, Σ_κ F_j[κ]·E_h[q_j, κ]·u[κ].
      for (int k = 0; k < d; ++k)
        for (int r = 0; r < d; ++r) scaled[k * d + r] = u[k] * columns[k * d + r];
      FarPart<kD>(v, scaled, part);
      // u at the type of every index of `types` once, so that each t reads it contiguously.
      for (int m = 0; m < n + window; ++m) by_index[m] = u[types[m]];
      for (int t = 0; t < window; ++t) {
        const double* e = suffix + static_cast<std::ptrdiff_t>(h * window + t) * n;
        const double* s = by_index + window - t;
        for (int j = 0; j < n; ++j) part[j] += e[j] * s[j];
      }
      const double* z = inverse + static_cast<std::ptrdiff_t>(h) * n;
      for (int j = 0; j < n; ++j) out[j] += part[j] * z[j];
    }
  }
}

template <int kD>
[[gnu::always_inline]] inline void AccumulateBody(
    const View& v, const double* __restrict suffix, const double* __restrict inverse,
    const double* __restrict weights, std::ptrdiff_t weights_stride, int g_count,
    double* __restrict sums, std::ptrdiff_t sums_stride, double* __restrict scale,
    double* __restrict spread, double* __restrict grouped, double* __restrict units) {
  const int d = kD > 0 ? kD : v.d;
  const int n = v.n, window = v.window, heads = v.heads;
  const int* types = v.types;
  const int* q = types + window;
  const int pairs = heads * g_count;
  // scale(j, h·G + g) = w_(j,g) / Z_(j,h).
  for (int h = 0; h < heads; ++h)
    for (int g = 0; g < g_count; ++g) {
      double* c = scale + static_cast<std::ptrdiff_t>(h * g_count + g) * n;
      const double* w = weights + g * weights_stride;
      const double* z = inverse + static_cast<std::ptrdiff_t>(h) * n;
      for (int j = 0; j < n; ++j) c[j] = w[j] * z[j];
    }
  // Far part: grouped row (h·G + g, q) = Σ_{j: q_j = q} c_j·F_j, F_j kept in registers and
  // stepped by a row of the identity.
  std::fill(units, units + d * d, 0.0);
  for (int k = 0; k < d; ++k) units[k * d + k] = 1.0;
  std::fill(grouped, grouped + static_cast<std::ptrdiff_t>(d) * d * pairs, 0.0);
  Running<kD> far(d);
  far.Add(v.far);
  for (int j = 0; j < n; ++j) {
    far.Add(units + static_cast<std::ptrdiff_t>(types[j]) * d);
    for (int p = 0; p < pairs; ++p)
      far.AddTo(grouped + (static_cast<std::ptrdiff_t>(p) * d + q[j]) * d,
                scale[static_cast<std::ptrdiff_t>(p) * n + j]);
  }
  for (int g = 0; g < g_count; ++g) {
    double* sum = sums + g * sums_stride;
    const double* w = weights + g * weights_stride;
    for (int j = 0; j < n; ++j) sum[q[j]] += w[j];
  }
  // Suffix part: the type at index m of `types` is s_t of position j = m − W + t, so its weight
  // collects spread[m] = Σ_t c_j·e_{j,h,t} before one addition per index.
  for (int h = 0; h < heads; ++h)
    for (int g = 0; g < g_count; ++g) {
      const double* c = scale + static_cast<std::ptrdiff_t>(h * g_count + g) * n;
      std::fill(spread, spread + n + window, 0.0);
      for (int t = 0; t < window; ++t) {
        const double* e = suffix + static_cast<std::ptrdiff_t>(h * window + t) * n;
        double* to = spread + window - t;
        for (int j = 0; j < n; ++j) to[j] += c[j] * e[j];
      }
      double* attention = sums + g * sums_stride + d + static_cast<std::ptrdiff_t>(h) * d;
      for (int m = 1; m < n + window; ++m) attention[types[m]] += spread[m];
      // Σ_q E_h[q] ⊙ grouped row q, over the block's own rows only (others may be stale).
      for (int i = 0; i < v.distinct_count; ++i) {
        const int r = v.distinct[i];
        const double* row = v.rows[h] + static_cast<std::ptrdiff_t>(r) * d;
        const double* a = grouped + (static_cast<std::ptrdiff_t>(h * g_count + g) * d + r) * d;
        for (int k = 0; k < d; ++k) attention[k] += row[k] * a[k];
      }
    }
}

LTSIM_KERNEL_CLONES void TotalsKernel(const View& v, const double* powers, double* suffix,
                                      double* inverse, int* pairs) {
  WithTypes(
      v.d, [&](auto kd) __attribute__((always_inline)) {
        TotalsBody<decltype(kd)::value>(v, powers, suffix, inverse, pairs);
      });
}

LTSIM_KERNEL_CLONES void LogitsKernel(const View& v, const double* suffix, const double* inverse,
                                      const double* u_query, const double* u_attention, int g_count,
                                      double* logits, double* part, double* scaled,
                                      double* by_index) {
  WithTypes(
      v.d, [&](auto kd) __attribute__((always_inline)) {
        LogitsBody<decltype(kd)::value>(v, suffix, inverse, u_query, u_attention, g_count, logits,
                                        part, scaled, by_index);
      });
}

LTSIM_KERNEL_CLONES void AccumulateKernel(const View& v, const double* suffix,
                                          const double* inverse, const double* weights,
                                          std::ptrdiff_t weights_stride, int g_count, double* sums,
                                          std::ptrdiff_t sums_stride, double* scale, double* spread,
                                          double* grouped, double* units) {
  WithTypes(
      v.d, [&](auto kd) __attribute__((always_inline)) {
        AccumulateBody<decltype(kd)::value>(v, suffix, inverse, weights, weights_stride, g_count,
                                            sums, sums_stride, scale, spread, grouped, units);
      });
}

}  // namespace

void Totals(const View& v, const double* powers, double* suffix, double* inverse,
            Scratch& scratch) {
  scratch.indices.resize(static_cast<std::size_t>(v.window) * v.n);
  TotalsKernel(v, powers, suffix, inverse, scratch.indices.data());
}

void Logits(const View& v, const double* suffix, const double* inverse, const double* u_query,
            const double* u_attention, int g_count, double* logits, Scratch& scratch) {
  const std::size_t n = static_cast<std::size_t>(v.n);
  scratch.values.resize(n + static_cast<std::size_t>(v.d) * v.d + n + v.window);
  double* part = scratch.values.data();
  double* scaled = part + n;
  LogitsKernel(v, suffix, inverse, u_query, u_attention, g_count, logits, part, scaled,
               scaled + static_cast<std::size_t>(v.d) * v.d);
}

void Accumulate(const View& v, const double* suffix, const double* inverse, const double* weights,
                std::ptrdiff_t weights_stride, int g_count, double* sums,
                std::ptrdiff_t sums_stride, Scratch& scratch) {
  const std::size_t pairs = static_cast<std::size_t>(v.heads) * g_count;
  const std::size_t d2 = static_cast<std::size_t>(v.d) * v.d;
  const std::size_t n = static_cast<std::size_t>(v.n);
  scratch.values.resize(n * pairs + n + v.window + d2 * pairs + d2);
  double* scale = scratch.values.data();
  double* spread = scale + n * pairs;
  double* grouped = spread + n + v.window;
  double* units = grouped + d2 * pairs;
  AccumulateKernel(v, suffix, inverse, weights, weights_stride, g_count, sums, sums_stride, scale,
                   spread, grouped, units);
}

}  // namespace ltsim::compact
