// kernels/softmax.h on the GPU: one warp per row for rows of up to 1024, one block
// per row for longer ones (grid-stride over rows). Each row's maximum m is exact;
// s = sum_j exp(x_j - m) and the other row sums accumulate in double (a warp's lanes
// first sum their 32 or fewer terms in the dtype); elementwise results are computed in
// the dtype (bf16 in float, rounded once), as on the CPU.

#include <cuda_runtime.h>

#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/softmax.h"

namespace ember::kernels::cuda {
namespace {

using internal::BlockReduce;
using internal::Compute;
using internal::kThreads;
using internal::Narrow;
using internal::RowBlocks;
using internal::Widen;

// The row's maximum m and s = sum_j exp(x_j - m), known to every thread.
template <typename T, typename C = Compute<T>>
__device__ void RowMaxAndSum(const T* x, int64_t n, C* m, double* s) {
  C max = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    max = internal::MaxOp{}(max, internal::Widen(x[j]));
  }
  *m = BlockReduce(max, internal::MaxOp{}, C(-INFINITY));
  double sum = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += exp(internal::Widen(x[j]) - *m);
  *s = BlockReduce(sum, internal::SumOp{}, 0.0);
}

// Elements of T (bf16 widened to float: C), results narrowed to T once.
template <typename T, bool kLog, typename C = Compute<T>>
__global__ void SoftmaxKernel(int64_t rows, int64_t n, const T* x, T* y) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    C m;
    double s;
    RowMaxAndSum(xr, n, &m, &s);
    if (kLog) {
      const C log_s = static_cast<C>(log(s));
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        yr[j] = Narrow<T>((Widen(xr[j]) - m) - log_s);
      }
    } else {
      const C sum = static_cast<C>(s);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        yr[j] = Narrow<T>(exp(Widen(xr[j]) - m) / sum);
      }
    }
  }
}

// softmax: dx = y (dy - sum_j dy_j y_j); log-softmax: dx = dy - exp(y) sum_j dy_j.
template <typename T, bool kLog, typename C = Compute<T>>
__global__ void SoftmaxBackwardKernel(int64_t rows, int64_t n, const T* y, const T* dy, T* dx) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* yr = y + r * n;
    const T* dyr = dy + r * n;
    T* dxr = dx + r * n;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const C g = Widen(dyr[j]);
      sum += kLog ? static_cast<double>(g) : static_cast<double>(g) * Widen(yr[j]);
    }
    const C total = static_cast<C>(BlockReduce(sum, internal::SumOp{}, 0.0));
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const C yv = Widen(yr[j]), g = Widen(dyr[j]);
      dxr[j] = Narrow<T>(kLog ? g - exp(yv) * total : yv * (g - total));
    }
  }
}

// Rows of n <= 32 kPer: one warp a row, lane l holding elements l, l + 32, ... in
// registers, so x is read once and y written once, and the row sums are shuffles with
// no block barrier (a block a row read x three times, between barriers: 2.3x PyTorch's
// time for 98304 rows of 1024 on an H200). A lane reduces its kPer values as a tree in
// the dtype (an error of log2(kPer) roundings, at most 5) and the lanes add their
// partial sums in double: a conversion and a double add per element, in a chain of 32,
// made the first version of this kernel slower than the block a row it replaced.
constexpr int kWarpRowsMax = 1024;

// op over v[0..K) as a balanced tree (K a power of two), leaving v as it is: the first
// level goes into K / 2 registers, which the next levels overwrite. The widths are
// template arguments, so that every index is a constant and nothing leaves registers.
template <int kWidth, int K, typename T, typename Op>
__device__ T TreeReduceFrom(T (&v)[K], Op op) {
  if constexpr (kWidth == 0) {
    return v[0];
  } else {
#pragma unroll
    for (int i = 0; i < kWidth; ++i) v[i] = op(v[i], v[i + kWidth]);
    return TreeReduceFrom<kWidth / 2>(v, op);
  }
}
template <int K, typename T, typename Op>
__device__ T TreeReduce(const T (&v)[K], Op op) {
  if constexpr (K == 1) {
    return v[0];
  } else {
    T half[K / 2];
#pragma unroll
    for (int i = 0; i < K / 2; ++i) half[i] = op(v[i], v[i + K / 2]);
    return TreeReduceFrom<K / 4>(half, op);
  }
}

// Four blocks an SM for f32's softmax (64 registers a thread: the row's 32 values and
// 16 for the first level of a tree), rather than the three that 80 registers allowed:
// more rows' loads in flight. Log-softmax holds more (two for it), f64 twice as much
// (no bound).
template <typename T, bool kLog>
inline constexpr int kSoftmaxBlocksPerSm = std::is_same_v<Compute<T>, float> ? (kLog ? 2 : 4) : 1;

