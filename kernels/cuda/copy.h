#ifndef EMBER_KERNELS_CUDA_COPY_H_
#define EMBER_KERNELS_CUDA_COPY_H_

// The CUDA backend of kernels/cpu/copy.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace ember::kernels::cuda {

void CopyCast(IntSpan shape, DType src_dtype, const void* src, IntSpan src_strides, DType dst_dtype,
              void* dst, IntSpan dst_strides);

void Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_COPY_H_
