#ifndef EMBER_MODELS_GPT2_MFU_H_
#define EMBER_MODELS_GPT2_MFU_H_

// Model FLOPs utilisation, as llm.c reports it (train_gpt2.cu's gpt2_estimate_mfu):
// the arithmetic a step needs by the model's shape, over the time it took, as a share
// of the GPU's dense bf16 tensor-core peak, whatever precision the step ran in, so
// that runs in f32, TF32 and bf16 compare on one scale.

#include <cstdint>
#include <string_view>

#include "models/gpt2/model.h"

namespace ember::models::gpt2 {

// FLOPs a training token costs: 6 N for the forward and backward through the N
// parameters' products, and 6 L C T for attention's two T x T products (causal masking
// ignored), llm.c's count. GPT-2 124M at T = 1024: 6 x 124,439,808 + 6 x 12 x 768 x 1024
// = 803,261,952.
inline double FlopsPerToken(int64_t parameters, const GPTConfig& config, int64_t seq_len) {
  return 6.0 * static_cast<double>(parameters) + 6.0 * static_cast<double>(config.n_layer) *
                                                     static_cast<double>(config.n_embd) *
                                                     static_cast<double>(seq_len);
}

// The dense bf16 peak (FLOP/s, without sparsity; NVIDIA's datasheets) of a GPU by the
// name the driver gives it, or 0 for one this table does not know.
inline double Bf16PeakFlops(std::string_view name) {
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  if (has("H100") || has("H200")) {
    if (has("NVL")) return 835e12;
    if (has("PCIe")) return 756e12;
    return 989e12;  // SXM
  }
  if (has("A100")) return 312e12;
  return 0;
}

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_MFU_H_
