#ifndef EMBER_KERNELS_CUDA_POOL_H_
#define EMBER_KERNELS_CUDA_POOL_H_

// The CUDA backend of kernels/cpu/pool.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "kernels/operands.h"
#include "tensor/dtype.h"

namespace ember::kernels::cuda {

using ::ember::kernels::Window2d;

void MaxPool2dForward(DType dtype, int64_t planes, const Window2d& window, const void* x, void* y,
                      int64_t* argmax);

bool MaxPool2dBackward(DType dtype, int64_t planes, const Window2d& window, const int64_t* argmax,
                       const void* dy, void* dx);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_POOL_H_
