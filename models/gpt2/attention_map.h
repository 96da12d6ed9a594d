#ifndef EMBER_MODELS_GPT2_ATTENTION_MAP_H_
#define EMBER_MODELS_GPT2_ATTENTION_MAP_H_

// Pictures of attention: a grid of heat maps, one per layer (rows) and head (columns),
// each the weights [T, T] of the prompt's tokens (row i: where token i looks; white 0,
// dark blue 1), as SVG. Every drawn cell carries its weight (data-w) and a tooltip
// naming the two tokens, so what is drawn can be read back and checked.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tensor/tensor.h"

namespace ember::models::gpt2 {

// weights: per layer [heads, T, T] (one sequence of GPT::AttentionWeights); tokens: the
// T tokens' text, for labels.
std::string AttentionMapSvg(const std::vector<Tensor>& weights,
                            const std::vector<std::string>& tokens);
absl::Status WriteAttentionMapSvg(const std::string& path, const std::vector<Tensor>& weights,
                                  const std::vector<std::string>& tokens);

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_ATTENTION_MAP_H_
