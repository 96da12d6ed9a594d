#ifndef EMBER_TENSOR_OPS_REDUCE_H_
#define EMBER_TENSOR_OPS_REDUCE_H_

// Reductions over any set of dimensions (kernels in kernels/reduce.h). `dims` may
// be negative and in any order; an empty `dims` reduces over every dimension. With
// keepdim the reduced dimensions stay as size 1 (so the result broadcasts against the
// input). Floating-point tensors; bf16 and f16 compute in f32. Sums are pairwise.

#include <optional>

#include "tensor/tensor.h"

namespace ember::ops {

Tensor Sum(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
Tensor Mean(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
// Largest / smallest value (NaN if any is NaN); every reduced dimension must be
// non-empty.
Tensor Max(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
Tensor Min(const Tensor& x, IntSpan dims = {}, bool keepdim = false);
// sum((x - mean)^2) / (N - correction): correction 1 is the unbiased estimate
// (torch.var's default), 0 the population variance.
Tensor Var(const Tensor& x, IntSpan dims = {}, int64_t correction = 1, bool keepdim = false);
// x summed down to `shape`, which x's shape broadcasts from (torch's sum_to_size): over
// the leading dimensions x has in excess, and over those where `shape` has size 1. The
// gradient of a broadcast. x itself when the shapes already agree.
Tensor SumToSize(const Tensor& x, IntSpan shape);

// sum(x^2) over every element, accumulated in double (f32 or f64 x; bf16 and f16
// through f32), without a squared copy: a 0-d f64 tensor on x's device (nothing waits
// for a GPU until it is read).
Tensor SumOfSquares(const Tensor& x);

// The index (i64) of the first largest value along `dim`; without a dim, of the
// flattened tensor. Any dtype (integers and bools too).
Tensor ArgMax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_REDUCE_H_
