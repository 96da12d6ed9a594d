#ifndef EMBER_KERNELS_BINARY_H_
#define EMBER_KERNELS_BINARY_H_

#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/operands.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
// clang-format off
#define EMBER_BINARY_KERNELS(X)                                                                  \
  X(Add) X(Sub) X(Mul) X(Div) X(Maximum) X(Minimum) X(Pow) X(Eq) X(Ne) X(Lt) X(Le) X(Gt) X(Ge)   \
  X(Where)
// clang-format on

namespace ember::kernels::cpu {

using ::ember::kernels::StridedIn;

// Elementwise binary functions with broadcasting:
//   out[i] = f(a[i], b[i])  for every index i of `shape`;
// a, b: strided inputs of `dtype`; out: contiguous [shape] of `dtype`, overwritten.
// After merging dimensions (internal/strided.h), each row runs the first path that
// fits: both operands contiguous (SIMD), one operand constant along the row (SIMD with
// a broadcast vector: a tensor-scalar op, or a row vector broadcast over rows), or a
// general strided loop. Every path gives the same bits.
// Add, Sub, Mul, Maximum and Minimum take f32, f64, bf16 (SIMD; bf16 read and written
// as bf16, computed in f32, rounded once) and i32, i64, u8, u16; Div and Pow take f32,
// f64 and bf16. Maximum and Minimum propagate NaN, as PyTorch.
void Add(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Sub(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Mul(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Div(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Maximum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Minimum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Pow(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);  // std::pow

// Comparisons of a and b (any dtype but bf16/f16), out: contiguous [shape] of bool.
void Eq(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Ne(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Lt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Le(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Gt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);
void Ge(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out);

// out[i] = condition[i] ? a[i] : b[i]; condition is bool, a and b of `dtype` (any),
// out contiguous [shape] of `dtype`. Masked fill is Where with a broadcast value.
void Where(DType dtype, IntSpan shape, StridedIn condition, StridedIn a, StridedIn b, void* out);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_BINARY_KERNELS)

#endif  // EMBER_KERNELS_BINARY_H_
