#ifndef EMBER_KERNELS_CUDA_LAYERNORM_H_
#define EMBER_KERNELS_CUDA_LAYERNORM_H_

// The CUDA backend of kernels/cpu/layernorm.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::kernels::cuda {

void LayerNormForward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                      const void* bias, double eps, void* y, void* mean, void* rstd);

void LayerNormBackward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                       const void* mean, const void* rstd, const void* dy, void* dx, void* dweight,
                       void* dbias);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_LAYERNORM_H_
