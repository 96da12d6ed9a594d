#ifndef EMBER_KERNELS_CUDA_SOFTMAX_H_
#define EMBER_KERNELS_CUDA_SOFTMAX_H_

// The CUDA backend of kernels/cpu/softmax.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::kernels::cuda {

void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y);

void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y);

void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy, void* dx);

void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx);

void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp);

void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_SOFTMAX_H_