// The row in registers of C (bf16 widened to float), results narrowed to T once.
template <typename T, int kPer, bool kLog, typename C = Compute<T>>
__global__ void __launch_bounds__(kThreads, (kSoftmaxBlocksPerSm<T, kLog>))
    SoftmaxWarpKernel(int64_t rows, int64_t n, const T* x, T* y) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = gridDim.x * static_cast<int64_t>(blockDim.x / 32);
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32; r < rows;
       r += warps) {
    const T* xr = x + r * n;
    C v[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int64_t j = lane + 32 * i;
      v[i] = j < n ? Widen(xr[j]) : C(-INFINITY);
    }
    const C m = internal::WarpReduce(TreeReduce(v, internal::MaxOp{}), internal::MaxOp{});
    double s;
    if constexpr (kLog) {  // keeps x - m, sums its exponentials
      C e[kPer];
#pragma unroll
      for (int i = 0; i < kPer; ++i) {
        v[i] -= m;
        e[i] = lane + 32 * i < n ? exp(v[i]) : C(0);
      }
      s = static_cast<double>(TreeReduce(e, internal::SumOp{}));
    } else {  // keeps e^(x - m)
#pragma unroll
      for (int i = 0; i < kPer; ++i) v[i] = lane + 32 * i < n ? exp(v[i] - m) : C(0);
      s = static_cast<double>(TreeReduce(v, internal::SumOp{}));
    }
    s = internal::WarpReduce(s, internal::SumOp{});
    const C log_s = static_cast<C>(log(s)), total = static_cast<C>(s);
    T* yr = y + r * n;
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int64_t j = lane + 32 * i;
      if (j < n) yr[j] = Narrow<T>(kLog ? v[i] - log_s : v[i] / total);
    }
  }
}

template <typename T, int kPer, bool kLog, typename C = Compute<T>>
__global__ void SoftmaxBackwardWarpKernel(int64_t rows, int64_t n, const T* y, const T* dy, T* dx) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = gridDim.x * static_cast<int64_t>(blockDim.x / 32);
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32; r < rows;
       r += warps) {
    C yv[kPer], dyv[kPer];
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int64_t j = lane + 32 * i;
      yv[i] = j < n ? Widen(y[r * n + j]) : C(0);
      dyv[i] = j < n ? Widen(dy[r * n + j]) : C(0);
    }
    C lane_sum;
    if constexpr (kLog) {
      lane_sum = TreeReduce(dyv, internal::SumOp{});
    } else {
      C terms[kPer];
#pragma unroll
      for (int i = 0; i < kPer; ++i) terms[i] = dyv[i] * yv[i];
      lane_sum = TreeReduce(terms, internal::SumOp{});
    }
    const C total =
        static_cast<C>(internal::WarpReduce(static_cast<double>(lane_sum), internal::SumOp{}));
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const int64_t j = lane + 32 * i;
      if (j < n) {
        dx[r * n + j] = Narrow<T>(kLog ? dyv[i] - exp(yv[i]) * total : yv[i] * (dyv[i] - total));
      }
    }
  }
}

// Calls launch(std::integral_constant<int, kPer>{}) with the smallest power of two kPer
// for which 32 kPer >= n (n <= kWarpRowsMax).
template <typename Launch>
void WithPerLane(int64_t n, Launch&& launch) {
  if (n <= 32) return launch(std::integral_constant<int, 1>{});
  if (n <= 64) return launch(std::integral_constant<int, 2>{});
  if (n <= 128) return launch(std::integral_constant<int, 4>{});
  if (n <= 256) return launch(std::integral_constant<int, 8>{});
  if (n <= 512) return launch(std::integral_constant<int, 16>{});
  return launch(std::integral_constant<int, 32>{});
}

// Blocks of kThreads for one warp a row.
inline int WarpRowBlocks(int64_t rows) {
  const int64_t blocks = (rows + kThreads / 32 - 1) / (kThreads / 32);
  return static_cast<int>(blocks < 65536 ? blocks : 65536);
}

// loss_r = (m_r - x[r, t_r]) + log s_r over the row's first `classes` of n entries, 0
// for an ignored row, NaN for a target out of range. Logits of T, the row statistics in
// C (float for bf16).
template <typename T, typename C = Compute<T>>
__global__ void CrossEntropyForwardKernel(int64_t rows, int64_t n, int64_t classes, const T* logits,
                                          const int64_t* targets, int64_t ignore_index, C* losses,
                                          C* row_max, C* sum_exp) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* xr = logits + r * n;
    C m;
    double s;
    RowMaxAndSum(xr, classes, &m, &s);
    if (threadIdx.x == 0) {
      const int64_t t = targets[r];
      losses[r] = t == ignore_index       ? C(0)
                  : t < 0 || t >= classes ? C(NAN)
                                          : (m - internal::Widen(xr[t])) + static_cast<C>(log(s));
      row_max[r] = m;
      sum_exp[r] = static_cast<C>(s);
    }
  }
}

