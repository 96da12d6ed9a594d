// kernels/adamw.h on the GPU: the same per-step constants (AdamWConstants in
// kernels/operands.h) and the same operations per element. Every tensor of the step is
// cut into chunks of kChunk elements and the chunks of all of them form one grid: a
// block finds its tensor in a table of (first block, pointers, constants) copied to the
// device, by binary search, and steps through its chunk. (nvcc may fuse a multiply and
// an add into one FMA, so results can differ from the CPU's in the last bit.)

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/adamw.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"

namespace ember::kernels::cuda {
namespace {

constexpr int64_t kChunk = 8 * internal::kThreads;

template <typename T>
struct Entry {
  int64_t n, first_block;
  T* p;
  const T* g;
  T* m;
  T* v;
  __nv_bfloat16* p_bf16;  // null, or (f32) the updated p rounded to bf16
  AdamWConstants<T> k;
};

template <typename T>
__global__ void AdamWKernel(int64_t count, const Entry<T>* entries) {
  // The last entry whose first block is at or before this one.
  int64_t lo = 0, hi = count - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (entries[mid].first_block <= blockIdx.x) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const Entry<T>& e = entries[lo];
  const AdamWConstants<T> k = e.k;
  const int64_t begin = (blockIdx.x - e.first_block) * kChunk;
  const int64_t end = begin + kChunk < e.n ? begin + kChunk : e.n;
  for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const T gi = e.g[i] * k.grad_scale;
    const T mi = e.m[i] * k.beta1 + gi * k.one_minus_beta1;
    const T vi = e.v[i] * k.beta2 + gi * gi * k.one_minus_beta2;
    const T pi = e.p[i] * k.decay + k.neg_step_size * (mi / (sqrt(vi) / k.bc2_sqrt + k.eps));
    e.p[i] = pi;
    e.m[i] = mi;
    e.v[i] = vi;
    if (e.p_bf16) e.p_bf16[i] = __float2bfloat16_rn(static_cast<float>(pi));
  }
}

}  // namespace

void AdamWStep(DType dtype, int64_t count, const AdamWTensor* tensors) {
  for (int64_t t = 0; t < count; ++t) {
    EMBER_CHECK(tensors[t].hyper.step >= 1, "adamw: step must start at 1, got ",
                tensors[t].hyper.step);
    EMBER_CHECK(!tensors[t].p_bf16 || dtype == DType::kF32,
                "adamw: a bf16 copy of the parameter needs an f32 parameter, not ",
                DTypeName(dtype));
  }
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, "adamw: dtype ", DTypeName(dtype),
              " is not supported (f32 or f64)");
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<Entry<T>> table;  // the tensors with elements, in order
      int64_t blocks = 0;
      for (int64_t t = 0; t < count; ++t) {
        const AdamWTensor& a = tensors[t];
        if (a.n == 0) continue;
        table.push_back({a.n, blocks, static_cast<T*>(a.p), static_cast<const T*>(a.g),
                         static_cast<T*>(a.m), static_cast<T*>(a.v),
                         static_cast<__nv_bfloat16*>(a.p_bf16), AdamWConstants<T>::Of(a.hyper)});
        blocks += (a.n + kChunk - 1) / kChunk;
      }
      if (blocks == 0) return;
      EMBER_CHECK(blocks <= std::numeric_limits<int32_t>::max(), "adamw: ", blocks, " chunks of ",
                  kChunk, " elements; at most 2^31 - 1");
      int device = 0;
      EMBER_CUDA_CHECK(cudaGetDevice(&device), "adamw");
      const int64_t bytes = static_cast<int64_t>(table.size() * sizeof(Entry<T>));
      // Copied in stream order (through pinned memory: the host does not wait), freed
      // in stream order after the launch.
      const ScopedAllocation entries(device, bytes);
      CopyBytes(entries.as<void>(), device, table.data(), kHost, bytes);
      AdamWKernel<<<static_cast<unsigned>(blocks), internal::kThreads>>>(
          static_cast<int64_t>(table.size()), entries.as<Entry<T>>());
    }
  });
  EMBER_CUDA_CHECK_LAUNCH("adamw");
}

}  // namespace ember::kernels::cuda
