#ifndef EMBER_MODELS_COMMON_PRECISION_H_
#define EMBER_MODELS_COMMON_PRECISION_H_

// The model binaries' --dtype flag: the dtype their products compute in (autograd/
// autocast.h's policy; parameters, optimizer state and checkpoints stay f32).

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/device.h"
#include "core/dtype.h"
#include "tensor/ops/packed_linear.h"

namespace ember::models {

// The flag's help, the same in every binary.
inline constexpr char kDTypeFlagHelp[] =
    "the products' dtype: f32, bf16 (autocast: bf16 products with f32 sums; LayerNorm, "
    "softmax and the loss in f32; f32 master weights), or auto (bf16 on a GPU, f32 on a CPU)";

// "f32" or "bf16", or for "auto" bf16 on a GPU and f32 on a CPU (PyTorch's defaults).
absl::StatusOr<DType> ComputeDTypeFromFlag(const std::string& flag, Device device);

// The inference binaries' --weights flag: how the products' weights are kept for
// decoding (models/gpt2/model.h's PackForInference).
inline constexpr char kWeightsFlagHelp[] =
    "the products' weights for inference on a CPU: f32, bf16 or int8 (a bf16 scale per 32 "
    "weights, as llama.cpp's q8_0), packed once and streamed at every token; auto (the compute "
    "dtype's on a CPU, none on a GPU); or none (the parameters as they are)";

// The format "f32", "bf16" or "int8" names; none for "none", and for "auto" the compute
// dtype's on a CPU and none on a GPU. InvalidArgument for another name, or a format on
// a GPU (packed weights are the CPU's).
absl::StatusOr<std::optional<ops::PackedFormat>> WeightsFromFlag(const std::string& flag,
                                                                 DType dtype, Device device);

}  // namespace ember::models

#endif  // EMBER_MODELS_COMMON_PRECISION_H_
