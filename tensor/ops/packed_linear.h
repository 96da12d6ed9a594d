#ifndef EMBER_TENSOR_OPS_PACKED_LINEAR_H_
#define EMBER_TENSOR_OPS_PACKED_LINEAR_H_

// A Linear layer's weight packed once for inference, and y = x W'^T + b with it
// (kernels/packed_linear.h: the layout, the formats and their numbers). For decoding on
// the CPU, where every token reads every weight: f32 packed, bf16 (half the bytes) and
// int8 with a bf16 scale per 32 weights (llama.cpp's q8_0; 1.0625 bytes a weight).

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "kernels/packed_linear.h"
#include "tensor/tensor.h"

namespace ember::ops {

using PackedFormat = kernels::cpu::PackedFormat;

// "f32", "bf16" or "int8"; InvalidArgument naming the choices otherwise.
absl::StatusOr<PackedFormat> PackedFormatFromName(const std::string& name);

struct PackedWeight {
  PackedFormat format = PackedFormat::kF32;
  int64_t out = 0, in = 0;  // W's [out, in]
  Tensor data;              // u8 [kernels::cpu::PackedBytes(format, out, in)], on the CPU
};

// W [out, in] (f32, on the CPU, any strides) packed in `format`. Throws on another
// dtype or device, and for int8 on a weight that is not finite.
PackedWeight PackWeight(const Tensor& weight, PackedFormat format);

// y = x W'^T + bias: x [..., in] f32 or bf16 on the CPU, bias [out] (f32, or x's dtype)
// or undefined; y [..., out] of x's dtype, contiguous, each entry summed in f32 and
// rounded once (int8: x quantized per 32 as well, kernels/packed_linear.h). For
// inference: nothing is recorded for gradients.
Tensor PackedLinear(const Tensor& x, const PackedWeight& weight, const Tensor& bias);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_PACKED_LINEAR_H_
