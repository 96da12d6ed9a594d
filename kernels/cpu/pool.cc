// Max pooling (see pool.h) in Highway, compiled once per SIMD target: 2x2 windows with
// stride 2 (the CNN's) from contiguous row loads, other windows inside the plane by
// gathers, padded or dilated windows one at a time.

#include "kernels/pool.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/internal/dispatch.h"
#include "kernels/cpu/internal/window.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/pool.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using internal::IndexRange;
using internal::InsideRange;

// PyTorch's max-pooling rule as lane selects: tap value v (at input index `at`) replaces
// the best so far where v > best or v is NaN (so the first maximum and the last NaN
// win). Branches instead would mispredict half the time on real data.
template <class V, class VI>
void TakeGreaterOrNaN(V v, VI at, V& best, VI& best_at) {
  const auto take = hn::Or(hn::Gt(v, best), hn::IsNaN(v));
  best = hn::IfThenElse(take, v, best);
  best_at = hn::IfThenElse(hn::RebindMask(hn::DFromV<VI>(), take), at, best_at);
}

// Max pooling where every window lies inside the plane (no padding, no dilation: the
// common case), planes [begin, end). A vector of a plane's outputs (in row-major order,
// across output rows: rows are short) at a time, tap by tap, gathering each window's
// input (TakeGreaterOrNaN). Starting from each window's first input instead of -inf
// picks the same element. A plane's last vector overlaps the one before (same outputs,
// same values).
template <typename T>
void PoolInside(const Window2d& g, int64_t begin, int64_t end, const T* x, T* y, int64_t* argmax) {
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;  // int32 for f32: planes are under 2^31 elements
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t ow = g.out_w(), outs = g.out_h() * ow, area = g.height * g.width;
  const int64_t taps = g.kernel_h * g.kernel_w;
  std::vector<TI> origin(outs);  // each window's first input in its plane
  for (int64_t q = 0; q < outs; ++q)
    origin[q] = static_cast<TI>((q / ow) * g.stride_h * g.width + (q % ow) * g.stride_w);
  std::vector<TI> shift(taps);  // tap k's offset from its window's first input
  for (int64_t k = 0; k < taps; ++k)
    shift[k] = static_cast<TI>((k / g.kernel_w) * g.width + k % g.kernel_w);
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
        TakeGreaterOrNaN(hn::GatherIndex(d, plane, at), at, best, best_at);
      }
      hn::StoreU(best, d, out + q);
      hn::Store(best_at, di, winner);
      for (int64_t l = 0; l < lanes; ++l) out_index[q + l] = winner[l];
    }
  }
}

// 2x2 windows with stride 2 (the CNN's), planes [begin, end) of x's `total` entries:
// each output row from contiguous loads of its two input rows, a window's left and
// right inputs split apart by ConcatEven / ConcatOdd, instead of gathered (gathers
// stalled PoolInside on these shapes). A vector of one output row at a time; a row's
// loads run on into the next input row (2 lanes per output, the rest unused), except
// at the end of x, where the last chunk goes window by window.
template <typename T>
void PoolPairs(const Window2d& g, int64_t begin, int64_t end, int64_t total, const T* x, T* y,
               int64_t* argmax) {
#if HWY_TARGET == HWY_SCALAR  // one lane: no ConcatEven, nothing to gain
  (void)total;
  PoolInside(g, begin, end, x, y, argmax);
#else
  const hn::ScalableTag<T> d;
  const hn::RebindToSigned<decltype(d)> di;
  using TI = hn::TFromD<decltype(di)>;  // int32 for f32: planes are under 2^31 elements
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t w = g.width, oh = g.out_h(), ow = g.out_w(), outs = oh * ow, area = g.height * w;
  const auto twice_lane = hn::Add(hn::Iota(di, 0), hn::Iota(di, 0));
  HWY_ALIGN T best_values[HWY_MAX_BYTES / sizeof(T)];
  HWY_ALIGN TI winner[HWY_MAX_BYTES / sizeof(T)];
  for (int64_t p = begin; p < end; ++p) {
    const T* plane = x + p * area;
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox0 = 0; ox0 < ow; ox0 += lanes) {
        const int64_t count = std::min(lanes, ow - ox0), first = 2 * oy * w + 2 * ox0;
        T* out = y + p * outs + oy * ow + ox0;
        int64_t* out_index = argmax + p * outs + oy * ow + ox0;
        if (p * area + first + w + 2 * lanes > total) {  // the loads would leave x
          for (int64_t k = 0; k < count; ++k) {
            int64_t best_index = first + 2 * k;
            for (const int64_t at : {best_index + 1, best_index + w, best_index + w + 1}) {
              if (plane[at] > plane[best_index] || std::isnan(plane[at])) best_index = at;
            }
            out[k] = plane[best_index];
            out_index[k] = best_index;
          }
          continue;
        }
        const T* top = plane + first;
        const T* bottom = top + w;
        const auto top_lo = hn::LoadU(d, top), top_hi = hn::LoadU(d, top + lanes);
        const auto bottom_lo = hn::LoadU(d, bottom), bottom_hi = hn::LoadU(d, bottom + lanes);
        const auto at = hn::Add(hn::Set(di, static_cast<TI>(first)), twice_lane);
        auto best = hn::ConcatEven(d, top_hi, top_lo);
        auto best_at = at;
        TakeGreaterOrNaN(hn::ConcatOdd(d, top_hi, top_lo), hn::Add(at, hn::Set(di, TI(1))), best,
                         best_at);
        TakeGreaterOrNaN(hn::ConcatEven(d, bottom_hi, bottom_lo),
                         hn::Add(at, hn::Set(di, static_cast<TI>(w))), best, best_at);
        TakeGreaterOrNaN(hn::ConcatOdd(d, bottom_hi, bottom_lo),
                         hn::Add(at, hn::Set(di, static_cast<TI>(w + 1))), best, best_at);
        hn::Store(best, d, best_values);
        hn::Store(best_at, di, winner);
        for (int64_t k = 0; k < count; ++k) {
          out[k] = best_values[k];
          out_index[k] = winner[k];
        }
      }
    }
  }
