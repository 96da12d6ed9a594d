#ifndef EMBER_TENSOR_OPS_POOL_H_
#define EMBER_TENSOR_OPS_POOL_H_

// 2-d max pooling on NCHW tensors (kernels in kernels/pool.h), as
// torch.nn.functional.max_pool2d (ceil_mode = false). f32 and f64; bf16 and f16
// compute in f32.

#include <array>
#include <cstdint>

#include "tensor/tensor.h"

namespace ember::ops {

struct MaxPool2dParams {
  std::array<int64_t, 2> kernel{2, 2};
  std::array<int64_t, 2> stride{0, 0};   // 0: the kernel size, as PyTorch's default
  std::array<int64_t, 2> padding{0, 0};  // at most half the kernel; padding never wins
  std::array<int64_t, 2> dilation{1, 1};
};

struct MaxPool2dResult {
  Tensor y;        // [N, C, oh, ow]
  Tensor indices;  // i64 [N, C, oh, ow]: iy * W + ix of each maximum (return_indices)
};

// x: [N, C, H, W].
MaxPool2dResult MaxPool2d(const Tensor& x, const MaxPool2dParams& params);

// dx [N, C, H, W] (x_shape) with each dy added at the position its maximum came from.
Tensor MaxPool2dBackward(IntSpan x_shape, const Tensor& indices, const Tensor& dy,
                         const MaxPool2dParams& params);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_POOL_H_
