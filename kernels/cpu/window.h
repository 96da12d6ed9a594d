#ifndef EMBER_KERNELS_CPU_WINDOW_H_
#define EMBER_KERNELS_CPU_WINDOW_H_

// The sliding window of 2-d convolution (conv.h) and pooling (pool.h) over [H, W]
// planes, and its geometry.

#include <algorithm>
#include <cstdint>

namespace ember::kernels::cpu {

// A sliding window over one [H, W] plane. Output position (oy, ox) reads input rows
// oy*stride_h - pad_h + i*dilation_h for i in [0, kernel_h), likewise for columns;
// positions outside the plane are padding.
struct Window2d {
  int64_t height, width;
  int64_t kernel_h, kernel_w;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;

  // floor((H + 2 pad - dilation (kernel - 1) - 1) / stride) + 1, as PyTorch.
  int64_t out_h() const { return (height + 2 * pad_h - dilation_h * (kernel_h - 1) - 1) / stride_h + 1; }
  int64_t out_w() const { return (width + 2 * pad_w - dilation_w * (kernel_w - 1) - 1) / stride_w + 1; }
};

// The indices k in [0, count) with 0 <= origin + k * step < size, as [begin, end):
// the taps of a window that fall inside the input (origin negative in the padding), or
// the output columns whose tap reads inside the row.
struct IndexRange {
  int64_t begin, end;
};
inline IndexRange InsideRange(int64_t origin, int64_t count, int64_t step, int64_t size) {
  const int64_t begin = std::min(count, origin >= 0 ? 0 : (-origin + step - 1) / step);
  const int64_t end = std::min(count, origin >= size ? 0 : (size - origin + step - 1) / step);
  return {begin, std::max(begin, end)};
}

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_CPU_WINDOW_H_
