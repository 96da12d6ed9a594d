#ifndef EMBER_AUTOGRAD_REDUCE_H_
#define EMBER_AUTOGRAD_REDUCE_H_

// Differentiable reductions (tensor/ops/reduce.h), over any set of dimensions with
// keepdim; an empty `dims` reduces over all of them. And the scans and sort along one
// dimension (tensor/ops/scan.h).

#include <utility>

#include "tensor/tensor.h"

namespace ember::autograd {

Tensor Sum(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
Tensor Mean(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
// The gradient goes to the positions holding the extreme value, split evenly among
// ties (as torch.amax / amin).
Tensor Max(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
Tensor Min(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
Tensor Var(const Tensor& x, IntSpan dims = {}, int64_t correction = 1, bool keepdim = false);

// torch.cumsum: the gradient is g summed from the end, dx_i = sum_{j >= i} g_j.
Tensor Cumsum(const Tensor& x, int64_t dim);
// torch.cumprod: the gradient by kernels/scan.h's CumulativeProductBackward (exact
// where x has zeros, no division).
Tensor Cumprod(const Tensor& x, int64_t dim);
// torch.sort: {values, indices}; the gradient to x puts g[..., j, ...] back at
// indices[..., j, ...] along dim (a permutation, so a scatter without collisions).
std::pair<Tensor, Tensor> Sort(const Tensor& x, int64_t dim = -1, bool descending = false);

}  // namespace ember::autograd

#endif  // EMBER_AUTOGRAD_REDUCE_H_
