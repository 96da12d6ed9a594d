#ifndef EMBER_TENSOR_OPS_ADAMW_H_
#define EMBER_TENSOR_OPS_ADAMW_H_

// The fused AdamW update on tensors (kernels in kernels/adamw.h, and its CUDA
// twin); optim/ builds the optimizer on it.

#include "kernels/operands.h"
#include "tensor/tensor.h"

namespace ember::ops {

using AdamWHyper = kernels::AdamWHyper;

// Updates param, exp_avg and exp_avg_sq in place from grad: all four contiguous, of
// one shape and one dtype (f32 or f64).
void AdamWStep(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
               const Tensor& exp_avg_sq, const AdamWHyper& hyper);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_ADAMW_H_
