#include "kernels/cpu/conv.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/internal/check.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Max pooling where every window lies inside the plane (no padding, no dilation: the
// common case, 2x2 with stride 2), planes [begin, end). A vector of a plane's outputs
// (in row-major order, across output rows: rows are short) at a time, tap by tap,
// gathering each window's input: PyTorch's rule (v > best or v is NaN: the first
// maximum, the last NaN) as lane selects, not branches, which on real data mispredict
// half the time. Starting from each window's first input instead of -inf picks the same
// element. A plane's last vector overlaps the one before (same outputs, same values).
template <typename T>
void PoolInside(const Window2d& g, int64_t begin, int64_t end, const T* x, T* y, int64_t* argmax) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;  // int32 for f32: planes are under 2^31 elements
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t ow = g.out_w(), outs = g.out_h() * ow, area = g.height * g.width;
  const int64_t taps = g.kernel_h * g.kernel_w;
  std::vector<TI> origin(outs);  // each window's first input in its plane
  for (int64_t q = 0; q < outs; ++q) origin[q] = static_cast<TI>((q / ow) * g.stride_h * g.width + (q % ow) * g.stride_w);
  std::vector<TI> shift(taps);  // tap k's offset from its window's first input
  for (int64_t k = 0; k < taps; ++k) shift[k] = static_cast<TI>((k / g.kernel_w) * g.width + k % g.kernel_w);
  HWY_ALIGN TI winner[HWY_MAX_BYTES / sizeof(T)];
  for (int64_t p = begin; p < end; ++p) {
    const T* plane = x + p * area;
    T* out = y + p * outs;
    int64_t* out_index = argmax + p * outs;
    if (outs < lanes) {  // smaller than a vector: one window at a time
      for (int64_t q = 0; q < outs; ++q) {
        int64_t best_index = origin[q];
        for (int64_t k = 1; k < taps; ++k) {
          const T v = plane[origin[q] + shift[k]];
          if (v > plane[best_index] || std::isnan(v)) best_index = origin[q] + shift[k];
        }
        out[q] = plane[best_index];
        out_index[q] = best_index;
      }
      continue;
    }
    for (int64_t q0 = 0; q0 < outs; q0 += lanes) {
      const int64_t q = std::min(q0, outs - lanes);
      const auto first = hn::LoadU(di, origin.data() + q);
      auto best = hn::GatherIndex(d, plane, first);
      auto best_at = first;
      for (int64_t k = 1; k < taps; ++k) {
        const auto at = hn::Add(first, hn::Set(di, shift[k]));
        const auto v = hn::GatherIndex(d, plane, at);
        const auto take = hn::Or(hn::Gt(v, best), hn::IsNaN(v));
        best = hn::IfThenElse(take, v, best);
        best_at = hn::IfThenElse(hn::RebindMask(di, take), at, best_at);
      }
      hn::StoreU(best, d, out + q);
      hn::Store(best_at, di, winner);
      for (int64_t l = 0; l < lanes; ++l) out_index[q + l] = winner[l];
    }
  }
}

void PoolInsideF32(const Window2d& g, int64_t begin, int64_t end, const float* x, float* y,
                   int64_t* argmax) {
  PoolInside(g, begin, end, x, y, argmax);
}
void PoolInsideF64(const Window2d& g, int64_t begin, int64_t end, const double* x, double* y,
                   int64_t* argmax) {
  PoolInside(g, begin, end, x, y, argmax);
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(PoolInsideF32);
HWY_EXPORT(PoolInsideF64);

namespace {

// Parts the backward's sum over images is cut into: fixed, so that the order of the
// sum (and the bits of dw, db) do not depend on the thread count.
constexpr int64_t kBackwardParts = 16;

// The indices k in [0, count) with 0 <= origin + k * step < size, as [begin, end):
// the taps of a window that fall inside the input (origin negative in the padding), or
// the output columns whose tap reads inside the row.
struct IndexRange {
  int64_t begin, end;
};
IndexRange InsideRange(int64_t origin, int64_t count, int64_t step, int64_t size) {
  const int64_t begin = std::min(count, origin >= 0 ? 0 : (-origin + step - 1) / step);
  const int64_t end = std::min(count, origin >= size ? 0 : (size - origin + step - 1) / step);
  return {begin, std::max(begin, end)};
}

// columns [c kh kw, oh ow] from image [c, H, W] (overwritten; padding is 0).
template <typename T>
void Im2Col(int64_t c, const Window2d& g, const T* image, T* columns) {
  const int64_t oh = g.out_h(), ow = g.out_w();
  T* out = columns;
  for (int64_t ch = 0; ch < c; ++ch) {
    const T* plane = image + ch * g.height * g.width;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const int64_t x0 = j * g.dilation_w - g.pad_w;  // input column of ox = 0
        const IndexRange valid = InsideRange(x0, ow, g.stride_w, g.width);
        for (int64_t oy = 0; oy < oh; ++oy, out += ow) {
          const int64_t iy = oy * g.stride_h - g.pad_h + i * g.dilation_h;
          if (iy < 0 || iy >= g.height) {
            std::fill(out, out + ow, T(0));
            continue;
          }
          const T* row = plane + iy * g.width;
          std::fill(out, out + valid.begin, T(0));
          if (g.stride_w == 1) {
            std::copy(row + x0 + valid.begin, row + x0 + valid.end, out + valid.begin);
          } else {
            for (int64_t ox = valid.begin; ox < valid.end; ++ox) out[ox] = row[x0 + ox * g.stride_w];
          }
          std::fill(out + valid.end, out + ow, T(0));
        }
      }
    }
  }
}

