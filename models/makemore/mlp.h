#ifndef EMBER_MODELS_MAKEMORE_MLP_H_
#define EMBER_MODELS_MAKEMORE_MLP_H_

// The MLP language model of Bengio et al. (2003), sized as makemore sizes it (part 2):
// the block_size previous characters, each embedded in `embedding` dimensions,
// concatenated, through a tanh layer of `hidden` units to the next character's logits:
//
//   h = tanh(concat(C[x_1], ..., C[x_block]) W1^T + b1),   logits = h W2^T + b2
//
// Parameters "wte.weight" (C [vocab, embedding]), "hidden.weight"/"hidden.bias" (W1
// [hidden, block embedding]), "head.weight"/"head.bias" (W2 [vocab, hidden]), with
// PyTorch's default initialisation (nn.Embedding, nn.Linear), as
// tools/reference/makemore_torch.py builds it.

#include <cstdint>
#include <memory>
#include <string>

#include "nn/layers.h"
#include "tensor/random.h"

namespace ember::models::makemore {

struct MlpConfig {
  int64_t vocab = 28;
  int64_t block_size = 3;
  int64_t embedding = 10;
  int64_t hidden = 200;
};

class Mlp : public nn::Module {
 public:
  Mlp(const MlpConfig& config, Generator& gen);
  // context i64 [N, block_size] -> logits [N, vocab].
  Tensor Forward(const Tensor& context) override;
  std::string ToString() const override;
  const MlpConfig& config() const { return config_; }

 private:
  MlpConfig config_;
  std::shared_ptr<nn::Embedding> wte_;
  std::shared_ptr<nn::Linear> hidden_, head_;
};

// The learning rate of step `step` (0-based) of `steps`: lr for the first half, lr / 10
// for the second (makemore's 0.1 then 0.01).
double StepDecayLr(double lr, int64_t step, int64_t steps);

}  // namespace ember::models::makemore

#endif  // EMBER_MODELS_MAKEMORE_MLP_H_
