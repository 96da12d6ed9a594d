#ifndef EMBER_MODELS_GPT2_MODEL_H_
#define EMBER_MODELS_GPT2_MODEL_H_

// GPT-2 (Radford et al. 2019) as nanoGPT and llm.c write it: token and position
// embeddings, n_layer pre-LayerNorm blocks (causal self-attention, GELU-tanh MLP), a
// final LayerNorm, and a language-model head that is the token embedding transposed.
//
// Parameters carry GPT-2's usual names, so checkpoints map one to one onto Hugging
// Face's and nanoGPT's: wte.weight [V, C], wpe.weight [T, C], h.<i>.ln_1.{weight,bias},
// h.<i>.attn.c_attn.{weight [3C, C], bias [3C]}, h.<i>.attn.c_proj.{weight [C, C], bias},
// h.<i>.ln_2.{weight,bias}, h.<i>.mlp.c_fc.{weight [4C, C], bias [4C]},
// h.<i>.mlp.c_proj.{weight [C, 4C], bias [C]}, ln_f.{weight,bias}. ember's matrices are
// [out, in] as torch.nn.Linear's (nanoGPT's layout); Hugging Face's Conv1D stores the
// four attention/MLP matrices transposed, [in, out]. There is no lm_head.weight: it is
// wte.weight.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distributed/sharded_model.h"
#include "models/gpt2/block.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"

namespace ember::models::gpt2 {

struct GPTConfig {
  int64_t vocab_size = 50257;
  int64_t block_size = 1024;  // the longest sequence (n_positions)
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_embd = 768;
  double dropout = 0.0;
  double attn_dropout = 0.0;  // on the attention weights, in the fused kernel

  // gpt2 (124M), gpt2-medium (350M), gpt2-large (774M), gpt2-xl (1558M): OpenAI's
  // sizes; "small" (6 layers, 6 heads, 384 dims, 256 positions) and "demo" (3 layers,
  // 4 heads, 128 dims, 64 positions) for training here; "tiny" for tests.
  static absl::StatusOr<GPTConfig> Preset(absl::string_view name);
  static std::vector<std::string> PresetNames();

  // InvalidArgument naming the field for a size below 1, n_embd not divisible by
  // n_head, or dropout or attn_dropout outside [0, 1).
  absl::Status Validate() const;
  std::string ToString() const;
  // The model's parameters (the output layer shares wte's): V C + B C + L (12 C^2 +
  // 13 C) + 2 C, at most INT64_MAX (a hostile file's config cannot overflow it).
  int64_t NumParameters() const;
  // The vocabulary rounded up to a multiple of 128 (llm.c's Vp: 50,304 for GPT-2's
  // 50,257), the columns of the head's product in Loss.
  int64_t padded_vocab_size() const { return (vocab_size + 127) / 128 * 128; }
};

// Each layer's attention cache of one sequence, for generating a token at a time
// (GPT::Forward with caches). Its capacity is the model's block_size.
struct KVCache {
  std::vector<AttentionCache> layers;
  int64_t length() const { return layers.empty() ? 0 : layers.front().length; }
};

class GPT : public nn::Module {
 public:
  // Initialised as GPT-2 (SetGpt2Specs) from gen, on the CPU; under an
  // nn::MetaDeviceGuard, on the meta device (nn::Materialize makes it later, with the
  // same numbers). The config must be valid (Validate()).
  explicit GPT(const GPTConfig& config, Generator& gen = DefaultGenerator());

