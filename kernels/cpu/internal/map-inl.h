// Map and Accumulate: the loops the Highway kernels share. A textual header, included
// once per SIMD target by a kernel's .cc after hwy/highway.h (Highway's per-target
// include guard below).

#if defined(EMBER_KERNELS_CPU_INTERNAL_MAP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_CPU_INTERNAL_MAP_INL_H_
#undef EMBER_KERNELS_CPU_INTERNAL_MAP_INL_H_
#else
#define EMBER_KERNELS_CPU_INTERNAL_MAP_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "kernels/cpu/internal/bf16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = op(d, in_0[i], in_1[i], ...) for i < n, all arrays contiguous and of one
// element type T, computed in Compute<T> (bf16 loaded as f32, the result rounded once):
// whole vectors, then the tail copied into zero-padded vectors, so that every element
// takes the same code path (and the same rounding) whatever n is. out may be one of
// the in.
template <typename T, class Op, typename... In>
void Map(int64_t n, T* out, const Op& op, const In*... in) {
  const hn::ScalableTag<Compute<T>> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) StoreNarrow(op(d, LoadWide(d, in + i)...), d, out + i);
  if (i == n) return;
  constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(Compute<T>);
  const size_t tail_bytes = static_cast<size_t>(n - i) * sizeof(T);
  T result[kMaxLanes];
  auto load_tail = [&](const T* src) {
    T padded[kMaxLanes] = {};
    std::memcpy(padded, src + i, tail_bytes);
    return LoadWide(d, padded);
  };
  StoreNarrow(op(d, load_tail(in)...), d, result);
  std::memcpy(out + i, result, tail_bytes);
}

// sum over j < n of f(d, a[j..], b[j..]) on whole vectors, plus f_scalar(a[j], b[j]) on
// the tail, in Compute<T> (bf16 widened); two accumulators. (A sum like this is not
// bit-identical to a scalar loop.)
template <typename T, class F, class FScalar>
Compute<T> Accumulate(int64_t n, const T* a, const T* b, const F& f, const FScalar& f_scalar) {
  using C = Compute<T>;
  const hn::ScalableTag<C> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto s0 = hn::Zero(d), s1 = s0;
  int64_t j = 0;
  for (; j + 2 * lanes <= n; j += 2 * lanes) {
    s0 = hn::Add(s0, f(d, LoadWide(d, a + j), LoadWide(d, b + j)));
    s1 = hn::Add(s1, f(d, LoadWide(d, a + j + lanes), LoadWide(d, b + j + lanes)));
  }
  for (; j + lanes <= n; j += lanes) s0 = hn::Add(s0, f(d, LoadWide(d, a + j), LoadWide(d, b + j)));
  C sum = hn::GetLane(hn::SumOfLanes(d, hn::Add(s0, s1)));
  for (; j < n; ++j) sum += f_scalar(Convert<C>(a[j]), Convert<C>(b[j]));
  return sum;
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu::internal
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
