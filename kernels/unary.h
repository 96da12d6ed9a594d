#ifndef EMBER_KERNELS_UNARY_H_
#define EMBER_KERNELS_UNARY_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
// clang-format off
#define EMBER_UNARY_KERNELS(X)                                                                   \
  X(Neg) X(Abs) X(Exp) X(Log) X(Sqrt) X(Rsqrt) X(Reciprocal) X(Square) X(Tanh) X(Sigmoid)        \
  X(Relu) X(GeluTanh) X(GeluErf) X(PowScalar) X(ReluBackward) X(GeluTanhBackward)                \
  X(GeluErfBackward) X(TanhBackward) X(SigmoidBackward) X(Sin) X(Cos)
// clang-format on

namespace ember::kernels::cpu {

// Elementwise functions on contiguous arrays of n elements of `dtype` (f32, f64, or
// bf16: read and written as bf16, computed in f32, rounded once at the end):
//   out[i] = f(in[i]),  in: [n], out: [n], overwritten; out may be in (in place).
// Every element goes through the same SIMD code (the tail through a padded vector),
// so results do not depend on n or on the thread split. Large n is split across
// the thread pool.
void Neg(DType dtype, int64_t n, const void* in, void* out);         // -x
void Abs(DType dtype, int64_t n, const void* in, void* out);         // |x|
void Exp(DType dtype, int64_t n, const void* in, void* out);         // e^x
void Log(DType dtype, int64_t n, const void* in, void* out);         // ln x
void Sqrt(DType dtype, int64_t n, const void* in, void* out);        // sqrt(x)
void Rsqrt(DType dtype, int64_t n, const void* in, void* out);       // 1 / sqrt(x)
void Reciprocal(DType dtype, int64_t n, const void* in, void* out);  // 1 / x
void Square(DType dtype, int64_t n, const void* in, void* out);      // x^2
void Tanh(DType dtype, int64_t n, const void* in, void* out);        // tanh x
void Sigmoid(DType dtype, int64_t n, const void* in, void* out);     // 1 / (1 + e^-x)
void Relu(DType dtype, int64_t n, const void* in, void* out);        // max(x, 0); NaN stays NaN
// GELU, tanh form (GPT-2's): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
// computed as the identical x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)).
void GeluTanh(DType dtype, int64_t n, const void* in, void* out);
// GELU, exact form: x Phi(x) = 0.5 x erfc(-x / sqrt(2)) (erfc, not 1 + erf, so that the
// left tail does not cancel). A scalar loop in double: accurate to f32's last bit, and
// not on GPT-2's path.
void GeluErf(DType dtype, int64_t n, const void* in, void* out);
// x^exponent. Exponents 2, 3, 0.5, -0.5, -1, 1 and 0 use exact SIMD forms (as
// PyTorch does); any other uses std::pow.
void PowScalar(DType dtype, int64_t n, const void* in, double exponent, void* out);
// sin x and cos x, in double then rounded once: correct over every range of x (SIMD
// sines reduce the argument accurately only within a bounded range), and off the hot
// paths (positional encodings are made once).
void Sin(DType dtype, int64_t n, const void* in, void* out);
void Cos(DType dtype, int64_t n, const void* in, void* out);

// Backward forms, for gradients that need more than one composed op:
//   grad_in[i] = grad_out[i] * f'(.)    all [n]; grad_in overwritten, may alias either input.
// From the forward's input x:
void ReluBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in);
// d/dx GELU_tanh = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2),
// t = tanh(sqrt(2/pi) (x + 0.044715 x^3)).
void GeluTanhBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in);
// d/dx GELU_erf = Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi).
void GeluErfBackward(DType dtype, int64_t n, const void* x, const void* grad_out, void* grad_in);
// From the forward's output y:
void TanhBackward(DType dtype, int64_t n, const void* y, const void* grad_out,
                  void* grad_in);  // 1 - y^2
void SigmoidBackward(DType dtype, int64_t n, const void* y, const void* grad_out,
                     void* grad_in);  // y (1 - y)

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_UNARY_KERNELS)

#endif  // EMBER_KERNELS_UNARY_H_
