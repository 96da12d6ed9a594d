// kernels/layernorm.h on the GPU. Forward (with the residual add when given) and dx: one
// block per row, the row's statistics in double (two passes, as on the CPU; bf16 rows
// widened to float); dweight and dbias: column sums (internal/columns.cu.h) in an order
// fixed by the sizes, so nothing depends on a race.

#include <cuda_runtime.h>

#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/columns.cu.h"
#include "kernels/cuda/internal/device.cu.h"
#include "kernels/layernorm.h"

namespace ember::kernels::cuda {
namespace {

using internal::BlockReduce;
using internal::Compute;
using internal::kThreads;
using internal::Narrow;
using internal::RowBlocks;
using internal::SumOp;
using internal::Widen;

// mean = sum x / c, var = sum (x - mean)^2 / c, rstd = 1 / sqrt(var + eps),
// y = (x - mean) rstd w + b. x and y of T; the parameters and statistics in C (float for
// bf16). With a residual, x + residual is written to sum first and normalised from
// there: each thread reads back only the elements it wrote.
template <typename T, typename C = Compute<T>>
__global__ void LayerNormForwardKernel(int64_t rows, int64_t c, const T* x, const T* residual,
                                       const C* weight, const C* bias, double eps, T* sum, T* y,
                                       C* mean, C* rstd) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* xr = x + r * c;
    if (residual != nullptr) {
      T* h = sum + r * c;
      for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
        h[j] = Narrow<T>(Widen(xr[j]) + Widen(residual[r * c + j]));
      }
      xr = h;
    }
    double sum = 0;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) sum += Widen(xr[j]);
    const double mu = BlockReduce(sum, SumOp{}, 0.0) / c;
    double squares = 0;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      const double d = Widen(xr[j]) - mu;
      squares += d * d;
    }
    const double var = BlockReduce(squares, SumOp{}, 0.0) / c;
    const C m = static_cast<C>(mu), s = static_cast<C>(1 / sqrt(var + eps));
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      const C v = (Widen(xr[j]) - m) * s * weight[j];
      y[r * c + j] = Narrow<T>(bias != nullptr ? v + bias[j] : v);
    }
    if (threadIdx.x == 0) {
      mean[r] = m;
      rstd[r] = s;
    }
  }
}

// g = dy w, dx = rstd (g - mean_j g - xhat mean_j(g xhat)).
template <typename T, typename C = Compute<T>>
__global__ void LayerNormDxKernel(int64_t rows, int64_t c, const T* x, const C* weight,
                                  const C* mean, const C* rstd, const T* dy, T* dx) {
  EMBER_FOR_EACH_ROW(r, rows) {
    const T* xr = x + r * c;
    const T* dyr = dy + r * c;
    const C m = mean[r], s = rstd[r];
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      const C g = Widen(dyr[j]) * weight[j];
      sum_g += g;
      sum_gx += static_cast<double>(g) * ((Widen(xr[j]) - m) * s);
    }
    const C mean_g = static_cast<C>(BlockReduce(sum_g, SumOp{}, 0.0) / c);
    const C mean_gx = static_cast<C>(BlockReduce(sum_gx, SumOp{}, 0.0) / c);
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      const C xhat = (Widen(xr[j]) - m) * s;
      dx[r * c + j] = Narrow<T>(s * (Widen(dyr[j]) * weight[j] - mean_g - xhat * mean_gx));
    }
  }
}

// dweight_j = sum_r dy xhat and dbias_j = sum_r dy, as internal::ColumnSums' terms and
// store.
template <typename T, typename C = Compute<T>>
struct ParamTerms {
  const T* x;
  const C *mean, *rstd;
  const T* dy;
  int64_t c;
  __device__ internal::Terms<2> operator()(int64_t r, int64_t j) const {
    const C d = Widen(dy[r * c + j]);
    return {{static_cast<double>(d) * ((Widen(x[r * c + j]) - mean[r]) * rstd[r]),
             static_cast<double>(d)}};
  }
};
template <typename C>
struct StoreParams {
  C *dweight, *dbias;
  __device__ void operator()(int64_t j, internal::Terms<2> sums) const {
    dweight[j] = static_cast<C>(sums.v[0]);
    if (dbias != nullptr) dbias[j] = static_cast<C>(sums.v[1]);
  }
};

}  // namespace

void LayerNormForward(DType dtype, int64_t rows, int64_t c, const void* x, const void* residual,
                      const void* weight, const void* bias, double eps, void* sum, void* y,
                      void* mean, void* rstd) {
  if (rows == 0) return;
  internal::DispatchFloatOrBf16("layer_norm", dtype, [&](auto type) {
    using T = decltype(type);
    using C = Compute<T>;
    LayerNormForwardKernel<<<RowBlocks(rows), kThreads>>>(
        rows, c, static_cast<const T*>(x), static_cast<const T*>(residual),
        static_cast<const C*>(weight), static_cast<const C*>(bias), eps, static_cast<T*>(sum),
        static_cast<T*>(y), static_cast<C*>(mean), static_cast<C*>(rstd));
  });
  EMBER_CUDA_CHECK_LAUNCH("layer_norm");
}

void LayerNormBackward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                       const void* mean, const void* rstd, const void* dy, void* dx, void* dweight,
                       void* dbias) {
  internal::DispatchFloatOrBf16("layer_norm_backward", dtype, [&](auto type) {
    using T = decltype(type);
    using C = Compute<T>;
    if (rows > 0) {
      LayerNormDxKernel<<<RowBlocks(rows), kThreads>>>(
          rows, c, static_cast<const T*>(x), static_cast<const C*>(weight),
          static_cast<const C*>(mean), static_cast<const C*>(rstd), static_cast<const T*>(dy),
          static_cast<T*>(dx));
    }
    internal::ColumnSums<2>(
        "layer_norm_backward", rows, c,
        ParamTerms<T>{static_cast<const T*>(x), static_cast<const C*>(mean),
                      static_cast<const C*>(rstd), static_cast<const T*>(dy), c},
        StoreParams<C>{static_cast<C*>(dweight), static_cast<C*>(dbias)});
  });
  EMBER_CUDA_CHECK_LAUNCH("layer_norm_backward");
}

}  // namespace ember::kernels::cuda
