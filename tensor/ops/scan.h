#ifndef EMBER_TENSOR_OPS_SCAN_H_
#define EMBER_TENSOR_OPS_SCAN_H_

// Cumulative sums and products along a dimension (kernels in kernels/scan.h), and
// sorting along a dimension (kernels/sort.h).

#include <cstdint>

#include "tensor/tensor.h"

namespace ember::ops {

// torch.cumsum: out[..., i, ...] = sum over j <= i along dim (with reverse, j >= i: the
// gradient of the forward sum). A floating x keeps its dtype (bf16 and f16 are summed in
// f32 and rounded once); integers and bool give i64, as in PyTorch. A 0-d x is itself.
Tensor Cumsum(const Tensor& x, int64_t dim, bool reverse = false);

// torch.cumprod: out[..., i, ...] = prod over j <= i along dim; dtypes as Cumsum's.
Tensor Cumprod(const Tensor& x, int64_t dim);

// The gradient of Cumprod(x, dim) given dout of x's shape (kernels/scan.h: exact where x
// has zeros), in x's floating dtype.
Tensor CumprodBackward(const Tensor& x, const Tensor& dout, int64_t dim);

struct SortResult {
  Tensor values;   // x's shape and dtype, in order along dim
  Tensor indices;  // i64, x's shape: values = x gathered at indices along dim
};

// torch.sort(x, dim, descending, stable=True): NaN above every number, ties in the order
// of their index. Any real dtype (bf16 and f16 sorted as f32, integers and bool as i64:
// both exact).
SortResult Sort(const Tensor& x, int64_t dim = -1, bool descending = false);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_SCAN_H_
