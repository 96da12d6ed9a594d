#ifndef EMBER_AUTOGRAD_VIEWS_H_
#define EMBER_AUTOGRAD_VIEWS_H_

// Differentiable views and joins: Tensor's view methods (and tensor/ops/cat.h), recorded
// for backward. The forward shares storage exactly as the Tensor method does; the
// gradient of a view is the output gradient put back in the input's layout.

#include <vector>

#include "tensor/tensor.h"

namespace ember::autograd {

Tensor View(const Tensor& x, IntSpan shape);
Tensor Reshape(const Tensor& x, IntSpan shape);
Tensor Permute(const Tensor& x, IntSpan dims);
Tensor Transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor Slice(const Tensor& x, int64_t dim, int64_t start = 0, int64_t end = Tensor::kEnd,
             int64_t step = 1);
Tensor Narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor Select(const Tensor& x, int64_t dim, int64_t index);
Tensor Expand(const Tensor& x, IntSpan shape);  // gradient: summed over the broadcast
Tensor Squeeze(const Tensor& x);
Tensor Squeeze(const Tensor& x, int64_t dim);
Tensor Unsqueeze(const Tensor& x, int64_t dim);
Tensor Flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor Contiguous(const Tensor& x);
Tensor Clone(const Tensor& x);  // a copy in new memory, whatever x's layout
std::vector<Tensor> Split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> Chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
Tensor Cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor Stack(const std::vector<Tensor>& tensors, int64_t dim = 0);

}  // namespace ember::autograd

#endif  // EMBER_AUTOGRAD_VIEWS_H_
