#ifndef EMBER_KERNELS_CUDA_CONV_H_
#define EMBER_KERNELS_CUDA_CONV_H_

// The CUDA backend of kernels/cpu/conv.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "kernels/operands.h"
#include "tensor/dtype.h"

namespace ember::kernels::cuda {

using ::ember::kernels::Window2d;

void Conv2dForward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                   const void* x, const void* w, const void* b, void* y);

void Conv2dBackward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                    const void* x, const void* w, const void* dy, void* dx, void* dw, void* db);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_CONV_H_
