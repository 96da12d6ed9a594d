#ifndef EMBER_KERNELS_REDUCE_H_
#define EMBER_KERNELS_REDUCE_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
// clang-format off
#define EMBER_REDUCE_KERNELS(X)                                                                  \
  X(SumRows) X(MaxRows) X(MinRows) X(ArgMaxRows) X(VarRows) X(SumSquares) X(SumColumns)
// clang-format on

namespace ember::kernels::cpu {

// Reductions along each row of a matrix, f32 or f64:
//   x: [rows, n], row r at x + r * ld (elements), contiguous within the row;
//   out: [rows], overwritten.
// Sums are pairwise: blocks of kSumBlock elements summed in SIMD lanes, the block sums
// added as a binary tree, so the error grows with log(n), not n; the tree depends
// only on n (not on threads).
inline constexpr int64_t kSumBlock = 512;
void SumRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out);
// Largest / smallest element (n >= 1); NaN if the row has a NaN, as torch.max.
void MaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out);
void MinRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out);
// Index of the first largest element (n >= 1), or of the first NaN; out: int64 [rows].
void ArgMaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t* out);
// sum((x - mean)^2) / (n - correction), two passes, accumulated in double.
void VarRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t correction,
             void* out);

// *out = sum(x[i]^2) over n contiguous elements, f32 or f64, in double (out: one double
// in the device's memory, so that a GPU's caller need not wait): blocks of kSumBlock
// squared and summed in SIMD lanes (in the input's type), the block sums added in
// double, chunk by chunk in a fixed order, so the result does not depend on the thread
// count. (The gradient norm of clipping, without a squared copy.)
void SumSquares(DType dtype, int64_t n, const void* x, double* out);

// Sums down each column, f32 or f64: x: [n, cols], row i at x + i * ld, contiguous
// within the row; out: [cols], overwritten. Pairwise over rows (a gradient summed
// over a batch: the bias of a linear layer).
void SumColumns(DType dtype, int64_t n, int64_t cols, const void* x, int64_t ld, void* out);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_REDUCE_KERNELS)

#endif  // EMBER_KERNELS_REDUCE_H_
