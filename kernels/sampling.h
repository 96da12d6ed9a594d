#ifndef EMBER_KERNELS_SAMPLING_H_
#define EMBER_KERNELS_SAMPLING_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_SAMPLING_KERNELS(X) X(TopKRows) X(MultinomialRows)

namespace ember::kernels::cpu {

// Sampling helpers for generation, over the rows of contiguous [rows, n] matrices of
// f32 or f64. (The greedy choice is ArgMaxRows in reduce.h.)

// The k largest entries of each row, largest first; ties keep the lower index first,
// and NaN counts as largest (as torch.topk). values: [rows, k] of dtype; indices:
// int64 [rows, k]; both overwritten. 1 <= k <= n.
void TopKRows(DType dtype, int64_t rows, int64_t n, int64_t k, const void* x, void* values,
              int64_t* indices);

// One draw per row from the categorical distribution with weights probs[r, :]
// (non-negative, any positive total; not necessarily normalised), using the uniform
// number uniform[r] in [0, 1): the first j whose running sum exceeds
// uniform[r] * total (inverse CDF, summed in double). Rows whose weights are all zero
// give -1 (the caller reports it).
void MultinomialRows(DType dtype, int64_t rows, int64_t n, const void* probs, const double* uniform,
                     int64_t* out);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_SAMPLING_KERNELS)

#endif  // EMBER_KERNELS_SAMPLING_H_
