// kernels/cpu/embedding.h on the GPU. The forward copies rows, one thread per output
// element. The backward gives each thread one column and walks the ids in order,
// adding dout's row into dweight's: a repeated id sums its rows in the order of i,
// as on the CPU, with no atomics (whose order would vary from run to run).

#include <cuda_runtime.h>

#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/cuda/kernels.h"

namespace ember::kernels::cuda {
namespace {

template <typename T>
__global__ void EmbeddingForwardKernel(int64_t n, int64_t dim, const T* weight, const int64_t* ids,
                                       T* out) {
  EMBER_GRID_STRIDE(i, n * dim) { out[i] = weight[ids[i / dim] * dim + i % dim]; }
}

template <typename T>
__global__ void EmbeddingBackwardKernel(int64_t n, int64_t dim, const int64_t* ids, const T* dout,
                                        T* dweight) {
  EMBER_GRID_STRIDE(j, dim) {
    for (int64_t i = 0; i < n; ++i) dweight[ids[i] * dim + j] += dout[i * dim + j];
  }
}

}  // namespace

void EmbeddingForward(DType dtype, int64_t n, int64_t dim, const void* weight, const int64_t* ids,
                      void* out) {
  if (n == 0 || dim == 0) return;
  internal::VisitDeviceType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    EmbeddingForwardKernel<<<internal::Blocks(n * dim), internal::kThreads>>>(
        n, dim, static_cast<const T*>(weight), ids, static_cast<T*>(out));
  });
  EMBER_CUDA_CHECK_LAUNCH("embedding");
}

void EmbeddingBackward(DType dtype, int64_t n, int64_t dim, const int64_t* ids, const void* dout,
                       void* dweight) {
  if (n == 0 || dim == 0) return;
  internal::VisitFloat("embedding_backward", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    EmbeddingBackwardKernel<<<internal::Blocks(dim), internal::kThreads>>>(
        n, dim, ids, static_cast<const T*>(dout), static_cast<T*>(dweight));
  });
  EMBER_CUDA_CHECK_LAUNCH("embedding_backward");
}

}  // namespace ember::kernels::cuda