// dlogits[r, j] = (exp(x[r, j] - m_r) / s_r - [j == t_r]) grad[r] for j < classes, 0
// for the padding and an ignored row (NaN for a target out of range), computed in C and
// stored as T once. dlogits may be logits: each thread reads its element before writing
// it.
template <typename T, typename C = Compute<T>>
__global__ void CrossEntropyBackwardKernel(int64_t rows, int64_t n, int64_t classes,
                                           const T* logits, const int64_t* targets,
                                           int64_t ignore_index, const C* row_max, const C* sum_exp,
                                           const C* grad, T* dlogits) {
  EMBER_GRID_STRIDE(i, rows * n) {
    const int64_t r = i / n, j = i % n, t = targets[r];
    const C x = internal::Widen(logits[i]);
    dlogits[i] = internal::Narrow<T>(
        t == ignore_index       ? C(0)
        : t < 0 || t >= classes ? C(NAN)
        : j >= classes          ? C(0)
                                : (exp(x - row_max[r]) / sum_exp[r] - C(j == t ? 1 : 0)) * grad[r]);
  }
}

// A warp a row up to kWarpRowsMax, a block a row past it.
template <bool kLog>
void LaunchSoftmax(const char* name, DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  if (rows == 0 || n == 0) return;
  internal::DispatchFloatOrBf16(name, dtype, [&](auto type) {
    using T = decltype(type);
    if (n <= kWarpRowsMax) {
      WithPerLane(n, [&](auto per) {
        SoftmaxWarpKernel<T, decltype(per)::value, kLog><<<WarpRowBlocks(rows), kThreads>>>(
            rows, n, static_cast<const T*>(x), static_cast<T*>(y));
      });
    } else {
      SoftmaxKernel<T, kLog>
          <<<RowBlocks(rows), kThreads>>>(rows, n, static_cast<const T*>(x), static_cast<T*>(y));
    }
  });
  EMBER_CUDA_CHECK_LAUNCH(name);
}

template <bool kLog>
void LaunchSoftmaxBackward(const char* name, DType dtype, int64_t rows, int64_t n, const void* y,
                           const void* dy, void* dx) {
  if (rows == 0 || n == 0) return;
  internal::DispatchFloatOrBf16(name, dtype, [&](auto type) {
    using T = decltype(type);
    if (n <= kWarpRowsMax) {
      WithPerLane(n, [&](auto per) {
        SoftmaxBackwardWarpKernel<T, decltype(per)::value, kLog><<<WarpRowBlocks(rows), kThreads>>>(
            rows, n, static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx));
      });
    } else {
      SoftmaxBackwardKernel<T, kLog><<<RowBlocks(rows), kThreads>>>(
          rows, n, static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx));
    }
  });
  EMBER_CUDA_CHECK_LAUNCH(name);
}

}  // namespace

void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  LaunchSoftmax<false>("softmax", dtype, rows, n, x, y);
}

void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  LaunchSoftmax<true>("log_softmax", dtype, rows, n, x, y);
}

void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                     void* dx) {
  LaunchSoftmaxBackward<false>("softmax_backward", dtype, rows, n, y, dy, dx);
}

void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx) {
  LaunchSoftmaxBackward<true>("log_softmax_backward", dtype, rows, n, y, dy, dx);
}

void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, int64_t classes, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp) {
  if (rows == 0) return;
  EMBER_CHECK(classes >= 1 && classes <= n, "cross_entropy: ", classes, " classes in rows of ", n);
  internal::DispatchFloatOrBf16("cross_entropy", dtype, [&](auto type) {
    using T = decltype(type);
    using C = Compute<T>;
    CrossEntropyForwardKernel<<<RowBlocks(rows), kThreads>>>(
        rows, n, classes, static_cast<const T*>(logits), targets, ignore_index,
        static_cast<C*>(losses), static_cast<C*>(row_max), static_cast<C*>(sum_exp));
  });
  EMBER_CUDA_CHECK_LAUNCH("cross_entropy");
}

void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, int64_t classes, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits) {
  if (rows == 0 || n == 0) return;
  internal::DispatchFloatOrBf16("cross_entropy_backward", dtype, [&](auto type) {
    using T = decltype(type);
    using C = Compute<T>;
    CrossEntropyBackwardKernel<<<internal::Blocks(rows * n), kThreads>>>(
        rows, n, classes, static_cast<const T*>(logits), targets, ignore_index,
        static_cast<const C*>(row_max), static_cast<const C*>(sum_exp), static_cast<const C*>(grad),
        static_cast<T*>(dlogits));
  });
  EMBER_CUDA_CHECK_LAUNCH("cross_entropy_backward");
}

}  // namespace ember::kernels::cuda
