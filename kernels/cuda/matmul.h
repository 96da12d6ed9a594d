#ifndef EMBER_KERNELS_CUDA_MATMUL_H_
#define EMBER_KERNELS_CUDA_MATMUL_H_

// The CUDA backend of kernels/cpu/matmul.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "kernels/operands.h"
#include "tensor/dtype.h"

namespace ember::kernels::cuda {

using ::ember::kernels::MatrixIn;

void Gemm(DType dtype, int64_t m, int64_t k, int64_t n, MatrixIn a, MatrixIn b, void* c,
          int64_t ldc, bool accumulate);

void GemmBatched(DType dtype, int64_t batches, int64_t m, int64_t k, int64_t n, MatrixIn a,
                 const int64_t* a_offsets, MatrixIn b, const int64_t* b_offsets, void* c,
                 int64_t ldc, int64_t c_batch_stride, bool accumulate);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_MATMUL_H_
