#ifndef EMBER_KERNELS_CPU_CONV_H_
#define EMBER_KERNELS_CPU_CONV_H_

// 2-d convolution (cross-correlation, as torch.nn.Conv2d) and max pooling over NCHW
// images, f32 or f64.

#include <cstdint>

#include "tensor/dtype.h"

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

// y[n, o, oy, ox] = b[o] + sum_{c, i, j} w[o, c, i, j] x[n, c, iy(oy, i), ix(ox, j)]
// (padding reads as 0).
// x: [n, c, H, W]; w: [o, c, kh, kw]; b: [o] or null; y: [n, o, oh, ow], overwritten.
//
// As im2col + GEMM: each image is unrolled into columns [c kh kw, oh ow] (row
// (c kh + i) kw + j holds the input each output position multiplies by w[:, c, i, j]),
// and y[n] = w [o, c kh kw] · columns, the columns written straight into the GEMM's
// packed panels (no columns buffer). Images are split across threads.
void Conv2dForward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                   const void* x, const void* w, const void* b, void* y);

// The gradients of Conv2dForward, all overwritten (dx, db may be null: not wanted):
//   dw[o, :] = sum_n dy[n] [o, oh ow] · columns(x[n])^T
//   db[o]    = sum_{n, oy, ox} dy[n, o, oy, ox]
//   dx[n]    = col2im(w^T · dy[n]), col2im being im2col's adjoint: each column entry
//              is added back to the input position it was read from.
// The sum over images runs in a fixed number of parts, so the result does not depend
// on the thread count.
void Conv2dBackward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                    const void* x, const void* w, const void* dy, void* dx, void* dw, void* db);

// y[p, oy, ox] = max over the window of x[p, ., .] (padding never wins),
// argmax[p, oy, ox] = iy * W + ix of that maximum: as PyTorch, the first on ties and
// the last NaN when there is one.
// x: [planes, H, W]; y, argmax: [planes, oh, ow], overwritten. Needs pad <= kernel / 2
// so that every window holds an input (the caller checks).
void MaxPool2dForward(DType dtype, int64_t planes, const Window2d& window, const void* x, void* y,
                      int64_t* argmax);

// dx[p, i] = the sum of dy[p, k] over the k with argmax[p, k] == i, 0 where there is
// none: dx [planes, H, W] is overwritten (zeroed a plane at a time, while it is in
// cache, not in a pass of its own before the scatter). Returns whether every argmax
// entry lies in [0, H W); entries outside are skipped, so that bad indices from a
// caller never write outside dx (the caller reports them).
bool MaxPool2dBackward(DType dtype, int64_t planes, const Window2d& window, const int64_t* argmax,
                       const void* dy, void* dx);

}  // namespace ember::kernels::cpu

#endif  // EMBER_KERNELS_CPU_CONV_H_