#endif
}

// Max pooling over planes [0, planes): PoolPairs for 2x2 windows with stride 2,
// PoolInside for other windows that lie inside the plane, otherwise one window at a
// time over its valid taps.
template <typename T>
void PoolPlanes(int64_t planes, const Window2d& window, const T* x, T* y, int64_t* argmax) {
  // A copy: argmax (int64) might alias the window's fields, which would be reloaded
  // after every store.
  const Window2d g = window;
  const int64_t oh = g.out_h(), ow = g.out_w(), area = g.height * g.width;
  // A plane's work: every tap of every window.
  const int64_t work = oh * ow * g.kernel_h * g.kernel_w;
  if (g.pad_h == 0 && g.pad_w == 0 && g.dilation_h == 1 && g.dilation_w == 1) {
    const bool pairs = g.kernel_h == 2 && g.kernel_w == 2 && g.stride_h == 2 && g.stride_w == 2;
    ParallelForWork(planes, work, [&](int64_t begin, int64_t end) {
      if (pairs) {
        PoolPairs(g, begin, end, planes * area, x, y, argmax);
      } else {
        PoolInside(g, begin, end, x, y, argmax);
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
  ParallelForWork(planes, work, [&, g](int64_t begin, int64_t end) {
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
          int64_t best_index =
              (y0 + r.begin * g.dilation_h) * g.width + x0 + c.begin * g.dilation_w;
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

void MaxPool2dForward(DType dtype, int64_t planes, const Window2d& window, const void* x, void* y,
                      int64_t* argmax) {
  DispatchFloat("max_pool2d", dtype, [&](auto type) {
    using T = decltype(type);
    PoolPlanes(planes, window, At<T>(x), At<T>(y), argmax);
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(MaxPool2dForward);

void MaxPool2dForward(DType dtype, int64_t planes, const Window2d& window, const void* x, void* y,
                      int64_t* argmax) {
  HWY_DYNAMIC_DISPATCH(MaxPool2dForward)(dtype, planes, window, x, y, argmax);
}

// The scatter has no SIMD code: a plain loop, planes split across the pool.
bool MaxPool2dBackward(DType dtype, int64_t planes, const Window2d& window, const int64_t* argmax,
                       const void* dy, void* dx) {
  return DispatchFloat("max_pool2d_backward", dtype, [&](auto type) {
    using T = decltype(type);
    const T* g = At<T>(dy);
    T* out = At<T>(dx);
    const int64_t outs = window.out_h() * window.out_w(), area = window.height * window.width;
    std::atomic<bool> all_inside{true};
    ParallelForWork(planes, area + outs, [&](int64_t begin, int64_t end) {
      bool inside = true;
      for (int64_t p = begin; p < end; ++p) {
        std::fill(out + p * area, out + (p + 1) * area, T(0));
        for (int64_t k = 0; k < outs; ++k) {
          const int64_t at = argmax[p * outs + k];
          if (static_cast<uint64_t>(at) >= static_cast<uint64_t>(area)) {  // negative too
            inside = false;
            continue;
          }
          out[p * area + at] += g[p * outs + k];
        }
      }
      if (!inside) all_inside.store(false, std::memory_order_relaxed);
    });
    return all_inside.load();
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
