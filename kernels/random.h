#ifndef EMBER_KERNELS_RANDOM_H_
#define EMBER_KERNELS_RANDOM_H_

#include <cstdint>

#include "base/error.h"
#include "core/dtype.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_RANDOM_KERNELS(X) X(UniformFill)

namespace ember::kernels {

// The mantissa bits b of UniformFill's numbers in `dtype`; throws ember::Error for a
// dtype that is not floating.
inline int UniformBits(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return 53;
    case DType::kF32:
      return 24;
    case DType::kF16:
      return 11;
    case DType::kBF16:
      return 8;
    default:
      EMBER_THROW("random: dtype ", DTypeName(dtype), " is not a floating-point type");
  }
}

}  // namespace ember::kernels

namespace ember::kernels::cpu {

// out[i] = U[0, 1) drawn from Philox's stream of `seed` (kernels/philox.h) at word
// offset + i w, with the dtype's mantissa bits b (f32 24, f64 53, bf16 8, f16 11) and
// w = 1 word per value (2 for f64): the numbers tensor/random.h's Generator draws one
// after another from that offset. out: [n] of dtype (a floating type), overwritten.
// Each element depends only on its index, so the work splits freely (threads, GPU).
void UniformFill(DType dtype, int64_t n, uint64_t seed, uint64_t offset, void* out);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_RANDOM_KERNELS)

#endif  // EMBER_KERNELS_RANDOM_H_
