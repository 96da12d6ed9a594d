#ifndef EMBER_MODELS_GPT2_SAMPLE_H_
#define EMBER_MODELS_GPT2_SAMPLE_H_

// Drawing tokens from a GPT: temperature, top-k and top-p (nucleus) sampling.

#include <cstdint>
#include <vector>

#include "models/gpt2/model.h"
#include "tensor/random.h"

namespace ember::models::gpt2 {

struct SamplingOptions {
  double temperature = 1.0;  // 0: always the most likely token
  int64_t top_k = 0;         // 0: no limit
  double top_p = 1.0;        // keep the smallest set of tokens whose probability reaches top_p
};

// The next token after `logits` (one row of vocab_size scores).
int64_t SampleToken(const std::vector<float>& logits, const SamplingOptions& options, Generator& gen);

// `prompt` (at least one token) followed by up to max_new_tokens sampled tokens, each
// from the model run on the last block_size tokens (every step runs the whole window:
// no key/value cache yet). Stops early after `stop` when it is >= 0.
std::vector<int64_t> Generate(GPT& model, std::vector<int64_t> prompt, int64_t max_new_tokens,
                              const SamplingOptions& options, Generator& gen, int64_t stop = -1);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_SAMPLE_H_
