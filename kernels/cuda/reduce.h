#ifndef EMBER_KERNELS_CUDA_REDUCE_H_
#define EMBER_KERNELS_CUDA_REDUCE_H_

// The CUDA backend of kernels/cpu/reduce.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::kernels::cuda {

void SumRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out);

void MaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out);

void MinRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, void* out);

void ArgMaxRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t* out);

void VarRows(DType dtype, int64_t rows, int64_t n, const void* x, int64_t ld, int64_t correction,
             void* out);

double SumSquares(DType dtype, int64_t n, const void* x);

void SumColumns(DType dtype, int64_t n, int64_t cols, const void* x, int64_t ld, void* out);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_REDUCE_H_
