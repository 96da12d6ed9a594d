#ifndef EMBER_TENSOR_OPS_BINARY_H_
#define EMBER_TENSOR_OPS_BINARY_H_

// Elementwise binary operations with numpy broadcasting (kernels in
// kernels/binary.h). Each returns a new contiguous tensor of the broadcast shape.
//
// dtypes: both tensors must have the same dtype (ember does not promote silently);
// with a Scalar, the tensor's dtype is kept, except that a floating-point Scalar
// with an integer tensor gives f32, as PyTorch. bf16 and f16 compute in f32 and round
// once. Mismatched shapes or dtypes throw ember::Error naming the op and the shapes.

#include "tensor/tensor.h"

namespace ember::ops {

Tensor Add(const Tensor& a, const Tensor& b);
Tensor Sub(const Tensor& a, const Tensor& b);
Tensor Mul(const Tensor& a, const Tensor& b);
Tensor Div(const Tensor& a, const Tensor& b);      // floating point only
Tensor Pow(const Tensor& a, const Tensor& b);      // floating point only
Tensor Maximum(const Tensor& a, const Tensor& b);  // NaN if either is NaN
Tensor Minimum(const Tensor& a, const Tensor& b);

Tensor Add(const Tensor& a, const Scalar& b);
Tensor Sub(const Tensor& a, const Scalar& b);
Tensor Sub(const Scalar& a, const Tensor& b);
Tensor Mul(const Tensor& a, const Scalar& b);
Tensor Div(const Tensor& a, const Scalar& b);
Tensor Div(const Scalar& a, const Tensor& b);
Tensor Maximum(const Tensor& a, const Scalar& b);
Tensor Minimum(const Tensor& a, const Scalar& b);
// x *= b, into x's own memory, in x's dtype (one pass when x is contiguous f32 or f64).
void MulInPlace(const Tensor& x, const Scalar& b);

// Comparisons give bool tensors.
Tensor Eq(const Tensor& a, const Tensor& b);
Tensor Ne(const Tensor& a, const Tensor& b);
Tensor Lt(const Tensor& a, const Tensor& b);
Tensor Le(const Tensor& a, const Tensor& b);
Tensor Gt(const Tensor& a, const Tensor& b);
Tensor Ge(const Tensor& a, const Tensor& b);
Tensor Eq(const Tensor& a, const Scalar& b);
Tensor Ne(const Tensor& a, const Scalar& b);
Tensor Lt(const Tensor& a, const Scalar& b);
Tensor Le(const Tensor& a, const Scalar& b);
Tensor Gt(const Tensor& a, const Scalar& b);
Tensor Ge(const Tensor& a, const Scalar& b);

// condition ? a : b elementwise; condition is bool; all three broadcast together.
Tensor Where(const Tensor& condition, const Tensor& a, const Tensor& b);
// x with `value` wherever mask (bool, broadcast to x's shape) is true.
Tensor MaskedFill(const Tensor& x, const Tensor& mask, const Scalar& value);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_BINARY_H_
