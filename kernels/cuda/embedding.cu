// kernels/embedding.h on the GPU.
//
// Forward: block (column tile, row i) copies 16-byte vectors of weight's row ids[i].
//
// Backward, deterministic without atomics: the ids are sorted with their positions
// (CUB's radix sort, which is stable: equal ids keep the order of i), so that each
// distinct id's rows lie together; the block at the first position of a run then adds
// the run's dout rows into dweight's row, column by column, in the order of i, which
// is the CPU's order, so the sums agree bit for bit. (One thread per column walking
// every id, or blocks walking every id for a class of ids, are many times slower.)

#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <limits>

#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/embedding.h"

namespace ember::kernels::cuda {
namespace {

using internal::RowLaunch;
using internal::Vec;

template <int kVec, typename T>
__global__ void EmbeddingForwardKernel(int64_t n, int64_t dim, int64_t vocab, const T* weight,
                                       const int64_t* ids, T* out) {
  const int64_t j = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * kVec;
  if (j >= dim) return;
  for (int64_t i = blockIdx.y; i < n; i += gridDim.y) {
    const int64_t id = ids[i];
    Vec<T, kVec> row;
    if (id < 0 || id >= vocab) {
      for (int e = 0; e < kVec; ++e) row.v[e] = internal::Cast<T>(NAN);
    } else {
      row = *reinterpret_cast<const Vec<T, kVec>*>(weight + id * dim + j);
    }
    *reinterpret_cast<Vec<T, kVec>*>(out + i * dim + j) = row;
  }
}

__global__ void PositionsKernel(int32_t n, int32_t* positions) {
  EMBER_GRID_STRIDE(i, n) { positions[i] = static_cast<int32_t>(i); }
}

// keys: the ids sorted; order: their positions i. Block (column tile, p) owns the run of
// equal keys that starts at p.
template <typename T>
__global__ void EmbeddingBackwardKernel(int64_t n, int64_t dim, int64_t vocab, const int64_t* keys,
                                        const int32_t* order, const T* dout, T* dweight) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= dim) return;
  for (int64_t p = blockIdx.y; p < n; p += gridDim.y) {
    const int64_t id = keys[p];
    if (id < 0 || id >= vocab) continue;       // adds nothing
    if (p > 0 && keys[p - 1] == id) continue;  // inside another block's run
    T sum = dweight[id * dim + j];
    for (int64_t q = p; q < n && keys[q] == id; ++q) sum += dout[order[q] * dim + j];
    dweight[id * dim + j] = sum;
  }
}

}  // namespace

void EmbeddingForward(DType dtype, int64_t n, int64_t dim, int64_t vocab, const void* weight,
                      const int64_t* ids, void* out) {
  if (n == 0 || dim == 0) return;
  internal::VisitDeviceType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int kVec = 16 / sizeof(T);
    auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    if (kVec > 1 && dim % kVec == 0 && aligned(weight) && aligned(out)) {
      const RowLaunch launch(n, dim / kVec);
      EmbeddingForwardKernel<kVec><<<launch.grid, launch.threads>>>(
          n, dim, vocab, static_cast<const T*>(weight), ids, static_cast<T*>(out));
    } else {
      const RowLaunch launch(n, dim);
      EmbeddingForwardKernel<1><<<launch.grid, launch.threads>>>(
          n, dim, vocab, static_cast<const T*>(weight), ids, static_cast<T*>(out));
    }
  });
  EMBER_CUDA_CHECK_LAUNCH("embedding");
}

void EmbeddingBackward(DType dtype, int64_t n, int64_t dim, int64_t vocab, const int64_t* ids,
                       const void* dout, void* dweight) {
  if (n == 0 || dim == 0) return;
  EMBER_CHECK(n <= std::numeric_limits<int32_t>::max(), "embedding_backward: ", n,
              " ids; at most 2^31 - 1");
  internal::DispatchFloat("embedding_backward", dtype, [&](auto type) {
    using T = decltype(type);
    int device = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&device), "embedding_backward");
    const int count = static_cast<int>(n);
    const ScopedAllocation keys(device, n * 8), positions(device, n * 4), order(device, n * 4);
    PositionsKernel<<<internal::Blocks(n), internal::kThreads>>>(count, positions.as<int32_t>());
    size_t sort_bytes = 0;
    EMBER_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, ids, keys.as<int64_t>(),
                                        positions.as<int32_t>(), order.as<int32_t>(), count),
        "embedding_backward: sort");
    const ScopedAllocation sort(device, static_cast<int64_t>(sort_bytes));
    EMBER_CUDA_CHECK(
        cub::DeviceRadixSort::SortPairs(sort.as<void>(), sort_bytes, ids, keys.as<int64_t>(),
                                        positions.as<int32_t>(), order.as<int32_t>(), count),
        "embedding_backward: sort");
    const RowLaunch launch(n, dim);
    EmbeddingBackwardKernel<<<launch.grid, launch.threads>>>(
        n, dim, vocab, keys.as<int64_t>(), order.as<int32_t>(), static_cast<const T*>(dout),
        static_cast<T*>(dweight));
  });
  EMBER_CUDA_CHECK_LAUNCH("embedding_backward");
}

}  // namespace ember::kernels::cuda
