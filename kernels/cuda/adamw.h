#ifndef EMBER_KERNELS_CUDA_ADAMW_H_
#define EMBER_KERNELS_CUDA_ADAMW_H_

// The CUDA backend of kernels/cpu/adamw.h: the same functions and contracts, argument
// for argument, on device memory (arrays the CPU header marks as host memory stay on
// the host). A build without CUDA links kernels/cuda/no_cuda.cc instead, whose every
// function throws.

#include <cstdint>

#include "kernels/operands.h"
#include "tensor/dtype.h"

namespace ember::kernels::cuda {

using ::ember::kernels::AdamWHyper;

void AdamWStep(DType dtype, int64_t n, void* p, const void* g, void* m, void* v,
               const AdamWHyper& hyper);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_ADAMW_H_
