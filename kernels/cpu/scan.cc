// Cumulative sums and products (see scan.h) in Highway SIMD, compiled once per target.
// The work is split into column blocks: (o, up to kBlock consecutive k). A block steps
// along j, each step one vector operation per kLanes columns (the row above, read back
// from cache, and x's row); a block of one column (inner = 1) is a scalar loop.

#include "kernels/scan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/internal/dispatch.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/scan.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Columns per block: a block's rows of x and out stay in L1 while it steps along j.
constexpr int64_t kBlock = 256;

// Calls fn(k0, width, column offset) for every column block of [outer, n, inner], the
// blocks split among the pool's threads (each costs about `passes` n width units).
template <typename Fn>
void ForEachBlock(int64_t outer, int64_t n, int64_t inner, int64_t passes, const Fn& fn) {
  const int64_t per_o = (inner + kBlock - 1) / kBlock;
  ParallelForWork(outer * per_o, passes * n * std::min(inner, kBlock), [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t o = u / per_o, k0 = (u % per_o) * kBlock;
      fn(std::min(kBlock, inner - k0), o * n * inner + k0);
    }
  });
}

// out[j] = op(out[j - step], x[j]) over `width` columns, for the rows j of a block in
// order (step = +inner forwards, -inner backwards), out[first] = x[first]. Floating
// types by vectors of kLanes and the rest one by one; int64 one by one.
template <typename T, typename VecOp, typename ScalarOp>
void ScanBlock(int64_t n, int64_t inner, int64_t width, bool reverse, const T* x, T* out,
               const VecOp& vec_op, const ScalarOp& scalar_op) {
  for (int64_t s = 0; s < n; ++s) {
    const int64_t j = reverse ? n - 1 - s : s;
    const T* xr = x + j * inner;
    T* row = out + j * inner;
    if (s == 0) {
      std::copy(xr, xr + width, row);
      continue;
    }
    const T* prev = out + (reverse ? j + 1 : j - 1) * inner;
    int64_t k = 0;
    if constexpr (!std::is_integral_v<T>) {
      const hn::ScalableTag<T> d;
      const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
      for (; k + lanes <= width; k += lanes) {
        hn::StoreU(vec_op(hn::LoadU(d, prev + k), hn::LoadU(d, xr + k)), d, row + k);
      }
    }
    for (; k < width; ++k) row[k] = scalar_op(prev[k], xr[k]);
  }
}

// The types the sums and products take: f32, f64, i64.
template <typename Fn>
void DispatchScan(const char* op, DType dtype, Fn&& fn) {
  if (dtype == DType::kI64) return fn(int64_t());
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, op, ": dtype ", DTypeName(dtype),
              " is not supported (f32, f64 or i64)");
  DispatchFloat(op, dtype, fn);
}

void CumulativeSum(DType dtype, int64_t outer, int64_t n, int64_t inner, bool reverse,
                   const void* x, void* out) {
  DispatchScan("cumsum", dtype, [&](auto type) {
    using T = decltype(type);
    ForEachBlock(outer, n, inner, 2, [&](int64_t width, int64_t offset) {
      ScanBlock(
          n, inner, width, reverse, At<T>(x, offset), At<T>(out, offset),
          [](auto a, auto b) { return hn::Add(a, b); }, [](T a, T b) { return T(a + b); });
    });
  });
}

void CumulativeProduct(DType dtype, int64_t outer, int64_t n, int64_t inner, const void* x,
                       void* out) {
  DispatchScan("cumprod", dtype, [&](auto type) {
    using T = decltype(type);
    ForEachBlock(outer, n, inner, 2, [&](int64_t width, int64_t offset) {
      ScanBlock(
          n, inner, width, /*reverse=*/false, At<T>(x, offset), At<T>(out, offset),
          [](auto a, auto b) { return hn::Mul(a, b); },
          // Through unsigned so that an overflowing integer product wraps, as int64's does.
          [](T a, T b) {
            if constexpr (std::is_integral_v<T>) {
              return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
            } else {
              return T(a * b);
            }
          });
    });
  });
}

void CumulativeProductBackward(DType dtype, int64_t outer, int64_t n, int64_t inner, const void* x,
                               const void* dout, void* dx) {
  DispatchFloat("cumprod_backward", dtype, [&](auto type) {
    using T = decltype(type);
    const hn::ScalableTag<T> d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    if (n == 0) return;
    ForEachBlock(outer, n, inner, 4, [&](int64_t width, int64_t offset) {
      const T* xb = At<T>(x, offset);
      const T* gb = At<T>(dout, offset);
      T* db = At<T>(dx, offset);
      // S backwards: dx[j] = dout[j] + x[j + 1] dx[j + 1].
      std::copy(gb + (n - 1) * inner, gb + (n - 1) * inner + width, db + (n - 1) * inner);
      for (int64_t j = n - 2; j >= 0; --j) {
        const T *g = gb + j * inner, *xn = xb + (j + 1) * inner, *sn = db + (j + 1) * inner;
        T* s = db + j * inner;
        int64_t k = 0;
        for (; k + lanes <= width; k += lanes) {
          hn::StoreU(hn::MulAdd(hn::LoadU(d, xn + k), hn::LoadU(d, sn + k), hn::LoadU(d, g + k)), d,
                     s + k);
        }
        for (; k < width; ++k) s[k] = std::fma(xn[k], sn[k], g[k]);
      }
      // Times P forwards: P_0 = 1, P_{j+1} = P_j x[j].
      std::vector<T> p(width, T(1));
      for (int64_t j = 0; j < n; ++j) {
        const T* xr = xb + j * inner;
        T* s = db + j * inner;
        int64_t k = 0;
        for (; k + lanes <= width; k += lanes) {
          const auto pv = hn::LoadU(d, p.data() + k);
          hn::StoreU(hn::Mul(hn::LoadU(d, s + k), pv), d, s + k);
          hn::StoreU(hn::Mul(pv, hn::LoadU(d, xr + k)), d, p.data() + k);
        }
        for (; k < width; ++k) {
          s[k] *= p[k];
          p[k] *= xr[k];
        }
      }
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(CumulativeSum);
HWY_EXPORT(CumulativeProduct);
HWY_EXPORT(CumulativeProductBackward);

void CumulativeSum(DType dtype, int64_t outer, int64_t n, int64_t inner, bool reverse,
                   const void* x, void* out) {
  HWY_DYNAMIC_DISPATCH(CumulativeSum)(dtype, outer, n, inner, reverse, x, out);
}

void CumulativeProduct(DType dtype, int64_t outer, int64_t n, int64_t inner, const void* x,
                       void* out) {
  HWY_DYNAMIC_DISPATCH(CumulativeProduct)(dtype, outer, n, inner, x, out);
}

void CumulativeProductBackward(DType dtype, int64_t outer, int64_t n, int64_t inner, const void* x,
                               const void* dout, void* dx) {
  HWY_DYNAMIC_DISPATCH(CumulativeProductBackward)(dtype, outer, n, inner, x, dout, dx);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
