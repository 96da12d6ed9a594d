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

namespace ember::kernels::cpu {
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
  // The valid taps of every window row and column, computed once (they divide).
  std::vector<IndexRange> rows(oh), cols(ow);
  for (int64_t oy = 0; oy < oh; ++oy) {
    rows[oy] = InsideRange(oy * g.stride_h - g.pad_h, g.kernel_h, g.dilation_h, g.height);
  }
  for (int64_t ox = 0; ox < ow; ++ox) {
    cols[ox] = InsideRange(ox * g.stride_w - g.pad_w, g.kernel_w, g.dilation_w, g.width);
  }
  ParallelFor(planes, std::max<int64_t>(1, 4096 / std::max<int64_t>(oh * ow, 1)),
              [&, g](int64_t begin, int64_t end) {
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
