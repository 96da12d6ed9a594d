#ifndef EMBER_KERNELS_POOL_H_
#define EMBER_KERNELS_POOL_H_

// 2-d max pooling over [planes, H, W] (NCHW images with planes = N C), f32 or f64.

#include <cstdint>

#include "core/dtype.h"
#include "kernels/operands.h"
#include "kernels/twins.h"

// The family's kernels (kernels/twins.h): declared below for the CPU, and as CUDA
// twins at the end.
#define EMBER_POOL_KERNELS(X) X(MaxPool2dForward) X(MaxPool2dBackward)

namespace ember::kernels::cpu {

using ::ember::kernels::Window2d;

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

EMBER_CUDA_TWINS(EMBER_POOL_KERNELS)

#endif  // EMBER_KERNELS_POOL_H_
