#ifndef EMBER_KERNELS_CUDA_INTERNAL_CHECK_H_
#define EMBER_KERNELS_CUDA_INTERNAL_CHECK_H_

// CUDA's error codes as ember::Error, for the host side of kernels/cuda (CUDA builds
// only).

#include <cuda_runtime.h>

#include "base/error.h"

// Throws ember::Error naming `what` and CUDA's message unless `call` returned
// cudaSuccess:  EMBER_CUDA_CHECK(cudaMemcpy(...), "copy to host");
#define EMBER_CUDA_CHECK(call, ...)                                          \
  do {                                                                       \
    const cudaError_t ember_cuda_error_ = (call);                            \
    EMBER_CHECK(ember_cuda_error_ == cudaSuccess, __VA_ARGS__,               \
                ": CUDA error: ", cudaGetErrorName(ember_cuda_error_), " (", \
                cudaGetErrorString(ember_cuda_error_), ")");                 \
  } while (0)

// After a kernel launch: a bad launch configuration shows at once (errors inside the
// kernel show at the next synchronizing call).
#define EMBER_CUDA_CHECK_LAUNCH(...) EMBER_CUDA_CHECK(cudaGetLastError(), __VA_ARGS__)

#endif  // EMBER_KERNELS_CUDA_INTERNAL_CHECK_H_
