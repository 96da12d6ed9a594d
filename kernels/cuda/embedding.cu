// kernels/cpu/embedding.h on the GPU. The forward copies rows, one thread per output
// element. The backward splits the ids into kParts classes by id % kParts: block
// (class, column tile) walks all the ids in order, and each of its threads adds
// dout's row i into dweight's row ids[i] at its column when ids[i] is in its class. A
// repeated id therefore sums its rows in the order of i, as on the CPU, with no
// atomics (whose order would vary from run to run). One thread per column walking every
// id (what this replaces) kept 768 threads busy, each with a chain of 8192
// read-modify-writes: forward and backward of 8192 x 768 f32 took 3.71 ms on an H200,
// 1.80 ms now.

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

constexpr int kParts = 256;

// gridDim = (kParts, column tiles of kThreads).
template <typename T>
__global__ void EmbeddingBackwardKernel(int64_t n, int64_t dim, const int64_t* ids, const T* dout,
                                        T* dweight) {
  const int64_t j = blockIdx.y * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= dim) return;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t id = ids[i];  // the same address for the whole block: one broadcast load
    if (id % kParts == blockIdx.x) dweight[id * dim + j] += dout[i * dim + j];
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
    const dim3 grid(kParts, static_cast<unsigned>((dim + internal::kThreads - 1) / internal::kThreads));
    EmbeddingBackwardKernel<<<grid, internal::kThreads>>>(n, dim, ids, static_cast<const T*>(dout),
                                                          static_cast<T*>(dweight));
  });
  EMBER_CUDA_CHECK_LAUNCH("embedding_backward");
}

}  // namespace ember::kernels::cuda
