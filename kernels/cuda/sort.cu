// kernels/sort.h on the GPU: each value becomes an unsigned key that orders as sort.h
// says (NaN the largest, -0 as +0; every bit flipped for descending), CUB's segmented
// radix sort (stable) orders the keys of every row with their positions, and the values
// are gathered from x by those positions, so they keep their exact bits.

#include <cuda_runtime.h>

#include <cub/device/device_segmented_radix_sort.cuh>
#include <limits>

#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/sort.h"

namespace ember::kernels::cuda {
namespace {

using internal::OrderKey;

// keys[i] = OrderKey(x[i]) (flipped for descending), positions[i] = i's place in its row;
// offsets[r] = r n for r <= rows.
template <typename T, typename K>
__global__ void KeysKernel(int64_t rows, int64_t n, bool descending, const T* x, K* keys,
                           int64_t* positions, int* offsets) {
  EMBER_GRID_STRIDE(i, rows * n) {
    const K key = OrderKey(x[i]);
    keys[i] = descending ? ~key : key;
    positions[i] = i % n;
  }
  EMBER_GRID_STRIDE(r, rows + 1) { offsets[r] = static_cast<int>(r * n); }
}

template <typename T>
__global__ void GatherKernel(int64_t rows, int64_t n, const T* x, const int64_t* indices,
                             T* values) {
  EMBER_GRID_STRIDE(i, rows * n) { values[i] = x[(i / n) * n + indices[i]]; }
}

}  // namespace

void SortRows(DType dtype, int64_t rows, int64_t n, bool descending, const void* x, void* values,
              int64_t* indices) {
  if (rows == 0 || n == 0) return;
  EMBER_CHECK(rows * n <= std::numeric_limits<int>::max(), "sort: ", rows * n,
              " elements; at most 2^31 - 1 on a GPU");
  auto sort = [&](auto type) {
    using T = decltype(type);
    using K = decltype(OrderKey(T()));
    int device = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&device), "sort");
    const int64_t count = rows * n;
    const ScopedAllocation keys(device, count * sizeof(K)), sorted_keys(device, count * sizeof(K)),
        positions(device, count * 8), offsets(device, (rows + 1) * 4);
    KeysKernel<<<internal::Blocks(count), internal::kThreads>>>(
        rows, n, descending, static_cast<const T*>(x), keys.as<K>(), positions.as<int64_t>(),
        offsets.as<int>());
    size_t temp_bytes = 0;
    auto run = [&](void* temp) {
      EMBER_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(
                           temp, temp_bytes, keys.as<K>(), sorted_keys.as<K>(),
                           positions.as<int64_t>(), indices, static_cast<int>(count),
                           static_cast<int>(rows), offsets.as<int>(), offsets.as<int>() + 1),
                       "sort");
    };
    run(nullptr);
    const ScopedAllocation temp(device, static_cast<int64_t>(temp_bytes));
    run(temp.as<void>());
    GatherKernel<<<internal::Blocks(count), internal::kThreads>>>(rows, n, static_cast<const T*>(x),
                                                                  indices, static_cast<T*>(values));
  };
  if (dtype == DType::kI64) {
    sort(int64_t());
  } else {
    EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, "sort: dtype ", DTypeName(dtype),
                " is not supported (f32, f64 or i64)");
    internal::DispatchFloat("sort", dtype, sort);
  }
  EMBER_CUDA_CHECK_LAUNCH("sort");
}

}  // namespace ember::kernels::cuda
