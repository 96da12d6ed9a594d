// kernels/cpu/softmax.h on the GPU: one block per row (grid-stride over rows). Each
// row's maximum m is exact; s = sum_j exp(x_j - m) and the other row sums accumulate
// in double; elementwise results are computed in the dtype, as on the CPU.

#include <cuda_runtime.h>

#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/cuda/kernels.h"

namespace ember::kernels::cuda {
namespace {

using internal::BlockReduce;
using internal::kThreads;
using internal::RowBlocks;
using internal::VisitFloat;

// The row's maximum m and s = sum_j exp(x_j - m), known to every thread.
template <typename T>
__device__ void RowMaxAndSum(const T* x, int64_t n, T* m, double* s) {
  T max = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) max = internal::MaxOp{}(max, x[j]);
  *m = BlockReduce(max, internal::MaxOp{}, T(-INFINITY));
  double sum = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += exp(x[j] - *m);
  *s = BlockReduce(sum, internal::SumOp{}, 0.0);
}

template <typename T, bool kLog>
__global__ void SoftmaxKernel(int64_t rows, int64_t n, const T* x, T* y) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    T m;
    double s;
    RowMaxAndSum(xr, n, &m, &s);
    if (kLog) {
      const T log_s = static_cast<T>(log(s));
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) yr[j] = (xr[j] - m) - log_s;
    } else {
      const T sum = static_cast<T>(s);
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) yr[j] = exp(xr[j] - m) / sum;
    }
  }
}

// softmax: dx = y (dy - sum_j dy_j y_j); log-softmax: dx = dy - exp(y) sum_j dy_j.
template <typename T, bool kLog>
__global__ void SoftmaxBackwardKernel(int64_t rows, int64_t n, const T* y, const T* dy, T* dx) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* yr = y + r * n;
    const T* dyr = dy + r * n;
    T* dxr = dx + r * n;
    double sum = 0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      sum += kLog ? static_cast<double>(dyr[j]) : static_cast<double>(dyr[j]) * yr[j];
    }
    const T total = static_cast<T>(BlockReduce(sum, internal::SumOp{}, 0.0));
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      dxr[j] = kLog ? dyr[j] - exp(yr[j]) * total : yr[j] * (dyr[j] - total);
    }
  }
}

// loss_r = (m_r - x[r, t_r]) + log s_r, 0 for an ignored row.
template <typename T>
__global__ void CrossEntropyForwardKernel(int64_t rows, int64_t n, const T* logits,
                                          const int64_t* targets, int64_t ignore_index, T* losses,
                                          T* row_max, T* sum_exp) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* xr = logits + r * n;
    T m;
    double s;
    RowMaxAndSum(xr, n, &m, &s);
    if (threadIdx.x == 0) {
      const int64_t t = targets[r];
      losses[r] = t == ignore_index ? T(0) : (m - xr[t]) + static_cast<T>(log(s));
      row_max[r] = m;
      sum_exp[r] = static_cast<T>(s);
    }
  }
}

// dlogits[r, j] = (exp(x[r, j] - m_r) / s_r - [j == t_r]) grad[r], 0 for an ignored row.
template <typename T>
__global__ void CrossEntropyBackwardKernel(int64_t rows, int64_t n, const T* logits,
                                           const int64_t* targets, int64_t ignore_index,
                                           const T* row_max, const T* sum_exp, const T* grad,
                                           T* dlogits) {
  EMBER_GRID_STRIDE(i, rows * n) {
    const int64_t r = i / n, j = i % n, t = targets[r];
    dlogits[i] = t == ignore_index
                     ? T(0)
                     : (exp(logits[i] - row_max[r]) / sum_exp[r] - T(j == t ? 1 : 0)) * grad[r];
  }
}

}  // namespace

void Softmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  if (rows == 0 || n == 0) return;
  VisitFloat("softmax", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SoftmaxKernel<T, false>
        <<<RowBlocks(rows), kThreads>>>(rows, n, static_cast<const T*>(x), static_cast<T*>(y));
  });
  EMBER_CUDA_CHECK_LAUNCH("softmax");
}

void LogSoftmax(DType dtype, int64_t rows, int64_t n, const void* x, void* y) {
  if (rows == 0 || n == 0) return;
  VisitFloat("log_softmax", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SoftmaxKernel<T, true>
        <<<RowBlocks(rows), kThreads>>>(rows, n, static_cast<const T*>(x), static_cast<T*>(y));
  });
  EMBER_CUDA_CHECK_LAUNCH("log_softmax");
}

void SoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                     void* dx) {
  if (rows == 0 || n == 0) return;
  VisitFloat("softmax_backward", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SoftmaxBackwardKernel<T, false><<<RowBlocks(rows), kThreads>>>(
        rows, n, static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx));
  });
  EMBER_CUDA_CHECK_LAUNCH("softmax_backward");
}

void LogSoftmaxBackward(DType dtype, int64_t rows, int64_t n, const void* y, const void* dy,
                        void* dx) {
  if (rows == 0 || n == 0) return;
  VisitFloat("log_softmax_backward", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    SoftmaxBackwardKernel<T, true><<<RowBlocks(rows), kThreads>>>(
        rows, n, static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx));
  });
  EMBER_CUDA_CHECK_LAUNCH("log_softmax_backward");
}

void CrossEntropyForward(DType dtype, int64_t rows, int64_t n, const void* logits,
                         const int64_t* targets, int64_t ignore_index, void* losses, void* row_max,
                         void* sum_exp) {
  if (rows == 0) return;
  EMBER_CHECK(n >= 1, "cross_entropy: rows of 0 classes");
  VisitFloat("cross_entropy", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CrossEntropyForwardKernel<<<RowBlocks(rows), kThreads>>>(
        rows, n, static_cast<const T*>(logits), targets, ignore_index, static_cast<T*>(losses),
        static_cast<T*>(row_max), static_cast<T*>(sum_exp));
  });
  EMBER_CUDA_CHECK_LAUNCH("cross_entropy");
}

void CrossEntropyBackward(DType dtype, int64_t rows, int64_t n, const void* logits,
                          const int64_t* targets, int64_t ignore_index, const void* row_max,
                          const void* sum_exp, const void* grad, void* dlogits) {
  if (rows == 0 || n == 0) return;
  VisitFloat("cross_entropy_backward", dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CrossEntropyBackwardKernel<<<internal::Blocks(rows * n), kThreads>>>(
        rows, n, static_cast<const T*>(logits), targets, ignore_index,
        static_cast<const T*>(row_max), static_cast<const T*>(sum_exp), static_cast<const T*>(grad),
        static_cast<T*>(dlogits));
  });
  EMBER_CUDA_CHECK_LAUNCH("cross_entropy_backward");
}

}  // namespace ember::kernels::cuda
