#ifndef EMBER_KERNELS_SCAN_H_
#define EMBER_KERNELS_SCAN_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// Cumulative sums and products along one dimension (torch.cumsum, torch.cumprod) and the
// product's gradient. Every operand is [outer, n, inner], contiguous; the scan runs along
// n, independently for each (o, k). Outputs are overwritten.
//
// Each (o, k) accumulates in T, in the order of j (NumPy's add.accumulate, PyTorch's CUDA
// kernels), so the result does not depend on the thread count.
#define EMBER_SCAN_KERNELS(X) X(CumulativeSum) X(CumulativeProduct) X(CumulativeProductBackward)

namespace ember::kernels::cpu {

// out[o, i, k] = sum_{j <= i} x[o, j, k]; with reverse, sum_{j >= i} x[o, j, k], which is
// also the gradient of the forward scan: dx = CumulativeSum(dout, reverse = true).
// f32, f64 or i64 (an integer sum wraps as int64 does).
void CumulativeSum(DType dtype, int64_t outer, int64_t n, int64_t inner, bool reverse,
                   const void* x, void* out);

// out[o, i, k] = prod_{j <= i} x[o, j, k]. f32, f64 or i64.
void CumulativeProduct(DType dtype, int64_t outer, int64_t n, int64_t inner, const void* x,
                       void* out);

// The gradient of CumulativeProduct, along each (o, k):
//   dx_i = sum_{j >= i} dout_j prod_{l <= j, l != i} x_l = P_i S_i,
// with P_i = prod_{l < i} x_l (P_0 = 1) and S_i = dout_i + x_{i+1} S_{i+1}
// (S_{n-1} = dout_{n-1}). No division, so it is exact where x has zeros (a zero at l
// leaves only the terms that skip it). O(n): S backwards into dx, then times P forwards.
// f32 or f64.
void CumulativeProductBackward(DType dtype, int64_t outer, int64_t n, int64_t inner, const void* x,
                               const void* dout, void* dx);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_SCAN_KERNELS)

#endif  // EMBER_KERNELS_SCAN_H_
