#include "kernels/cuda/fill_kernel.h"

namespace ember::kernels::cuda::internal {
namespace {

// One thread per element (grid-stride): the linear index i is turned into the
// strided offset by peeling off the innermost dimension first.
template <typename T>
__global__ void FillKernel(T* dst, T value, FillLayout layout) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < layout.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, offset = 0;
    for (int d = layout.ndim - 1; d >= 0; --d) {
      offset += (rest % layout.shape[d]) * layout.strides[d];
      rest /= layout.shape[d];
    }
    dst[offset] = value;
  }
}

template <typename T>
cudaError_t Launch(void* dst, uint64_t bits, const FillLayout& layout) {
  constexpr int kThreads = 256;
  const int64_t blocks = (layout.numel + kThreads - 1) / kThreads;
  const int grid = static_cast<int>(blocks < 65535 ? blocks : 65535);
  FillKernel<T><<<grid, kThreads>>>(static_cast<T*>(dst), static_cast<T>(bits), layout);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchFill(void* dst, int element_bytes, uint64_t bits, const FillLayout& layout) {
  if (layout.numel == 0) return cudaSuccess;
  switch (element_bytes) {
    case 1:
      return Launch<uint8_t>(dst, bits, layout);
    case 2:
      return Launch<uint16_t>(dst, bits, layout);
    case 4:
      return Launch<uint32_t>(dst, bits, layout);
    case 8:
      return Launch<uint64_t>(dst, bits, layout);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace ember::kernels::cuda::internal
