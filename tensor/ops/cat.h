#ifndef EMBER_TENSOR_OPS_CAT_H_
#define EMBER_TENSOR_OPS_CAT_H_

#include <vector>

#include "tensor/tensor.h"

namespace ember::ops {

// torch.cat: the tensors joined along `dim`. They share dtype and device, and their
// sizes agree in every other dimension. The result is a new contiguous tensor.
Tensor Cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// torch.stack: the tensors (all of one shape) joined along a new dimension `dim`.
Tensor Stack(const std::vector<Tensor>& tensors, int64_t dim = 0);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_CAT_H_
