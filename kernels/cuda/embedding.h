#ifndef EMBER_KERNELS_CUDA_EMBEDDING_H_
#define EMBER_KERNELS_CUDA_EMBEDDING_H_

// The CUDA backend of kernels/cpu/embedding.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::kernels::cuda {

void EmbeddingForward(DType dtype, int64_t n, int64_t dim, const void* weight, const int64_t* ids,
                      void* out);

void EmbeddingBackward(DType dtype, int64_t n, int64_t dim, const int64_t* ids, const void* dout,
                       void* dweight);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_EMBEDDING_H_
