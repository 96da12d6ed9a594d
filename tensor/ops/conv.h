#ifndef EMBER_TENSOR_OPS_CONV_H_
#define EMBER_TENSOR_OPS_CONV_H_

// 2-d convolution on NCHW tensors (kernels in kernels/conv.h), as
// torch.nn.functional.conv2d (groups = 1). f32 and f64; bf16 and f16 compute in f32.

#include <array>
#include <cstdint>

#include "tensor/tensor.h"

namespace ember::ops {

// {height, width} pairs.
struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};  // zeros on each side
  std::array<int64_t, 2> dilation{1, 1};
};

// x: [N, C, H, W]; weight: [O, C, kh, kw]; bias: [O] or undefined.
// Returns [N, O, oh, ow] with oh = (H + 2 pad - dilation (kh - 1) - 1) / stride + 1.
Tensor Conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias,
              const Conv2dParams& params = {});

struct Conv2dGrads {
  Tensor dx;  // undefined unless asked for
  Tensor dweight;
  Tensor dbias;  // undefined unless asked for
};

Conv2dGrads Conv2dBackward(const Tensor& x, const Tensor& weight, const Tensor& dy,
                           const Conv2dParams& params, bool want_dx, bool want_dbias);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_CONV_H_
