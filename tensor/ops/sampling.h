#ifndef EMBER_TENSOR_OPS_SAMPLING_H_
#define EMBER_TENSOR_OPS_SAMPLING_H_

// Sampling helpers for generation (kernels in kernels/sampling.h); the greedy
// choice is ArgMax in reduce.h.

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::ops {

struct TopKResult {
  Tensor values;   // x's shape with the last dimension k, largest first
  Tensor indices;  // the same shape, i64
};

// The k largest entries along the last dimension (ties: lower index first).
TopKResult TopK(const Tensor& x, int64_t k);

// One index (i64) per row of probs [..., n], drawn with weights proportional to the
// row (non-negative; need not sum to 1), using one uniform number from `gen` per row.
// A row of all zeros or with a negative or NaN weight throws ember::Error.
Tensor Multinomial(const Tensor& probs, Generator& gen = DefaultGenerator());

// num_samples indices (i64, [rows, num_samples]) for each row of probs [rows, n], drawn
// independently (with replacement) with weights proportional to the row: the row's
// running sums once, then for each draw u = U[0, 1) (53 bits from gen, rows in order,
// a row's draws in order) times the row's total, the first index whose running sum
// exceeds u. O(n + num_samples log n) a row, on the host (probs is read back). Weights
// as Multinomial's: non-negative, not NaN, some positive.
Tensor MultinomialWithReplacement(const Tensor& probs, int64_t num_samples,
                                  Generator& gen = DefaultGenerator());

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_SAMPLING_H_