  // ids: integer [B, T] with T <= block_size. Returns the logits [B, T, vocab_size].
  Tensor Forward(const Tensor& ids) override;
  // Row b of ids [B, T] holds the positions after caches[b]'s (one cache a sequence,
  // caches[b]->length() + T <= block_size): their keys and values join that cache and
  // their logits come out, the same as the last T rows of Forward on that sequence
  // whole. Sequences of different lengths decode together (a server's batch). For
  // inference (no gradients).
  Tensor Forward(const Tensor& ids, const std::vector<KVCache*>& caches);
  Tensor Forward(const Tensor& ids, KVCache* cache) {  // one sequence, ids [1, T]
    return Forward(ids, std::vector<KVCache*>{cache});
  }
  KVCache NewCache() const;
  // Each layer's attention weights over ids [B, T] (T <= block_size): [B, heads, T, T]
  // per layer, softmax(q k^T / sqrt(d), causal) (values, for pictures: generate
  // --attention_svg).
  std::vector<Tensor> AttentionWeights(const Tensor& ids);
  // The mean next-token cross entropy of Forward(ids) against targets [B, T] (ignoring
  // -100). With the vocabulary padded (PadVocabulary), the head's product runs over
  // padded_vocab_size() columns and the loss over the first vocab_size of them, with the
  // same numbers: the padding's logits take no part and get a zero gradient.
  Tensor Loss(const Tensor& ids, const Tensor& targets);
  // Lays wte's rows into a table of padded_vocab_size() rows whose rest is zero and never
  // trained, so that Loss's head product and cross entropy run over a multiple of 128
  // columns (a product with 50,257 columns is much slower on a GPU); wte.weight stays
  // [V, C], a view of the table's first rows, in checkpoints too. The constructor does
  // it for a model made on the CPU; what replaces the parameter's memory (To(device),
  // sharding) undoes it, and Loss then runs over V columns. A no-op when padded already,
  // on the meta device, or when V is a multiple of 128.
  void PadVocabulary();

  // Keeps a copy of every product's weight packed for inference in `format`
  // (nn::PackedForInference: f32 re-laid for streaming, bf16, or int8 with a scale per 32
  // weights): the blocks' four Linears and the head (wte). Forward uses them while grad
  // mode is off and the weights are unchanged; decoding a token then reads each weight
  // once, in as few bytes as the format has. On the CPU only (throws elsewhere).
  void PackForInference(ops::PackedFormat format);
  // The bytes of weights one decoded token reads: the products' (packed, else as stored:
  // f32) and its rows of wte and wpe.
  int64_t DecodeWeightBytes();

  std::string ToString() const override;
  const GPTConfig& config() const { return config_; }

  // Tensor parallel over `group` (null: whole): every block's attention heads and MLP
  // split as Block's. The blocks' parameters must be this rank's shares of them.
  void SetTensorParallel(distributed::ProcessGroup* group);
  // The blocks, for wrapping (fully sharded training's hooks); Forward calls each through
  // its operator() (forward hooks) unless it runs with a cache.
  const std::vector<std::shared_ptr<Block>>& blocks() const { return blocks_; }

 private:
  GPTConfig config_;
  std::shared_ptr<nn::Embedding> wte_, wpe_;
  std::shared_ptr<nn::Dropout> drop_;
  std::shared_ptr<nn::Sequential> h_;           // the blocks, named h.0, h.1, ... in checkpoints
  std::vector<std::shared_ptr<Block>> blocks_;  // the same blocks, typed
  std::shared_ptr<nn::LayerNorm> ln_f_;
  Tensor padded_wte_;  // PadVocabulary's table [Vp, C], whose first V rows wte.weight views
  nn::PackedForInference head_;  // wte packed as the head's weight (PackForInference)

  // ln_f of the last block's output: the head's input [B, T, C].
  Tensor Hidden(const Tensor& ids, const std::vector<KVCache*>& caches);
  // Whether wte.weight is still the first rows of padded_wte_ (To or sharding replace it).
  bool Padded() const;
  // The padded table as one autograd node over wte.weight (the gradient's first V rows
  // flow back, a view); undefined when not Padded().
  Tensor PaddedTable() const;
};

// GPT-2's plan for distributed::ShardedModel: Gpt2ShardingRules (with FSDP's "embed" on
// "data", which ShardOptions::fsdp turns on or off), its blocks as FSDP's units, and its
// attention and MLP tensor parallel.
distributed::ShardingPlan Gpt2ShardingPlan(GPT& gpt);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_MODEL_H_
