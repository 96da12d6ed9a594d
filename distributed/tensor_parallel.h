#ifndef EMBER_DISTRIBUTED_TENSOR_PARALLEL_H_
#define EMBER_DISTRIBUTED_TENSOR_PARALLEL_H_

// Megatron-LM's two communication functions for tensor parallelism (Shoeybi et al. 2019),
// as autograd functions over the "model" axis' group. A transformer's MLP (and its
// attention, by heads) splits across the group's ranks as
//
//   x (whole on every rank) -> ToTensorParallel -> c_fc column-parallel (each rank its
//   share of the hidden units) -> GELU -> c_proj row-parallel (each rank a partial sum
//   over its share of the inputs) -> FromTensorParallel (the sum) -> + bias
//
// so that each block costs one all-reduce forward and one backward: ToTensorParallel is
// the identity forward and sums the ranks' input gradients backward (each rank's is
// the gradient through its share only); FromTensorParallel sums forward and passes the
// gradient through backward (every rank needs the whole of it). Every rank of the group
// calls them in the same order, as any collective.

#include "distributed/process_group.h"
#include "tensor/tensor.h"

namespace ember::distributed {

// Megatron's f: x forward; the sum over the group's ranks of the gradient backward.
Tensor ToTensorParallel(const Tensor& x, ProcessGroup& group);
// Megatron's g: the sum over the group's ranks of x forward; the gradient backward.
Tensor FromTensorParallel(const Tensor& x, ProcessGroup& group);

}  // namespace ember::distributed

#endif  // EMBER_DISTRIBUTED_TENSOR_PARALLEL_H_
