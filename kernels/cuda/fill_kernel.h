#ifndef EMBER_KERNELS_CUDA_FILL_KERNEL_H_
#define EMBER_KERNELS_CUDA_FILL_KERNEL_H_

// The device side of fill.h, kept free of ember's host headers so that nvcc compiles
// only CUDA and the standard library.

#include <cuda_runtime.h>

#include <cstdint>

namespace ember::kernels::cuda::internal {

inline constexpr int kMaxFillDims = 8;

struct FillLayout {
  int ndim;
  int64_t shape[kMaxFillDims];    // sizes, outermost first
  int64_t strides[kMaxFillDims];  // in elements
  int64_t numel;
};

// Writes the `element_bytes`-wide bit pattern `bits` (1, 2, 4 or 8 bytes) to every
// element of `layout` at dst.
cudaError_t LaunchFill(void* dst, int element_bytes, uint64_t bits, const FillLayout& layout);

}  // namespace ember::kernels::cuda::internal

#endif  // EMBER_KERNELS_CUDA_FILL_KERNEL_H_
