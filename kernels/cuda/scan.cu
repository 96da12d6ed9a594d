// kernels/scan.h on the GPU.
//
// A column (o, k) of [outer, n, inner] with inner > 1 is one thread stepping along j, in
// the order of j as on the CPU (a warp reads 32 neighbouring k of a row at a time), so
// the two agree bit for bit. A row (inner = 1) is one block: each of its kThreads
// threads scans a contiguous chunk of the row, the chunks' totals are scanned in shared
// memory, and each thread rescans its chunk from its offset. That order is fixed, so
// the result is deterministic, but it is not the CPU's: the two differ by rounding. (A
// whole row on one thread made top-p sampling's cumulative sum over a 50257-token
// vocabulary a long serial chain.) The product's gradient runs one thread per column
// for either layout.

#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/scan.h"

namespace ember::kernels::cuda {
namespace {

using internal::kThreads;

struct Plus {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
  template <typename T>
  static constexpr T kIdentity = T(0);
};
struct Times {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {  // wraps, as on the CPU
      return static_cast<T>(static_cast<unsigned long long>(a) *
                            static_cast<unsigned long long>(b));
    } else {
      return a * b;
    }
  }
  template <typename T>
  static constexpr T kIdentity = T(1);
};

// One thread per column (o, k): out[j] = op(out[j -/+ 1], x[j]) along j.
template <typename T, typename Op>
__global__ void ScanColumnsKernel(int64_t outer, int64_t n, int64_t inner, bool reverse, const T* x,
                                  T* out, Op op) {
  EMBER_GRID_STRIDE(c, outer * inner) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    T acc = Op::template kIdentity<T>;
    for (int64_t s = 0; s < n; ++s) {
      const int64_t at = base + (reverse ? n - 1 - s : s) * inner;
      acc = s == 0 ? x[at] : op(acc, x[at]);
      out[at] = acc;
    }
  }
}

// One block (kThreads threads) per row of n (inner = 1).
template <typename T, typename Op>
__global__ void ScanRowsKernel(int64_t rows, int64_t n, bool reverse, const T* x, T* out, Op op) {
  __shared__ T offsets[kThreads];
  const int64_t chunk = (n + kThreads - 1) / kThreads;
  const int64_t begin = threadIdx.x * chunk, end = begin + chunk < n ? begin + chunk : n;
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* row = x + r * n;
    T* out_row = out + r * n;
    auto at = [&](int64_t s) { return reverse ? n - 1 - s : s; };
    T total = Op::template kIdentity<T>;
    for (int64_t s = begin; s < end; ++s) total = s == begin ? row[at(s)] : op(total, row[at(s)]);
    offsets[threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.x == 0) {  // exclusive scan of the chunks' totals
      T running = Op::template kIdentity<T>;
      for (int t = 0; t < kThreads; ++t) {
        const T chunk_total = offsets[t];
        offsets[t] = running;
        if (static_cast<int64_t>(t) * chunk < n)
          running = t == 0 ? chunk_total : op(running, chunk_total);
      }
    }
    __syncthreads();
    T acc = offsets[threadIdx.x];
    for (int64_t s = begin; s < end; ++s) {
      acc = threadIdx.x == 0 && s == begin ? row[at(s)] : op(acc, row[at(s)]);
      out_row[at(s)] = acc;
    }
    __syncthreads();  // offsets is rewritten for the next row
  }
}

template <typename Op>
void Scan(const char* name, DType dtype, int64_t outer, int64_t n, int64_t inner, bool reverse,
          const void* x, void* out) {
  if (outer == 0 || n == 0 || inner == 0) return;
  auto launch = [&](auto type) {
    using T = decltype(type);
    if (inner == 1) {
      ScanRowsKernel<<<internal::RowBlocks(outer), kThreads>>>(
          outer, n, reverse, static_cast<const T*>(x), static_cast<T*>(out), Op());
    } else {
      ScanColumnsKernel<<<internal::Blocks(outer * inner), kThreads>>>(
          outer, n, inner, reverse, static_cast<const T*>(x), static_cast<T*>(out), Op());
    }
  };
  if (dtype == DType::kI64) {
    launch(int64_t());
  } else {
    EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, name, ": dtype ", DTypeName(dtype),
                " is not supported (f32, f64 or i64)");
    internal::DispatchFloat(name, dtype, launch);
  }
  EMBER_CUDA_CHECK_LAUNCH(name);
}

// One thread per column: S backwards into dx, then times P forwards (scan.h).
template <typename T>
__global__ void CumprodBackwardKernel(int64_t outer, int64_t n, int64_t inner, const T* x,
                                      const T* dout, T* dx) {
  EMBER_GRID_STRIDE(c, outer * inner) {
    const int64_t base = (c / inner) * n * inner + c % inner;
    T s = dout[base + (n - 1) * inner];
    dx[base + (n - 1) * inner] = s;
    for (int64_t j = n - 2; j >= 0; --j) {
      s = fma(x[base + (j + 1) * inner], s, dout[base + j * inner]);
      dx[base + j * inner] = s;
    }
    T p = 1;
    for (int64_t j = 0; j < n; ++j) {
      dx[base + j * inner] *= p;
      p *= x[base + j * inner];
    }
  }
}

}  // namespace

void CumulativeSum(DType dtype, int64_t outer, int64_t n, int64_t inner, bool reverse,
                   const void* x, void* out) {
  Scan<Plus>("cumsum", dtype, outer, n, inner, reverse, x, out);
}

void CumulativeProduct(DType dtype, int64_t outer, int64_t n, int64_t inner, const void* x,
                       void* out) {
  Scan<Times>("cumprod", dtype, outer, n, inner, /*reverse=*/false, x, out);
}

void CumulativeProductBackward(DType dtype, int64_t outer, int64_t n, int64_t inner, const void* x,
                               const void* dout, void* dx) {
  if (outer == 0 || n == 0 || inner == 0) return;
  internal::DispatchFloat("cumprod_backward", dtype, [&](auto type) {
    using T = decltype(type);
    CumprodBackwardKernel<<<internal::Blocks(outer * inner), kThreads>>>(
        outer, n, inner, static_cast<const T*>(x), static_cast<const T*>(dout),
        static_cast<T*>(dx));
  });
  EMBER_CUDA_CHECK_LAUNCH("cumprod_backward");
}

}  // namespace ember::kernels::cuda
