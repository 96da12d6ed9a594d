// RowMax and SumExp: the row loops that softmax, cross entropy and attention share. A
// textual header, included once per SIMD target by a kernel's .cc after hwy/highway.h
// (Highway's per-target include guard below).

#if defined(EMBER_KERNELS_CPU_INTERNAL_SOFTMAX_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_CPU_INTERNAL_SOFTMAX_INL_H_
#undef EMBER_KERNELS_CPU_INTERNAL_SOFTMAX_INL_H_
#else
#define EMBER_KERNELS_CPU_INTERNAL_SOFTMAX_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <limits>

#include "hwy/highway.h"
#include "kernels/cpu/internal/bf16-inl.h"
#include "kernels/cpu/internal/exp-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The row's maximum, in Compute<T> (bf16 widened to f32).
template <typename T>
Compute<T> RowMax(const T* x, int64_t n) {
  using C = Compute<T>;
  C m = -std::numeric_limits<C>::infinity();
  const hn::ScalableTag<C> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  // Four running maxima: one would wait on the latency of each Max in turn.
  auto b0 = hn::Set(d, m), b1 = b0, b2 = b0, b3 = b0;
  int64_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    b0 = hn::Max(b0, LoadWide(d, x + i));
    b1 = hn::Max(b1, LoadWide(d, x + i + lanes));
    b2 = hn::Max(b2, LoadWide(d, x + i + 2 * lanes));
    b3 = hn::Max(b3, LoadWide(d, x + i + 3 * lanes));
  }
  for (; i + lanes <= n; i += lanes) b0 = hn::Max(b0, LoadWide(d, x + i));
  m = hn::GetLane(hn::MaxOfLanes(d, hn::Max(hn::Max(b0, b1), hn::Max(b2, b3))));
  for (; i < n; ++i) m = std::max(m, Convert<C>(x[i]));
  return m;
}

// sum_j exp(x_j - m) for the row maximum m, in Compute<T>; with `store`, exp(x_j - m)
// is also written to store[j]. Subtracting m is exact for the values that matter
// (those within a factor 2 of m), which keeps the result accurate even for large
// logits.
template <typename T>
Compute<T> SumExp(const T* x, int64_t n, Compute<T> m, T* store) {
  using C = Compute<T>;
  const hn::ScalableTag<C> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto shift = hn::Set(d, m);
  auto s0 = hn::Zero(d), s1 = s0;
  int64_t i = 0;
  // Two independent exp chains per iteration keep both FMA ports busy.
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto e0 = ExpNonPositive(d, hn::Sub(LoadWide(d, x + i), shift));
    const auto e1 = ExpNonPositive(d, hn::Sub(LoadWide(d, x + i + lanes), shift));
    if (store) {
      StoreNarrow(e0, d, store + i);
      StoreNarrow(e1, d, store + i + lanes);
    }
    s0 = hn::Add(s0, e0);
    s1 = hn::Add(s1, e1);
  }
  for (; i + lanes <= n; i += lanes) {
    const auto e = ExpNonPositive(d, hn::Sub(LoadWide(d, x + i), shift));
    if (store) StoreNarrow(e, d, store + i);
    s0 = hn::Add(s0, e);
  }
  C sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  if (i < n) {  // the tail through a padded vector; padding is -inf, so exp gives 0
    T padded[HWY_MAX_BYTES / sizeof(C)];
    HWY_ALIGN C values[HWY_MAX_BYTES / sizeof(C)];
    std::fill(padded, padded + lanes, Convert<T>(-std::numeric_limits<C>::infinity()));
    std::copy(x + i, x + n, padded);
    hn::Store(ExpNonPositive(d, hn::Sub(LoadWide(d, padded), shift)), d, values);
    for (int64_t j = 0; j < n - i; ++j) {
      sum += values[j];
      if (store) store[i + j] = Convert<T>(values[j]);
    }
  }
  return sum;
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu::internal
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
