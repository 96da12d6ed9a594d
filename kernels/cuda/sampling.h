#ifndef EMBER_KERNELS_CUDA_SAMPLING_H_
#define EMBER_KERNELS_CUDA_SAMPLING_H_

// The CUDA backend of kernels/cpu/sampling.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::kernels::cuda {

void TopKRows(DType dtype, int64_t rows, int64_t n, int64_t k, const void* x, void* values,
              int64_t* indices);

void MultinomialRows(DType dtype, int64_t rows, int64_t n, const void* probs, const double* uniform,
                     int64_t* out);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_SAMPLING_H_
