#ifndef EMBER_TENSOR_OPS_ADAMW_H_
#define EMBER_TENSOR_OPS_ADAMW_H_

// The fused AdamW update on tensors (kernels in kernels/adamw.h, and its CUDA
// twin); optim/ builds the optimizer on it.

#include <vector>

#include "kernels/operands.h"
#include "tensor/tensor.h"

namespace ember::ops {

using AdamWHyper = kernels::AdamWHyper;

// One parameter's update: param, exp_avg and exp_avg_sq changed in place from grad; and
// bf16_copy, when defined, overwritten with the new param rounded to bf16 (autocast's
// copy of an f32 param, autograd/autocast.h).
struct AdamWUpdate {
  Tensor param, grad, exp_avg, exp_avg_sq;
  AdamWHyper hyper;
  Tensor bf16_copy = Tensor();  // none unless given
};

// Runs every update in one kernel call per device and dtype (one launch for a model's
// parameters on a GPU). In each, the four tensors are contiguous, of one shape and one
// dtype (f32 or f64), on one device; a bf16_copy is contiguous, bf16, of the param's
// shape, on its device, and the param f32.
void AdamWStep(const std::vector<AdamWUpdate>& updates);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_ADAMW_H_
