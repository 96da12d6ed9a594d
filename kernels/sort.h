#ifndef EMBER_KERNELS_SORT_H_
#define EMBER_KERNELS_SORT_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// Sorting rows (torch.sort, torch.argsort); torch.topk's partial sort is TopKRows in
// kernels/sampling.h.
#define EMBER_SORT_KERNELS(X) X(SortRows)

namespace ember::kernels::cpu {

// Each row of x [rows, n] (contiguous) in order: values[r, i] = x[r, indices[r, i]],
// ascending (descending if asked). The order is torch.sort's with stable=True: NaN
// counts as larger than every number (last ascending, first descending), -0 equals +0,
// and equal values keep the order they had (so ties are listed by index either way).
// f32, f64 or i64. values [rows, n] and indices (i64, [rows, n]) are overwritten.
void SortRows(DType dtype, int64_t rows, int64_t n, bool descending, const void* x, void* values,
              int64_t* indices);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_SORT_KERNELS)

#endif  // EMBER_KERNELS_SORT_H_
