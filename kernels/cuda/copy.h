#ifndef EMBER_KERNELS_CUDA_COPY_H_
#define EMBER_KERNELS_CUDA_COPY_H_

// The CUDA twins of kernels/cpu/copy.h, for the tensor core (Tensor::Fill, CopyFrom),
// declared as kernels.h declares the others.

#include "kernels/cpu/copy.h"

namespace ember::kernels::cuda {

decltype(cpu::CopyCast) CopyCast;
decltype(cpu::Fill) Fill;

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_COPY_H_
