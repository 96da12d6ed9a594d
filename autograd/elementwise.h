#ifndef EMBER_AUTOGRAD_ELEMENTWISE_H_
#define EMBER_AUTOGRAD_ELEMENTWISE_H_

// Differentiable elementwise functions: the tensor/ops of the same names, recorded for
// backward when an input requires gradients (autograd/engine.h). Binary functions
// broadcast, and the gradient of a broadcast input is summed back to its shape.

#include "tensor/tensor.h"

namespace ember::autograd {

Tensor Neg(const Tensor& x);
Tensor Abs(const Tensor& x);  // d/dx = sign(x), 0 at 0 (as PyTorch)
Tensor Exp(const Tensor& x);
Tensor Log(const Tensor& x);
Tensor Sqrt(const Tensor& x);
Tensor Rsqrt(const Tensor& x);
Tensor Reciprocal(const Tensor& x);
Tensor Square(const Tensor& x);
Tensor Tanh(const Tensor& x);
Tensor Sigmoid(const Tensor& x);
Tensor Relu(const Tensor& x);      // d/dx = [x > 0]
Tensor GeluTanh(const Tensor& x);  // GPT-2's approximation
Tensor GeluErf(const Tensor& x);   // x Phi(x)
Tensor Sin(const Tensor& x);       // d sin x = cos x
Tensor Cos(const Tensor& x);       // d cos x = -sin x
Tensor Pow(const Tensor& x, double exponent);

// Binary functions of two floating dtypes compute in the wider one (bf16 and f16 meet
// in f32), as PyTorch's type promotion; the gradients return in each input's dtype.
Tensor Add(const Tensor& a, const Tensor& b);
Tensor Sub(const Tensor& a, const Tensor& b);
Tensor Mul(const Tensor& a, const Tensor& b);
Tensor Div(const Tensor& a, const Tensor& b);
Tensor Pow(const Tensor& a, const Tensor& b);  // d/db = a^b log a
// Where a and b tie, each gets half the gradient (as PyTorch).
Tensor Maximum(const Tensor& a, const Tensor& b);
Tensor Minimum(const Tensor& a, const Tensor& b);

Tensor Add(const Tensor& a, const Scalar& b);
Tensor Sub(const Tensor& a, const Scalar& b);
Tensor Sub(const Scalar& a, const Tensor& b);
Tensor Mul(const Tensor& a, const Scalar& b);
Tensor Div(const Tensor& a, const Scalar& b);
Tensor Div(const Scalar& a, const Tensor& b);

// condition ? a : b (condition bool; all three broadcast).
Tensor Where(const Tensor& condition, const Tensor& a, const Tensor& b);
// x with `value` where mask (bool, broadcast to x) is true; no gradient flows there.
Tensor MaskedFill(const Tensor& x, const Tensor& mask, const Scalar& value);

}  // namespace ember::autograd

namespace ember {

// Operators, for readable formulas: differentiable (they record only when an operand
// requires gradients, so they cost nothing more otherwise).
inline Tensor operator-(const Tensor& x) { return autograd::Neg(x); }
inline Tensor operator+(const Tensor& a, const Tensor& b) { return autograd::Add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return autograd::Sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return autograd::Mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return autograd::Div(a, b); }
inline Tensor operator+(const Tensor& a, const Scalar& b) { return autograd::Add(a, b); }
inline Tensor operator-(const Tensor& a, const Scalar& b) { return autograd::Sub(a, b); }
inline Tensor operator*(const Tensor& a, const Scalar& b) { return autograd::Mul(a, b); }
inline Tensor operator/(const Tensor& a, const Scalar& b) { return autograd::Div(a, b); }
inline Tensor operator+(const Scalar& a, const Tensor& b) { return autograd::Add(b, a); }
inline Tensor operator-(const Scalar& a, const Tensor& b) { return autograd::Sub(a, b); }
inline Tensor operator*(const Scalar& a, const Tensor& b) { return autograd::Mul(b, a); }
inline Tensor operator/(const Scalar& a, const Tensor& b) { return autograd::Div(a, b); }

}  // namespace ember

#endif  // EMBER_AUTOGRAD_ELEMENTWISE_H_
