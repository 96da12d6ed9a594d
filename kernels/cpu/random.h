#ifndef EMBER_KERNELS_CPU_RANDOM_H_
#define EMBER_KERNELS_CPU_RANDOM_H_

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::kernels::cpu {

// out[i] = U[0, 1) drawn from Philox's stream of `seed` (kernels/philox.h) at word
// offset + i w, with the dtype's mantissa bits b (f32 24, f64 53, bf16 8, f16 11) and
// w = 1 word per value (2 for f64): the numbers tensor/random.h's Generator draws one
// after another from that offset. out: [n] of dtype (a floating type), overwritten.
// Each element depends only on its index, so the work splits freely (threads, GPU).
void UniformFill(DType dtype, int64_t n, uint64_t seed, uint64_t offset, void* out);

// The mantissa bits b above; throws ember::Error for a dtype that is not floating.
int UniformBits(DType dtype);

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_CPU_RANDOM_H_
