// LayerNorm forward and backward (see layernorm.h) in Highway SIMD, compiled once per
// target.

#include "kernels/layernorm.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/internal/dispatch.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/layernorm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/cpu/internal/map-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using internal::Compute;
using internal::HWY_NAMESPACE::Accumulate;
using internal::HWY_NAMESPACE::LoadWide;
using internal::HWY_NAMESPACE::StoreNarrow;

// x and y of type T; the parameters and statistics in C = Compute<T> (f32 for bf16).
// With a residual, each row of x + residual is first written to sum and normalised
// from there (still in cache).
template <typename T, typename C = Compute<T>>
void ForwardRows(int64_t rows, int64_t c, const T* x_rows, const T* residual, const C* w,
                 const C* b, C eps, T* sum, T* y, C* mean, C* rstd) {
  const hn::ScalableTag<C> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r, y += c) {
    const T* x = x_rows + r * c;
    if (residual != nullptr) {
      T* h = sum + r * c;
      const T* res = residual + r * c;
      int64_t i = 0;
      for (; i + lanes <= c; i += lanes) {
        StoreNarrow(hn::Add(LoadWide(d, x + i), LoadWide(d, res + i)), d, h + i);
      }
      for (; i < c; ++i) h[i] = Convert<T>(Convert<C>(x[i]) + Convert<C>(res[i]));
      x = h;
    }
    const C mu = Accumulate(
                     c, x, x, [](auto, auto v, auto) { return v; }, [](C v, C) { return v; }) /
                 static_cast<C>(c);
    const auto vmu = hn::Set(d, mu);
    const C var = Accumulate(
                      c, x, x,
                      [&](auto, auto v, auto) {
                        const auto centered = hn::Sub(v, vmu);
                        return hn::Mul(centered, centered);
                      },
                      [mu](C v, C) { return (v - mu) * (v - mu); }) /
                  static_cast<C>(c);
    const C s = C(1) / std::sqrt(var + eps);
    mean[r] = mu;
    rstd[r] = s;
    const auto vs = hn::Set(d, s);
    int64_t j = 0;
    for (; j + lanes <= c; j += lanes) {
      auto v = hn::Mul(hn::Mul(hn::Sub(LoadWide(d, x + j), vmu), vs), hn::LoadU(d, w + j));
      if (b) v = hn::Add(v, hn::LoadU(d, b + j));
      StoreNarrow(v, d, y + j);
    }
    for (; j < c; ++j) y[j] = Convert<T>((Convert<C>(x[j]) - mu) * s * w[j] + (b ? b[j] : C(0)));
  }
}

// dx for rows [0, rows).
template <typename T, typename C = Compute<T>>
void BackwardInputRows(int64_t rows, int64_t c, const T* x, const C* w, const C* mean,
                       const C* rstd, const T* dy, T* dx) {
  const hn::ScalableTag<C> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r, x += c, dy += c, dx += c) {
    const C mu = mean[r], s = rstd[r];
    const auto vmu = hn::Set(d, mu), vs = hn::Set(d, s);
    // mean_j(g) and mean_j(g xhat), with g = dy w, in one pass.
    auto acc_g = hn::Zero(d), acc_gx = acc_g;
    int64_t i = 0;
    for (; i + lanes <= c; i += lanes) {
      const auto g = hn::Mul(LoadWide(d, dy + i), hn::LoadU(d, w + i));
      acc_g = hn::Add(acc_g, g);
      acc_gx = hn::MulAdd(g, hn::Mul(hn::Sub(LoadWide(d, x + i), vmu), vs), acc_gx);
    }
    C g_mean = hn::GetLane(hn::SumOfLanes(d, acc_g));
    C gx_mean = hn::GetLane(hn::SumOfLanes(d, acc_gx));
    for (; i < c; ++i) {
      const C g = Convert<C>(dy[i]) * w[i];
      g_mean += g;
      gx_mean += g * ((Convert<C>(x[i]) - mu) * s);
    }
    g_mean /= static_cast<C>(c);
    gx_mean /= static_cast<C>(c);
    const auto vg = hn::Set(d, g_mean), vgx = hn::Set(d, gx_mean);
    int64_t j = 0;
    for (; j + lanes <= c; j += lanes) {
      const auto xhat = hn::Mul(hn::Sub(LoadWide(d, x + j), vmu), vs);
      const auto g = hn::Mul(LoadWide(d, dy + j), hn::LoadU(d, w + j));
      StoreNarrow(hn::Mul(vs, hn::NegMulAdd(xhat, vgx, hn::Sub(g, vg))), d, dx + j);
    }
    for (; j < c; ++j) {
      const C xhat = (Convert<C>(x[j]) - mu) * s;
      dx[j] = Convert<T>(s * ((Convert<C>(dy[j]) * w[j] - g_mean) - xhat * gx_mean));
    }
  }
}

