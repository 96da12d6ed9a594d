#ifndef EMBER_MODELS_GPT2_SAMPLE_H_
#define EMBER_MODELS_GPT2_SAMPLE_H_

// Drawing tokens from a GPT: temperature, top-k and top-p (nucleus) sampling.

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "autograd/engine.h"
#include "models/gpt2/model.h"
#include "tensor/random.h"

namespace ember::models::gpt2 {

struct SamplingOptions {
  double temperature = 1.0;  // 0: always the most likely token
  int64_t top_k = 0;         // 0: no limit
  double top_p = 1.0;        // keep the smallest set of tokens whose probability reaches top_p

  // InvalidArgument, in the flags' names, unless temperature >= 0, top_k >= 0 and
  // 0 < top_p <= 1.
  absl::Status Validate() const;
};

// The next token after `logits` (one row of vocab_size scores).
int64_t SampleToken(const std::vector<float>& logits, const SamplingOptions& options,
                    Generator& gen);

// A sequence that grows a token at a time: tokens appended (a prompt, a user's turn)
// and tokens drawn from the model after them. With the key/value cache (the default)
// each drawn token runs the model on the positions not yet seen, one per step after the
// first; without it each step runs the last block_size tokens. The two give the same
// tokens while the sequence fits the context window. Past it, the uncached model slides
// its window a token at a time; the cached one restarts its cache from the last half
// window of tokens (one full pass per block_size / 2 tokens instead of one per token).
class Sampler {
 public:
  Sampler(GPT& model, const SamplingOptions& options, Generator& gen, bool use_cache = true);
  ~Sampler();  // the model's training mode is restored
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Appends tokens (ids below vocab_size), to be read by the next Next().
  void Append(const std::vector<int64_t>& tokens);
  // Draws the token after the sequence, appends it and returns it. Needs a sequence of
  // at least one token.
  int64_t Next();
  // Starts over from `tokens` (the cache is emptied).
  void Reset(std::vector<int64_t> tokens);
  const std::vector<int64_t>& tokens() const { return tokens_; }

 private:
  GPT& model_;
  SamplingOptions options_;
  Generator& gen_;
  bool use_cache_, was_training_;
  KVCache cache_;
  std::vector<int64_t> tokens_;
  size_t cache_start_ = 0;  // tokens_[cache_start_ ..) is what the cache has seen, from position 0
};

// `prompt` (at least one token) followed by up to max_new_tokens sampled tokens (a
// Sampler's); stops early after `stop` when it is >= 0.
std::vector<int64_t> Generate(GPT& model, std::vector<int64_t> prompt, int64_t max_new_tokens,
                              const SamplingOptions& options, Generator& gen, int64_t stop = -1,
                              bool use_cache = true);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_SAMPLE_H_
