#ifndef EMBER_KERNELS_ADAMW_H_
#define EMBER_KERNELS_ADAMW_H_

#include <cstdint>

#include "kernels/operands.h"
#include "kernels/twins.h"
#include "tensor/dtype.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_ADAMW_KERNELS(X) X(AdamWStep)

namespace ember::kernels::cpu {

using ::ember::kernels::AdamWHyper;

// One AdamW step (Loshchilov & Hutter's decoupled weight decay) in a single pass over
// parameter p, gradient g and the moments m, v, all [n] of dtype (f32 or f64),
// contiguous; p, m, v updated in place. The arithmetic is torch.optim.AdamW's
// (PyTorch 1.13, single-tensor path), operation for operation, after the gradient is
// scaled as clipping would (g = g grad_scale, skipped by torch when it is 1, and exact
// here then):
//   p = p * (1 - lr wd)
//   m = m beta1 + (1 - beta1) g
//   v = v beta2 + (1 - beta2) g g
//   p = p - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
void AdamWStep(DType dtype, int64_t n, void* p, const void* g, void* m, void* v,
               const AdamWHyper& hyper);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_ADAMW_KERNELS)

#endif  // EMBER_KERNELS_ADAMW_H_