// dweight and dbias for columns [begin, end), summing over all rows in order. A block
// of two vectors of columns keeps its four sums in registers while it walks down the
// rows.
template <typename T, typename C = Compute<T>>
void BackwardParamColumns(int64_t rows, int64_t c, int64_t begin, int64_t end, const T* x,
                          const C* mean, const C* rstd, const T* dy, C* dw, C* db) {
  const hn::ScalableTag<C> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = begin;
  for (; j + 2 * lanes <= end; j += 2 * lanes) {
    auto w0 = hn::Zero(d), w1 = w0, b0 = w0, b1 = w0;
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x + r * c + j;
      const T* gr = dy + r * c + j;
      const auto vmu = hn::Set(d, mean[r]), vs = hn::Set(d, rstd[r]);
      const auto g0 = LoadWide(d, gr), g1 = LoadWide(d, gr + lanes);
      w0 = hn::MulAdd(g0, hn::Mul(hn::Sub(LoadWide(d, xr), vmu), vs), w0);
      w1 = hn::MulAdd(g1, hn::Mul(hn::Sub(LoadWide(d, xr + lanes), vmu), vs), w1);
      b0 = hn::Add(b0, g0);
      b1 = hn::Add(b1, g1);
    }
    hn::StoreU(w0, d, dw + j);
    hn::StoreU(w1, d, dw + j + lanes);
    if (db) {
      hn::StoreU(b0, d, db + j);
      hn::StoreU(b1, d, db + j + lanes);
    }
  }
  for (; j < end; ++j) {
    C w = 0, b = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const C g = Convert<C>(dy[r * c + j]);
      w += g * ((Convert<C>(x[r * c + j]) - mean[r]) * rstd[r]);
      b += g;
    }
    dw[j] = w;
    if (db) db[j] = b;
  }
}

// The entry points (see layernorm.h). Forward splits rows; backward splits rows for dx
// and blocks of 64 columns for the parameter gradients (a multiple of any target's two
// vectors, so whether a column is summed in a vector or in the scalar tail depends on
// c alone).
void LayerNormForward(DType dtype, int64_t rows, int64_t c, const void* x, const void* residual,
                      const void* weight, const void* bias, double eps, void* sum, void* y,
                      void* mean, void* rstd) {
  DispatchFloatOrBf16("layer_norm", dtype, [&](auto type) {
    using T = decltype(type);
    using C = Compute<T>;
    ParallelForWork(rows, 2 * c, [&](int64_t b, int64_t e) {
      ForwardRows(e - b, c, At<T>(x, b * c), residual ? At<T>(residual, b * c) : nullptr,
                  At<C>(weight), At<C>(bias), static_cast<C>(eps),
                  residual ? At<T>(sum, b * c) : nullptr, At<T>(y, b * c), At<C>(mean, b),
                  At<C>(rstd, b));
    });
  });
}

void LayerNormBackward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                       const void* mean, const void* rstd, const void* dy, void* dx, void* dweight,
                       void* dbias) {
  DispatchFloatOrBf16("layer_norm_backward", dtype, [&](auto type) {
    using T = decltype(type);
    using C = Compute<T>;
    ParallelForWork(rows, 2 * c, [&](int64_t b, int64_t e) {
      BackwardInputRows(e - b, c, At<T>(x, b * c), At<C>(weight), At<C>(mean, b), At<C>(rstd, b),
                        At<T>(dy, b * c), At<T>(dx, b * c));
    });
    constexpr int64_t kBlock = 64;
    ParallelForWork((c + kBlock - 1) / kBlock, 2 * rows * kBlock, [&](int64_t first, int64_t last) {
      BackwardParamColumns(rows, c, first * kBlock, std::min(c, last * kBlock), At<T>(x),
                           At<C>(mean), At<C>(rstd), At<T>(dy), At<C>(dweight), At<C>(dbias));
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(LayerNormForward);
HWY_EXPORT(LayerNormBackward);

void LayerNormForward(DType dtype, int64_t rows, int64_t c, const void* x, const void* residual,
                      const void* weight, const void* bias, double eps, void* sum, void* y,
                      void* mean, void* rstd) {
  HWY_DYNAMIC_DISPATCH(LayerNormForward)
  (dtype, rows, c, x, residual, weight, bias, eps, sum, y, mean, rstd);
}

void LayerNormBackward(DType dtype, int64_t rows, int64_t c, const void* x, const void* weight,
                       const void* mean, const void* rstd, const void* dy, void* dx, void* dweight,
                       void* dbias) {
  HWY_DYNAMIC_DISPATCH(LayerNormBackward)
  (dtype, rows, c, x, weight, mean, rstd, dy, dx, dweight, dbias);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
