#ifndef EMBER_MODELS_GPT2_BLOCK_H_
#define EMBER_MODELS_GPT2_BLOCK_H_

// GPT-2's own layers, built from nn's generic ones: the MLP, causal self-attention with
// its key/value cache, the pre-LayerNorm block, and GPT-2's initialisation. Parameter
// names are nanoGPT's (and so Hugging Face's and llm.c's): ln_1, attn.c_attn, ...
//
// Network specs (nn/network_json.h) name them as Hugging Face's classes: GPT2Block (n_embd,
// n_head, dropout = 0, attn_dropout = 0), GPT2Attention (the same) and GPT2MLP (n_embd,
// n_inner = 4 n_embd, dropout = 0); "init": "gpt2" is SetGpt2Specs (L: the spec's
// attention layers). Linking this library registers them.

#include <cstdint>
#include <memory>
#include <string>

#include "distributed/process_group.h"
#include "distributed/sharding.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::models::gpt2 {

// GPT-2's feed-forward block: c_proj(gelu_tanh(c_fc(x))), then dropout.
//
// Tensor parallel (SetTensorParallel, Megatron's split): each rank of the group holds
// its share of the hidden units, c_fc's rows ("mlp") and c_proj's columns, and the
// partial products of c_proj are summed over the group before its bias
// (distributed/tensor_parallel.h).
class Mlp : public nn::Module {
 public:
  Mlp(int64_t dim, int64_t hidden, double dropout = 0, Generator& gen = DefaultGenerator());
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;
  // The group this layer's shares are spread over (null: whole on this rank). The
  // parameters must be this rank's shares (distributed::ParamSharding).
  void SetTensorParallel(distributed::ProcessGroup* group) { tp_ = group; }

 private:
  std::shared_ptr<nn::Linear> c_fc_, c_proj_;
  std::shared_ptr<nn::Dropout> dropout_;
  distributed::ProcessGroup* tp_ = nullptr;
};

// What causal self-attention keeps of the positions one sequence has seen, so that each
// new token costs one position when generating: keys and values [1, heads, capacity,
// C / heads] (allocated on first use), the first `length` positions filled. It holds
// values, not a graph: no gradient flows through what it keeps.
struct AttentionCache {
  explicit AttentionCache(int64_t capacity) : capacity(capacity) {}
  int64_t capacity;
  int64_t length = 0;
  Tensor k, v;
};

// The caches of a batch being generated, one a row of the batch: each sequence at its
// own length, so that sequences at different positions run in one forward pass (a
// server's continuous batching). Empty: no cache (training, the whole sequence).
using AttentionCaches = std::vector<AttentionCache*>;

// Causal multi-head self-attention on x [B, T, C]: one fused projection c_attn to q, k, v
// [B, heads, T, C / heads], causal attention, heads merged, the output projection c_proj,
// then dropout (on the residual branch, as nanoGPT's resid_dropout).
//
// Tensor parallel, each rank of the group computes its share of the heads: c_attn's
// rows of q, k and v for them ("qkv", 3 parts), c_proj's columns ("heads"), and c_proj's
// partial products are summed over the group before its bias.
//
// attn_dropout drops out the attention weights inside the fused kernel while training
// (SciCore's and nanoGPT's attn_dropout), from gen's stream. Tensor parallel, each rank
// draws its heads' masks from its own part of the stream (independent of the other
// ranks', not the masks one process would draw).
class CausalSelfAttention : public nn::Module {
 public:
  CausalSelfAttention(int64_t dim, int64_t heads, double dropout = 0,
                      Generator& gen = DefaultGenerator(), double attn_dropout = 0);
  Tensor Forward(const Tensor& x) override;
  // Row b of x holds the T positions after caches[b]'s: their keys and values join that
  // cache and their queries attend to every position of that sequence so far. The
  // products run over the whole batch; attention, a row at a time.
  Tensor Forward(const Tensor& x, const AttentionCaches& caches);
  std::string ToString() const override;
  void SetTensorParallel(distributed::ProcessGroup* group) { tp_ = group; }  // as Mlp's
  // The attention weights softmax(q k^T / sqrt(d), causal) of x [B, T, C]: [B, heads, T,
  // T], rows summing to 1, zero above the diagonal (values, no graph; for pictures).
  Tensor Weights(const Tensor& x);

 private:
  int64_t dim_, heads_;
  double attn_dropout_;
  Generator& gen_;
  std::shared_ptr<nn::Linear> c_attn_, c_proj_;
  std::shared_ptr<nn::Dropout> dropout_;
  distributed::ProcessGroup* tp_ = nullptr;
};

// GPT-2's pre-LayerNorm transformer block:
//   x = x + attn(ln_1(x));  x = x + mlp(ln_2(x)).
class Block : public nn::Module {
 public:
  Block(int64_t dim, int64_t heads, double dropout = 0, Generator& gen = DefaultGenerator(),
        double attn_dropout = 0);
  Tensor Forward(const Tensor& x) override;
  Tensor Forward(const Tensor& x, const AttentionCaches& caches);  // see CausalSelfAttention
  std::string ToString() const override;
  // Its attention's weights on x (CausalSelfAttention::Weights of ln_1(x)).
  Tensor AttentionWeights(const Tensor& x);
  // Its attention and MLP split over `group` (null: whole), as theirs.
  void SetTensorParallel(distributed::ProcessGroup* group);

 private:
  // In PyTorch's registration order (the order of NamedParameters).
  std::shared_ptr<nn::LayerNorm> ln_1_;
  std::shared_ptr<CausalSelfAttention> attn_;
  std::shared_ptr<nn::LayerNorm> ln_2_;
  std::shared_ptr<Mlp> mlp_;
};

// GPT-2's parameter specs, set on a model (or a block) whose layers declared theirs:
// the initialisation, every matrix N(0, 0.02^2), the residual projections (names ending
// in "c_proj.weight") N(0, (0.02 / sqrt(2 layers))^2), biases zero, LayerNorm weights
// ones; and the logical axes: "vocab", "positions", "embed", "qkv" (c_attn's 3C
// outputs), "heads" (the heads' outputs side by side, attn.c_proj's input) and "mlp".
// nn::Materialize then draws them.
void SetGpt2Specs(nn::Module& model, int64_t layers);

// GPT-2's sharding rules over those axes (distributed/sharding.h): Megatron's tensor
// parallelism on the mesh axis "model" (c_attn and c_fc split by their outputs, "qkv" and
// "mlp"; attn.c_proj and mlp.c_proj by their inputs, "heads" and "mlp"), and with `fsdp`
// every parameter's "embed" on "data".
distributed::ShardingRules Gpt2ShardingRules(bool fsdp);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_BLOCK_H_
