#include "models/makemore/mlp.h"

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"

namespace ember::models::makemore {

namespace ag = ::ember::autograd;

Mlp::Mlp(const MlpConfig& config, Generator& gen) : config_(config) {
  EMBER_CHECK(
      config.vocab > 0 && config.block_size > 0 && config.embedding > 0 && config.hidden > 0,
      "Mlp: sizes must be positive");
  wte_ =
      RegisterModule("wte", std::make_shared<nn::Embedding>(config.vocab, config.embedding, gen));
  hidden_ = RegisterModule(
      "hidden",
      std::make_shared<nn::Linear>(config.block_size * config.embedding, config.hidden, true, gen));
  head_ =
      RegisterModule("head", std::make_shared<nn::Linear>(config.hidden, config.vocab, true, gen));
}

Tensor Mlp::Forward(const Tensor& context) {
  EMBER_CHECK(context.dim() == 2 && context.size(1) == config_.block_size, "Mlp: context of shape ",
              ShapeToString(context.shape()), " (expected [N, ", config_.block_size, "])");
  const Tensor embedded = (*wte_)(context);  // [N, block, embedding]
  const Tensor h = ag::Tanh((*hidden_)(ag::Reshape(embedded, {context.size(0), -1})));
  return (*head_)(h);
}

std::string Mlp::ToString() const {
  return absl::StrCat("Mlp(vocab=", config_.vocab, ", block_size=", config_.block_size,
                      ", embedding=", config_.embedding, ", hidden=", config_.hidden, ")");
}

double StepDecayLr(double lr, int64_t step, int64_t steps) {
  return step < steps / 2 ? lr : lr / 10;
}

}  // namespace ember::models::makemore
