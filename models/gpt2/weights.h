#ifndef EMBER_MODELS_GPT2_WEIGHTS_H_
#define EMBER_MODELS_GPT2_WEIGHTS_H_

// GPT-2 weights from the files people have, as a configuration and a state dict in
// ember's layout (model.h: GPT-2's names, matrices [out, in]):
//
// - an ember checkpoint: the trainer's .safetensors (its metadata holds the format
//   "ember-gpt2-checkpoint/1" and the config as JSON); the optimizer's entries are
//   left out;
// - llm.c's checkpoint (gpt2_124M.bin, from its train_gpt2.py): 256 int32 of header
//   (20240326; version 3 = float32 or 5 = bfloat16; block_size, vocab_size, n_layer,
//   n_head, n_embd, the vocabulary padded to a multiple of 128), then the tensors in its
//   order: wte [Vp, C] (rows past V are padding), wpe [T, C], then each kind for every
//   layer in turn: ln_1.weight, ln_1.bias, attn.c_attn.weight [3C, C], attn.c_attn.bias,
//   attn.c_proj.weight [C, C], attn.c_proj.bias, ln_2.weight, ln_2.bias,
//   mlp.c_fc.weight [4C, C], mlp.c_fc.bias, mlp.c_proj.weight [C, 4C], mlp.c_proj.bias;
//   then ln_f.weight, ln_f.bias. Its matrices are [out, in] already;
// - a Hugging Face GPT-2: a folder with config.json (n_embd, n_head, n_layer,
//   n_positions, vocab_size) and model.safetensors, or that .safetensors file with
//   config.json beside it. Names may carry "transformer."; the causal-mask buffers
//   (attn.bias, attn.masked_bias) and lm_head.weight (wte's twin) are skipped; the four
//   Conv1D matrices are stored [in, out] and are transposed.
//
// Any float dtype is read (to f32). Every file is read once: llm.c's tensors straight
// into their memory, safetensors memory-mapped. Every error names the file and what
// was wrong.

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "models/gpt2/model.h"

namespace ember::models::gpt2 {

inline constexpr char kCheckpointFormat[] = "ember-gpt2-checkpoint/1";
// An ember checkpoint's optimizer entries are its optimizer's StateDict() under this.
inline constexpr char kOptimizerPrefix[] = "optimizer.";

struct Weights {
  GPTConfig config;
  std::map<std::string, Tensor> state;  // every parameter of GPT(config), f32
  std::string format;                   // "ember", "llm.c" or "huggingface"
  // An ember checkpoint's rest, for resuming: the optimizer's state (the prefix taken
  // off) and the metadata (step, data position, generator offsets).
  std::map<std::string, Tensor> optimizer;
  std::map<std::string, std::string> metadata;
  // A checkpoint of a run that trained a network spec (train --model=net.json): the spec
  // (nn/network_json.h), its parameters in `state`, and `config` unused. GptFromWeights refuses it.
  std::string spec;
};

absl::StatusOr<Weights> ReadWeights(const std::string& path);

// A GPT built from ReadWeights(path) (dropout 0); not from a spec's checkpoint.
absl::StatusOr<std::unique_ptr<GPT>> LoadGpt(const std::string& path);
// The same from weights already read (`path` names them in errors).
absl::StatusOr<std::unique_ptr<GPT>> GptFromWeights(Weights w, const std::string& path);

// The config as the checkpoint metadata's JSON, and back (errors name `path`).
std::string ConfigJson(const GPTConfig& config);
absl::StatusOr<GPTConfig> ParseConfigJson(const std::string& text, const std::string& path);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_WEIGHTS_H_