// im2col's adjoint: image [c, H, W] += each column entry at the position it came from.
template <typename T>
void Col2Im(int64_t c, const Window2d& g, const T* columns, T* image) {
  const int64_t oh = g.out_h(), ow = g.out_w();
  const T* in = columns;
  for (int64_t ch = 0; ch < c; ++ch) {
    T* plane = image + ch * g.height * g.width;
    for (int64_t i = 0; i < g.kernel_h; ++i) {
      for (int64_t j = 0; j < g.kernel_w; ++j) {
        const int64_t x0 = j * g.dilation_w - g.pad_w;
        const IndexRange valid = InsideRange(x0, ow, g.stride_w, g.width);
        for (int64_t oy = 0; oy < oh; ++oy, in += ow) {
          const int64_t iy = oy * g.stride_h - g.pad_h + i * g.dilation_h;
          if (iy < 0 || iy >= g.height) continue;
          T* row = plane + iy * g.width;
          for (int64_t ox = valid.begin; ox < valid.end; ++ox) row[x0 + ox * g.stride_w] += in[ox];
        }
      }
    }
  }
}

template <typename T>
void Forward(int64_t n, int64_t c, int64_t o, const Window2d& g, const T* x, const T* w, const T* b,
             T* y) {
  const int64_t ck = c * g.kernel_h * g.kernel_w, l = g.out_h() * g.out_w();
  const int64_t image = c * g.height * g.width;
  ParallelFor(n, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> columns(ck * l);
    for (int64_t s = begin; s < end; ++s) {
      Im2Col(c, g, x + s * image, columns.data());
      T* out = y + s * o * l;
      for (int64_t oc = 0; oc < o; ++oc) std::fill(out + oc * l, out + (oc + 1) * l, b ? b[oc] : T(0));
      // y[s] [o, l] += w [o, ck] · columns [ck, l]
      Gemm(DTypeOf<T>::value, o, ck, l, {w, ck, 1}, {columns.data(), l, 1}, out, l,
           /*accumulate=*/true);
    }
  });
}

template <typename T>
void Backward(int64_t n, int64_t c, int64_t o, const Window2d& g, const T* x, const T* w,
              const T* dy, T* dx, T* dw, T* db) {
  const int64_t ck = c * g.kernel_h * g.kernel_w, l = g.out_h() * g.out_w();
  const int64_t image = c * g.height * g.width;
  const int64_t parts = std::min(n, kBackwardParts);
  std::vector<T> dw_parts(parts * o * ck, T(0)), db_parts(db ? parts * o : 0, T(0));
  ParallelFor(parts, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> columns(ck * l), dcolumns(dx ? ck * l : 0);
    for (int64_t part = begin; part < end; ++part) {
      for (int64_t s = part * n / parts; s < (part + 1) * n / parts; ++s) {
        const T* g_out = dy + s * o * l;  // [o, l]
        Im2Col(c, g, x + s * image, columns.data());
        // dw_part [o, ck] += dy[s] [o, l] · columns^T [l, ck]
        Gemm(DTypeOf<T>::value, o, l, ck, {g_out, l, 1}, {columns.data(), 1, l},
             dw_parts.data() + part * o * ck, ck, /*accumulate=*/true);
        for (int64_t oc = 0; db && oc < o; ++oc) {
          T sum = 0;
          for (int64_t k = 0; k < l; ++k) sum += g_out[oc * l + k];
          db_parts[part * o + oc] += sum;
        }
        if (dx) {
          // dcolumns [ck, l] = w^T [ck, o] · dy[s] [o, l]
          Gemm(DTypeOf<T>::value, ck, o, l, {w, 1, ck}, {g_out, l, 1}, dcolumns.data(), l,
               /*accumulate=*/false);
          std::fill(dx + s * image, dx + (s + 1) * image, T(0));
          Col2Im(c, g, dcolumns.data(), dx + s * image);
        }
      }
    }
  });
  std::fill(dw, dw + o * ck, T(0));
  if (db) std::fill(db, db + o, T(0));
  for (int64_t part = 0; part < parts; ++part) {
    for (int64_t k = 0; k < o * ck; ++k) dw[k] += dw_parts[part * o * ck + k];
    if (db) {
      for (int64_t oc = 0; oc < o; ++oc) db[oc] += db_parts[part * o + oc];
    }
  }
}

