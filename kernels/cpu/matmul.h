#ifndef EMBER_KERNELS_CPU_MATMUL_H_
#define EMBER_KERNELS_CPU_MATMUL_H_

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::kernels::cpu {

// A matrix operand: element [0, 0] and the strides (in elements) of its rows and
// columns. Any strides work: a transposed matrix is the same memory with the two
// strides swapped.
struct MatrixIn {
  const void* data;
  int64_t row_stride;
  int64_t col_stride;
};

// General matrix multiply, f32 or f64:
//   C = A B            (accumulate = false; C overwritten)
//   C = C + A B        (accumulate = true; for gradients that sum)
// A: [m, k], B: [k, n], C: [m, n] with row stride ldc and column stride 1.
// C must not overlap A or B.
//
// Blocked as BLIS/GotoBLAS do: B is packed in panels of kKc x (2 SIMD vectors) and A
// in slivers of 6 rows x kKc, so that a 6 x 2-vector register tile of C runs over
// contiguous memory with fused multiply-adds; edges are zero-padded. Row blocks of C
// are split across the thread pool. Each C element sums its k products in the same
// order whatever the thread count, so results do not depend on it.
void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate);

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_CPU_MATMUL_H_
