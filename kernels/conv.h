#ifndef EMBER_KERNELS_CONV_H_
#define EMBER_KERNELS_CONV_H_

// 2-d convolution (cross-correlation, as torch.nn.Conv2d) over NCHW images, f32 or
// f64.

#include <cstdint>

#include "core/dtype.h"
#include "kernels/operands.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_CONV_KERNELS(X) X(Conv2dForward) X(Conv2dBackward)

namespace ember::kernels::cpu {

using ::ember::kernels::Window2d;

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

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_CONV_KERNELS)

#endif  // EMBER_KERNELS_CONV_H_
