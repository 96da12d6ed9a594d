#ifndef EMBER_KERNELS_ADAMW_H_
#define EMBER_KERNELS_ADAMW_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/operands.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_ADAMW_KERNELS(X) X(AdamWStep)

namespace ember::kernels::cpu {

using ::ember::kernels::AdamWHyper;
using ::ember::kernels::AdamWTensor;

// One AdamW step (Loshchilov & Hutter's decoupled weight decay) over `count` tensors in
// one pass (one launch on a GPU, one split of the thread pool on the CPU: a model's
// hundreds of parameters cost one dispatch, as llm.c's and torch's fused multi-tensor
// AdamW). For each: parameter p, gradient g and the moments m, v, all [n] of dtype (f32
// or f64), contiguous; p, m, v updated in place. `tensors` is a table in host memory;
// the arrays it points to are in the device's. The arithmetic is torch.optim.AdamW's
// (PyTorch 1.13, single-tensor path), operation for operation, after the gradient is
// scaled as clipping would (g = g grad_scale, skipped by torch when it is 1, and exact
// here then):
//   p = p * (1 - lr wd)
//   m = m beta1 + (1 - beta1) g
//   v = v beta2 + (1 - beta2) g g
//   p = p - (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// with each tensor's own hyperparameters; every element's result is the same as a step
// over its tensor alone (and, on the CPU, whatever the thread count).
void AdamWStep(DType dtype, int64_t count, const AdamWTensor* tensors);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_ADAMW_KERNELS)

#endif  // EMBER_KERNELS_ADAMW_H_
