// FirstLayerStream's state: per-type tables, the τ+1 window, far counts and the buffers reused
// at every position (private to src/eval/; first_layer.h documents the public contract).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ltsim/eval/first_layer.h"

namespace ltsim {

class SuffixPowerSeries;  // src/eval/suffix_powers.h
namespace compact {       // the compact blocks' kernels (src/eval/compact_block.h)
struct View;
struct Scratch;
}  // namespace compact

class FirstLayerStream::Impl {
 public:
  explicit Impl(const Transformer& model);
  ~Impl();
  const Vector& Push(Token token);
  void PushBlock(const Token* tokens, int n, FirstLayerBlock& block);
  void BlockAttention(const FirstLayerBlock& block, Matrix& alpha) const;
  void BlockLogits(const FirstLayerBlock& block, const Matrix& u_query, const Matrix& u_attention,
                   Matrix& logits);
  void BlockAccumulate(const FirstLayerBlock& block, const Matrix& weights, Matrix& sums);
  void BlockOutputs(const FirstLayerBlock& block, Matrix& y);
  Matrix FeatureMatrix() const;
  bool linear() const { return !layer_.mlp; }
  std::uint64_t position() const { return position_; }

 private:
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  struct HeadTables;
  void AddFarType(int type);
  int Advance(Token token);       // AdvanceState, then every head's weights into weights_
  int AdvanceState(Token token);  // updates position, window and far counts; returns q
  void RefreshRow(HeadTables& t, int q);
  void SetHeadWeights(int head, int query_type, double log_i, double* weights);
  void SuffixPowers(int n);
  bool PushCompactBlock(const Token* tokens, int n, FirstLayerBlock& block);
  compact::View View(const FirstLayerBlock& block) const;
  void CheckCurrent(const FirstLayerBlock& block) const;

  const Transformer& model_;
  const Layer& layer_;
  int types_ = 0;
  std::vector<HeadTables> heads_;
  std::vector<Vector> inputs_;  // y⁰ of each type (token s, residue r): index r·S + s
  std::vector<double> far_;     // far counts by type (exact in a double up to 2^53)
  std::vector<int> present_;    // types with a positive far count
  int window_size_ = 0;         // min(i, τ+1)
  std::vector<int> newest_;     // the last window_size_ types, newest (the query) first
  std::uint64_t position_ = 0;
  int residue_ = 0;  // position_ mod Δ
  // Buffers reused at every position (no allocation per token).
  Matrix values_;   // d × (H·D): O_h y⁰_κ in column h·D + κ
  Vector weights_;  // H·D: α of each head on each type at the current position
  Vector attended_, hidden_, output_;
  std::vector<double> suffix_logits_;
  // PushBlock's softmax tables: every head's local bias b_{h,t} at h·(τ+1) + t, their powers
  // i^(b_{h,t}) at the block's positions (or e^(b_{h,t}) without log scaling) in column
  // h·(τ+1) + t, and the largest exponent per head in the block.
  Eigen::ArrayXd suffix_bias_;
  std::unique_ptr<SuffixPowerSeries> power_series_;
  Eigen::ArrayXXd block_powers_;
  // Every head's batched softmax weights at one position (first_layer.cpp), specialised to D when
  // it is small.
  void (*softmax_kernel_)(int, int, const double* const*, int, const double*, const int*, int,
                          const double*, std::ptrdiff_t, int, double*, double*) = nullptr;
  Eigen::ArrayXXd block_totals_;               // n × H: each head's softmax total at each position
  std::vector<const double*> shifted_tables_;  // each head's `shifted` table (softmax), by rows
  std::vector<char> ready_;                    // per query type: see PushBlock
  std::vector<double> block_exponent_;
  Matrix inputs_matrix_;                       // d × D: y⁰ of each type
  Matrix block_hidden_;                        // the MLP's hidden layer for a block
  Matrix block_attention_;                     // BlockOutputs' dense α of a compact block
  std::unique_ptr<compact::Scratch> scratch_;  // the compact kernels' buffers
  std::vector<const double*> column_tables_;   // each head's `shifted` table by columns
};

}  // namespace ltsim
