// Map: the loop every elementwise Highway kernel shares. A textual header, included
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

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[i] = op(d, in_0[i], in_1[i], ...) for i < n, all arrays contiguous: whole
// vectors, then the tail copied into zero-padded vectors, so that every element takes
// the same code path (and the same rounding) whatever n is. out may be one of the in.
template <typename T, class Op, typename... In>
void Map(int64_t n, T* out, const Op& op, const In*... in) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(op(d, hn::LoadU(d, in + i)...), d, out + i);
  if (i == n) return;
  constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(T);
  const size_t tail_bytes = static_cast<size_t>(n - i) * sizeof(T);
  HWY_ALIGN T result[kMaxLanes];
  auto load_tail = [&](const T* src) {
    HWY_ALIGN T padded[kMaxLanes] = {};
    std::memcpy(padded, src + i, tail_bytes);
    return hn::Load(d, padded);
  };
  hn::Store(op(d, load_tail(in)...), d, result);
  std::memcpy(out + i, result, tail_bytes);
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu::internal
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
