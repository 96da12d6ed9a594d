#ifndef EMBER_KERNELS_CUDA_INTERNAL_ATTENTION_BF16_H_
#define EMBER_KERNELS_CUDA_INTERNAL_ATTENTION_BF16_H_

// kernels/attention.h's causal attention for bf16 heads of d = kCudaBf16HeadSize on the
// tensor cores (attention_bf16.cu); attention.cu's entry points send bf16 here. q, k, v, y, dy, dq,
// dk, dv: bf16 bits; lse: f32.

#include <cstdint>

#include "kernels/attention.h"

namespace ember::kernels::cuda::internal {

void Bf16CausalAttentionForward(int64_t batch, int64_t tq, int64_t tk, const uint16_t* q,
                                const uint16_t* k, const uint16_t* v, int64_t kv_stride,
                                uint16_t* y, float* lse);

void Bf16CausalAttentionBackward(int64_t batch, int64_t tq, int64_t tk, const uint16_t* q,
                                 const uint16_t* k, const uint16_t* v, const uint16_t* y,
                                 const float* lse, const uint16_t* dy, uint16_t* dq, uint16_t* dk,
                                 uint16_t* dv);

}  // namespace ember::kernels::cuda::internal

#endif  // EMBER_KERNELS_CUDA_INTERNAL_ATTENTION_BF16_H_