template <typename T>
void PoolForward(int64_t planes, const Window2d& window, const T* x, T* y, int64_t* argmax) {
  // A copy: argmax (int64) might alias the window's fields, which would be reloaded
  // after every store.
  const Window2d g = window;
  const int64_t oh = g.out_h(), ow = g.out_w(), area = g.height * g.width;
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(oh * ow, 1));
  if (g.pad_h == 0 && g.pad_w == 0 && g.dilation_h == 1 && g.dilation_w == 1) {
    ParallelFor(planes, grain, [&](int64_t begin, int64_t end) {
      if constexpr (std::is_same_v<T, float>) {
        HWY_DYNAMIC_DISPATCH(PoolInsideF32)(g, begin, end, x, y, argmax);
      } else {
        HWY_DYNAMIC_DISPATCH(PoolInsideF64)(g, begin, end, x, y, argmax);
      }
    });
    return;
  }
  // The valid taps of every window row and column, computed once (they divide).
  std::vector<IndexRange> rows(oh), cols(ow);
  for (int64_t oy = 0; oy < oh; ++oy) {
    rows[oy] = InsideRange(oy * g.stride_h - g.pad_h, g.kernel_h, g.dilation_h, g.height);
  }
  for (int64_t ox = 0; ox < ow; ++ox) {
    cols[ox] = InsideRange(ox * g.stride_w - g.pad_w, g.kernel_w, g.dilation_w, g.width);
  }
  ParallelFor(planes, grain, [&, g](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const T* plane = x + p * area;
      T* out = y + p * oh * ow;
      int64_t* out_index = argmax + p * oh * ow;
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t y0 = oy * g.stride_h - g.pad_h;
        const IndexRange r = rows[oy];
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t x0 = ox * g.stride_w - g.pad_w;
          const IndexRange c = cols[ox];
          // PyTorch's rule: start at the first input with -inf, take v > best or NaN.
          int64_t best_index = (y0 + r.begin * g.dilation_h) * g.width + x0 + c.begin * g.dilation_w;
          T best = -std::numeric_limits<T>::infinity();
          for (int64_t i = r.begin; i < r.end; ++i) {
            const int64_t row = (y0 + i * g.dilation_h) * g.width + x0;
            for (int64_t j = c.begin; j < c.end; ++j) {
              const int64_t at = row + j * g.dilation_w;
              const T v = plane[at];
              if (v > best || std::isnan(v)) {
                best = v;
                best_index = at;
              }
            }
          }
          out[oy * ow + ox] = best;
          out_index[oy * ow + ox] = best_index;
        }
      }
    }
  });
}

template <typename T>
void PoolBackward(int64_t planes, const Window2d& g, const int64_t* argmax, const T* dy, T* dx) {
  const int64_t outs = g.out_h() * g.out_w(), area = g.height * g.width;
  ParallelFor(planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(outs, 1)),
              [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      for (int64_t k = 0; k < outs; ++k) dx[p * area + argmax[p * outs + k]] += dy[p * outs + k];
    }
  });
}

// Calls fn(T{}) with T the float type of dtype: CheckFloatDType, then VisitDType, as
// the other kernels dispatch.
template <typename Fn>
void VisitFloat(const char* op, DType dtype, Fn&& fn) {
  internal::CheckFloatDType(op, dtype);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) fn(T{});
  });
}

}  // namespace

void Conv2dForward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                   const void* x, const void* w, const void* b, void* y) {
  VisitFloat("conv2d", dtype, [&](auto zero) {
    using T = decltype(zero);
    Forward<T>(n, c, o, window, static_cast<const T*>(x), static_cast<const T*>(w),
               static_cast<const T*>(b), static_cast<T*>(y));
  });
}

void Conv2dBackward(DType dtype, int64_t n, int64_t c, int64_t o, const Window2d& window,
                    const void* x, const void* w, const void* dy, void* dx, void* dw, void* db) {
  VisitFloat("conv2d_backward", dtype, [&](auto zero) {
    using T = decltype(zero);
    Backward<T>(n, c, o, window, static_cast<const T*>(x), static_cast<const T*>(w),
                static_cast<const T*>(dy), static_cast<T*>(dx), static_cast<T*>(dw),
                static_cast<T*>(db));
  });
}

void MaxPool2dForward(DType dtype, int64_t planes, const Window2d& window, const void* x, void* y,
                      int64_t* argmax) {
  VisitFloat("max_pool2d", dtype, [&](auto zero) {
    using T = decltype(zero);
    PoolForward<T>(planes, window, static_cast<const T*>(x), static_cast<T*>(y), argmax);
  });
}

void MaxPool2dBackward(DType dtype, int64_t planes, const Window2d& window, const int64_t* argmax,
                       const void* dy, void* dx) {
  VisitFloat("max_pool2d_backward", dtype, [&](auto zero) {
    using T = decltype(zero);
    PoolBackward<T>(planes, window, argmax, static_cast<const T*>(dy), static_cast<T*>(dx));
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
