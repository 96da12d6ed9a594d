#ifndef EMBER_AUTOGRAD_REDUCE_H_
#define EMBER_AUTOGRAD_REDUCE_H_

// Differentiable reductions (tensor/ops/reduce.h), over any set of dimensions with
// keepdim; an empty `dims` reduces over all of them.

#include "tensor/tensor.h"

namespace ember::autograd {

Tensor Sum(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
Tensor Mean(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
// The gradient goes to the positions holding the extreme value, split evenly among
// ties (as torch.amax / amin).
Tensor Max(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
Tensor Min(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
Tensor Var(const Tensor& x, IntSpan dims = {}, int64_t correction = 1, bool keepdim = false);

}  // namespace ember::autograd

#endif  // EMBER_AUTOGRAD_REDUCE_H_
