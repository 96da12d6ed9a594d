#ifndef EMBER_TENSOR_OPS_UNARY_H_
#define EMBER_TENSOR_OPS_UNARY_H_

// Elementwise functions of floating-point tensors (kernels in kernels/unary.h).
// Each returns a new contiguous tensor of x's shape and dtype. f32 and f64 run
// natively; bf16 and f16 are computed in f32 and rounded once (PyTorch 1.13 rounds
// some intermediates of its bf16 gelu and pow too, and can land a few ulps away).
// Non-floating dtypes and non-CPU tensors throw ember::Error naming the op.

#include "tensor/tensor.h"

namespace ember::ops {

Tensor Neg(const Tensor& x);
Tensor Abs(const Tensor& x);
Tensor Exp(const Tensor& x);
Tensor Log(const Tensor& x);
Tensor Sqrt(const Tensor& x);
Tensor Rsqrt(const Tensor& x);
Tensor Reciprocal(const Tensor& x);
Tensor Square(const Tensor& x);
Tensor Tanh(const Tensor& x);
Tensor Sigmoid(const Tensor& x);
Tensor Relu(const Tensor& x);
Tensor GeluTanh(const Tensor& x);  // GPT-2's approximation
Tensor GeluErf(const Tensor& x);   // the exact x * Phi(x)
Tensor Sin(const Tensor& x);
Tensor Cos(const Tensor& x);
Tensor Pow(const Tensor& x, double exponent);

// Gradients through these functions: grad_out times the derivative, with grad_out of
// the same shape as the first argument (the forward's input x, or output y).
Tensor ReluBackward(const Tensor& x, const Tensor& grad_out);
Tensor GeluTanhBackward(const Tensor& x, const Tensor& grad_out);
Tensor GeluErfBackward(const Tensor& x, const Tensor& grad_out);
Tensor TanhBackward(const Tensor& y, const Tensor& grad_out);
Tensor SigmoidBackward(const Tensor& y, const Tensor& grad_out);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_UNARY_H_
