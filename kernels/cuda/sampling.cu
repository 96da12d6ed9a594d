// kernels/cpu/sampling.h on the GPU, for generation (a few rows at a time).
// TopKRows: one block per row picks k times the best entry after the last one picked,
// in the order "NaN first, then larger, then lower index" (torch.topk's), each pick
// a block reduction: O(k n) work, no sort and no scratch memory.
// MultinomialRows: one thread per row scans its weights in order, with the running
// sum in double, exactly as the CPU does, so both pick the same index.

#include <cuda_runtime.h>

#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/cuda/kernels.h"

namespace ember::kernels::cuda {
namespace {

using internal::kThreads;
using internal::VisitFloat;

// Whether (va, ia) comes before (vb, ib) in top-k order; an index of -1 is "none".
template <typename T>
__device__ bool Before(T va, int64_t ia, T vb, int64_t ib) {
  if (ia < 0) return false;
  if (ib < 0) return true;
  const bool a_nan = va != va, b_nan = vb != vb;
  if (a_nan != b_nan) return a_nan;
  if (!a_nan && va != vb) return va > vb;
  return ia < ib;
}

// blockDim.x == kThreads.
template <typename T>
__global__ void TopKKernel(int64_t rows, int64_t n, int64_t k, const T* x, T* values,
                           int64_t* indices) {
  __shared__ T best_values[kThreads];
  __shared__ int64_t best_indices[kThreads];
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* row = x + r * n;
    T last = 0;
    int64_t last_index = -1;  // the previous pick; the next must come after it
    for (int64_t pick = 0; pick < k; ++pick) {
      T best = 0;
      int64_t best_index = -1;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const bool after = last_index < 0 || Before(last, last_index, row[j], j);
        if (after && Before(row[j], j, best, best_index)) {
          best = row[j];
          best_index = j;
        }
      }
      best_values[threadIdx.x] = best;
      best_indices[threadIdx.x] = best_index;
      __syncthreads();
      for (int half = kThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
          const int other = threadIdx.x + half;
          if (Before(best_values[other], best_indices[other], best_values[threadIdx.x],
                     best_indices[threadIdx.x])) {
            best_values[threadIdx.x] = best_values[other];
            best_indices[threadIdx.x] = best_indices[other];
          }
        }
        __syncthreads();
      }
      last = best_values[0];
      last_index = best_indices[0];
      if (threadIdx.x == 0) {
        values[r * k + pick] = last;
        indices[r * k + pick] = last_index;
      }
      __syncthreads();  // before the next pick overwrites the shared arrays
    }
  }
}

// The first j whose running sum exceeds uniform[r] * total; -1 for a row of zeros.
template <typename T>
__global__ void MultinomialKernel(int64_t rows, int64_t n, const T* probs, const double* uniform,
                                  int64_t* out) {
  EMBER_GRID_STRIDE(r, rows) {
    const T* row = probs + r * n;
    double total = 0;
    for (int64_t j = 0; j < n; ++j) total += row[j];
    int64_t picked = -1;
    if (total > 0) {
      const double target = uniform[r] * total;
      double running = 0;
      for (int64_t j = 0; j < n; ++j) {
        running += row[j];
        if (row[j] > 0) picked = j;  // the last positive entry catches rounding at the top
        if (row[j] > 0 && running > target) break;
      }
    }
    out[r] = picked;
  }
}

}  // namespace

void TopKRows(DType dtype, int64_t rows, int64_t n, int64_t k, const void* x, void* values,
              int64_t* indices) {
  if (rows == 0 || k == 0) return;
  VisitFloat("topk", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    TopKKernel<<<internal::RowBlocks(rows), kThreads>>>(rows, n, k, static_cast<const T*>(x),
                                                        static_cast<T*>(values), indices);
  });
  EMBER_CUDA_CHECK_LAUNCH("topk");
}

void MultinomialRows(DType dtype, int64_t rows, int64_t n, const void* probs, const double* uniform,
                     int64_t* out) {
  if (rows == 0) return;
  // The uniforms come from the host's generator: one small copy to the device.
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), "multinomial");
  const int64_t bytes = rows * static_cast<int64_t>(sizeof(double));
  void* device_uniform = Allocate(device, bytes);
  cudaError_t error = cudaMemcpy(device_uniform, uniform, bytes, cudaMemcpyHostToDevice);
  if (error == cudaSuccess) {
    VisitFloat("multinomial", dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      MultinomialKernel<<<internal::Blocks(rows), kThreads>>>(
          rows, n, static_cast<const T*>(probs), static_cast<const double*>(device_uniform), out);
    });
    error = cudaGetLastError();
  }
  Deallocate(device, device_uniform, bytes);  // stream order keeps it alive for the kernel
  EMBER_CUDA_CHECK(error, "multinomial");
}

}  // namespace ember::kernels::cuda
