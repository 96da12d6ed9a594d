#ifndef EMBER_MODELS_COMMON_PRECISION_H_
#define EMBER_MODELS_COMMON_PRECISION_H_

// The model binaries' --dtype flag: the dtype their products compute in (autograd/
// autocast.h's policy; parameters, optimizer state and checkpoints stay f32).

#include <string>

#include "absl/status/statusor.h"
#include "tensor/device.h"
#include "tensor/dtype.h"

namespace ember::models {

// The flag's help, the same in every binary.
inline constexpr char kDTypeFlagHelp[] =
    "the products' dtype: f32, bf16 (autocast: bf16 products with f32 sums; LayerNorm, "
    "softmax and the loss in f32; f32 master weights), or auto (bf16 on a GPU, f32 on a CPU)";

// "f32" or "bf16", or for "auto" bf16 on a GPU and f32 on a CPU (PyTorch's defaults).
absl::StatusOr<DType> ComputeDTypeFromFlag(const std::string& flag, Device device);

}  // namespace ember::models

#endif  // EMBER_MODELS_COMMON_PRECISION_H_
