#ifndef EMBER_KERNELS_CUDA_INTERNAL_UNAVAILABLE_H_
#define EMBER_KERNELS_CUDA_INTERNAL_UNAVAILABLE_H_

#include "base/error.h"

namespace ember::kernels::cuda::internal {

// What a CUDA entry point throws in a build without CUDA: that it has no CUDA support,
// and how to get it.
[[noreturn]] inline void Unavailable(const char* what) {
  EMBER_THROW(what, ": this build of ember has no CUDA support (build with --config=cuda)");
}

}  // namespace ember::kernels::cuda::internal

#endif  // EMBER_KERNELS_CUDA_INTERNAL_UNAVAILABLE_H_
