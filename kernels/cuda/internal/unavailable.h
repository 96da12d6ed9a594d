#ifndef EMBER_KERNELS_CUDA_INTERNAL_UNAVAILABLE_H_
#define EMBER_KERNELS_CUDA_INTERNAL_UNAVAILABLE_H_

#include "base/error.h"

namespace ember::kernels::cuda::internal {

// What a CUDA kernel that is not there throws: without --config=cuda, that this build
// has no CUDA support and how to get it; with it (EMBER_CUDA defined), that the CUDA
// backend has no such kernel yet.
[[noreturn]] inline void Unavailable(const char* kernel) {
#ifdef EMBER_CUDA
  EMBER_THROW(kernel, ": ember's CUDA backend has no kernel for this op yet (it runs on the CPU)");
#else
  EMBER_THROW(kernel, ": this build of ember has no CUDA support (build with --config=cuda)");
#endif
}

}  // namespace ember::kernels::cuda::internal

#endif  // EMBER_KERNELS_CUDA_INTERNAL_UNAVAILABLE_H_
