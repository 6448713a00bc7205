// The DAG of first-layer nodes and the per-node table of y¹ (docs/theory.md §11.5).
#include "threshold/path_dag.h"

#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "ltsim/core/error.h"
#include "ltsim/eval/one_layer.h"
#include "ltsim/eval/type_counts.h"

namespace ltsim::threshold {
namespace {

// Far positions of residue r among 1 … far.
std::uint64_t ClassSize(std::uint64_t far, int period, int r) {
  const std::uint64_t delta = static_cast<std::uint64_t>(period);
  return far / delta + (r >= 1 && static_cast<std::uint64_t>(r) <= far % delta ? 1 : 0);
}

// C(n + k, k), saturating at cap.
std::uint64_t Multichoose(std::uint64_t n, int k, std::uint64_t cap) {
  unsigned __int128 c = 1;
  for (int i = 1; i <= k; ++i) {
    c = c * (n + i) / i;
    if (c >= cap) return cap;
  }
  return static_cast<std::uint64_t>(c);
}

std::uint64_t SaturatingMul(std::uint64_t a, std::uint64_t b, std::uint64_t cap) {
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return p >= cap ? cap : static_cast<std::uint64_t>(p);
}

bool SameMatrix(const Matrix& a, const Matrix& b) {
  return a.rows() == b.rows() && a.cols() == b.cols() && (a.array() == b.array()).all();
}
bool SameVector(const Vector& a, const Vector& b) {
  return a.size() == b.size() && (a.array() == b.array()).all();
}

}  // namespace

PathDag::PathDag(const JointView& view) : view_(view), types_(view.alphabet * view.period) {}

std::uint64_t PathDag::nodes() const {
  if (layers_.empty()) return 0;
  const Layer& last = layers_.back();
  return last.offset + static_cast<std::uint64_t>(last.vectors) * last.windows;
}

void PathDag::Extend(std::uint64_t length) {
  const int S = view_.alphabet, D = types_;
  const std::uint64_t m = static_cast<std::uint64_t>(view_.locality) + 1;
  while (layers_.size() < length) {
    const std::uint64_t j = layers_.size() + 1;
    Layer layer;
    layer.position = j;
    layer.window_length = static_cast<int>(std::min<std::uint64_t>(j, m));
    layer.windows = 1;
    for (int t = 0; t < layer.window_length; ++t) layer.windows *= static_cast<std::uint32_t>(S);
    layer.offset = nodes();
    if (j <= m) {
      // No far position yet: one count vector, all zero.
      layer.vectors = 1;
      layer.counts.assign(static_cast<std::size_t>(D), 0);
    } else {
      // Position j − τ* − 1 = p leaves the window when moving from layer j − 1 to j.
      Layer& previous = layers_.back();
      const std::uint64_t p = j - m;
      const int r = static_cast<int>(p % static_cast<std::uint64_t>(view_.period));
      std::vector<std::vector<std::uint32_t>> candidates;
      candidates.reserve(static_cast<std::size_t>(previous.vectors) * S);
      for (std::uint32_t v = 0; v < previous.vectors; ++v)
        for (int y = 0; y < S; ++y) {
          std::vector<std::uint32_t> c(
              previous.counts.begin() + static_cast<std::ptrdiff_t>(v) * D,
              previous.counts.begin() + static_cast<std::ptrdiff_t>(v + 1) * D);
          ++c[static_cast<std::size_t>(r * S + y)];
          candidates.push_back(std::move(c));
        }
      std::vector<std::vector<std::uint32_t>> sorted = candidates;
      std::sort(sorted.begin(), sorted.end());
      sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
      layer.vectors = static_cast<std::uint32_t>(sorted.size());
      layer.counts.reserve(sorted.size() * static_cast<std::size_t>(D));
      for (const auto& c : sorted) layer.counts.insert(layer.counts.end(), c.begin(), c.end());
      previous.next.resize(candidates.size());
      for (std::size_t k = 0; k < candidates.size(); ++k)
        previous.next[k] = static_cast<std::uint32_t>(
            std::lower_bound(sorted.begin(), sorted.end(), candidates[k]) - sorted.begin());
    }
    layers_.push_back(std::move(layer));
  }
}

std::uint32_t PathDag::Successor(std::uint64_t j, std::uint32_t index, int s) const {
  const Layer& a = layer(j);
  const Layer& b = layer(j + 1);
  const std::uint32_t S = static_cast<std::uint32_t>(view_.alphabet);
  const std::uint32_t v = index / a.windows, w = index % a.windows;
  if (a.next.empty()) return w * S + static_cast<std::uint32_t>(s);  // the window grows
  const std::uint32_t leaving = w / (a.windows / S);
  const std::uint32_t v2 = a.next[static_cast<std::size_t>(v) * S + leaving];
  return v2 * b.windows + (w % (a.windows / S)) * S + static_cast<std::uint32_t>(s);
}

std::vector<int> PathDag::Window(std::uint64_t j, std::uint32_t index) const {
  const Layer& a = layer(j);
  std::uint32_t w = index % a.windows;
  std::vector<int> tokens(static_cast<std::size_t>(a.window_length));
  for (int t = a.window_length - 1; t >= 0; --t) {
    tokens[static_cast<std::size_t>(t)] =
        static_cast<int>(w % static_cast<std::uint32_t>(view_.alphabet));
    w /= static_cast<std::uint32_t>(view_.alphabet);
  }
  return tokens;
}

int PathDag::LastToken(std::uint64_t j, std::uint32_t index) const {
  return static_cast<int>((index % layer(j).windows) % static_cast<std::uint32_t>(view_.alphabet));
}

std::uint32_t PathDag::NodeOf(const std::vector<Token>& prefix) const {
  LTSIM_CHECK(!prefix.empty() && prefix.size() <= length());
  std::uint32_t node = prefix[0];
  for (std::size_t k = 1; k < prefix.size(); ++k) node = Successor(k, node, prefix[k]);
  return node;
}

TypeCounts PathDag::Counts(std::uint64_t j, std::uint32_t index) const {
  const Layer& a = layer(j);
  TypeCounts c;
  c.alphabet = view_.alphabet;
  c.period = view_.period;
  c.locality = view_.locality;
  c.length = j;
  const std::uint32_t v = index / a.windows;
  c.far.assign(a.counts.begin() + static_cast<std::ptrdiff_t>(v) * types_,
               a.counts.begin() + static_cast<std::ptrdiff_t>(v + 1) * types_);
  for (int t : Window(j, index)) c.suffix.push_back(static_cast<Token>(t));
  return c;
}

std::uint64_t PathDag::CountNodes(const JointView& view, std::uint64_t length, std::uint64_t cap) {
  const std::uint64_t m = static_cast<std::uint64_t>(view.locality) + 1;
  std::uint64_t total = 0;
  for (std::uint64_t j = 1; j <= length; ++j) {
    const std::uint64_t window = std::min(j, m);
    std::uint64_t n = 1;
    for (std::uint64_t t = 0; t < window; ++t)
      n = SaturatingMul(n, static_cast<std::uint64_t>(view.alphabet), cap);
    const std::uint64_t far = j - window;
    for (int r = 0; r < view.period; ++r)
      n = SaturatingMul(n, Multichoose(ClassSize(far, view.period, r), view.alphabet - 1, cap),
                        cap);
    total = std::min(cap, total + n);
    if (total >= cap) return cap;
  }
  return total;
}

FirstLayerTable::FirstLayerTable(const Transformer& model, const PathDag& dag)
    : model_(model), dag_(dag), width_(model.width) {}

void FirstLayerTable::Extend() {
  if (filled_layers_ >= dag_.length()) return;
  const std::uint64_t begin = dag_.layer(filled_layers_ + 1).offset;
  const std::uint64_t end = dag_.nodes();
  values_.resize(end * static_cast<std::uint64_t>(width_));
  const std::uint64_t first_layer = filled_layers_ + 1;
  for (std::uint64_t j = first_layer; j <= dag_.length(); ++j) {
    const PathDag::Layer& layer = dag_.layer(j);
    const std::uint64_t n = static_cast<std::uint64_t>(layer.vectors) * layer.windows;
    oneapi::tbb::parallel_for(std::uint64_t{0}, n, [&](std::uint64_t k) {
      const TypeCounts joint = dag_.Counts(j, static_cast<std::uint32_t>(k));
      const Vector y = FirstLayerOutput(model_, Coarsen(joint, model_.period, model_.locality));
      std::copy(y.data(), y.data() + width_, values_.data() + (layer.offset + k) * width_);
    });
  }
  for (std::uint64_t k = begin * width_; k < values_.size(); k += width_) {
    double l1 = 0.0;
    for (int i = 0; i < width_; ++i) {
      max_abs_ = std::max(max_abs_, std::abs(values_[k + i]));
      l1 += std::abs(values_[k + i]);
    }
    max_l1_ = std::max(max_l1_, l1);
  }
  filled_layers_ = dag_.length();
}

bool SameFirstLayer(const Transformer& a, const Transformer& b) {
  if (a.alphabet != b.alphabet || a.width != b.width || a.period != b.period ||
      a.locality != b.locality || a.tie_tolerance != b.tie_tolerance)
    return false;
  if (!SameMatrix(a.embedding, b.embedding) || !SameMatrix(a.positional, b.positional))
    return false;
  const Layer& x = a.layers.front();
  const Layer& y = b.layers.front();
  if (x.attention != y.attention || x.bias_scaling != y.bias_scaling ||
      x.precision_bits != y.precision_bits || x.heads.size() != y.heads.size() ||
      x.mlp.has_value() != y.mlp.has_value())
    return false;
  for (std::size_t h = 0; h < x.heads.size(); ++h)
    if (!SameMatrix(x.heads[h].qk, y.heads[h].qk) || !SameMatrix(x.heads[h].ov, y.heads[h].ov) ||
        !SameVector(x.heads[h].bias, y.heads[h].bias))
      return false;
  if (x.mlp)
    return SameMatrix(x.mlp->in, y.mlp->in) && SameVector(x.mlp->in_bias, y.mlp->in_bias) &&
           SameMatrix(x.mlp->out, y.mlp->out);
  return true;
}

}  // namespace ltsim::threshold
