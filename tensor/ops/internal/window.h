#ifndef EMBER_TENSOR_OPS_INTERNAL_WINDOW_H_
#define EMBER_TENSOR_OPS_INTERNAL_WINDOW_H_

// The sliding window of convolution and pooling, from an op's parameters, checked.

#include <array>
#include <cstdint>

#include "base/error.h"
#include "core/shape.h"
#include "kernels/operands.h"

namespace ember::ops::internal {

inline void CheckPairs(const char* op, const std::array<int64_t, 2>& stride,
                       const std::array<int64_t, 2>& padding,
                       const std::array<int64_t, 2>& dilation) {
  for (int d = 0; d < 2; ++d) {
    EMBER_CHECK(stride[d] >= 1 && padding[d] >= 0 && dilation[d] >= 1, op,
                ": stride and dilation must be positive and padding non-negative, got stride (",
                stride[0], ", ", stride[1], "), padding (", padding[0], ", ", padding[1],
                "), dilation (", dilation[0], ", ", dilation[1], ")");
  }
}

// The window of params over an input of shape [N, C, H, W], checked to give at least
// one output.
inline kernels::Window2d MakeWindow(const char* op, IntSpan x, int64_t kh, int64_t kw,
                                    const std::array<int64_t, 2>& stride,
                                    const std::array<int64_t, 2>& padding,
                                    const std::array<int64_t, 2>& dilation) {
  EMBER_CHECK(x.size() == 4, op, ": expected an input [N, C, H, W], got ", ShapeToString(x));
  EMBER_CHECK(kh >= 1 && kw >= 1, op, ": the kernel must be at least 1x1, got ", kh, "x", kw);
  CheckPairs(op, stride, padding, dilation);
  const kernels::Window2d window{x[2],      x[3],       kh,         kw,          stride[0],
                                 stride[1], padding[0], padding[1], dilation[0], dilation[1]};
  EMBER_CHECK(window.out_h() >= 1 && window.out_w() >= 1, op, ": the input ", ShapeToString(x),
              " padded by (", padding[0], ", ", padding[1], ") is smaller than the kernel ", kh,
              "x", kw, " dilated by (", dilation[0], ", ", dilation[1], ")");
  return window;
}

}  // namespace ember::ops::internal

#endif  // EMBER_TENSOR_OPS_INTERNAL_WINDOW_H_
