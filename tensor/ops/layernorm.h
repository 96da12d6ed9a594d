#ifndef EMBER_TENSOR_OPS_LAYERNORM_H_
#define EMBER_TENSOR_OPS_LAYERNORM_H_

// Layer normalisation over the last dimension (kernel in kernels/layernorm.h),
// as torch.nn.functional.layer_norm with normalized_shape = [C].

#include "tensor/tensor.h"

namespace ember::ops {

struct LayerNormResult {
  Tensor y;     // x's shape
  Tensor mean;  // [rows]: saved for the backward pass
  Tensor rstd;  // [rows]: 1 / sqrt(var + eps)
  Tensor sum;   // x + residual, when one was given (the tensor normalised)
};

// x: [..., C]; weight: [C]; bias: [C] or undefined (no bias). With a residual (x's
// shape and dtype) the input normalised is x + residual, computed in the same kernel
// pass (one read of the rows) and returned as `sum`, equal to Add(x, residual).
LayerNormResult LayerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                          double eps = 1e-5, const Tensor& residual = Tensor());

struct LayerNormGrads {
  Tensor dx, dweight, dbias;  // dbias undefined when the forward had no bias
};

LayerNormGrads LayerNormBackward(const Tensor& x, const Tensor& weight, bool has_bias,
                                 const LayerNormResult& forward, const Tensor& dy);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_LAYERNORM_H_
