// bf16 in the Highway kernels: elements stored as bf16 are loaded as f32 vectors and
// stored back rounded once, so that a kernel templated on its storage type T computes
// in Compute<T> (f32 for bf16) and reads and writes T. A textual header, included once
// per SIMD target after hwy/highway.h (Highway's per-target include guard below).

// The element types and their arithmetic types, once for all targets.
#ifndef EMBER_KERNELS_CPU_INTERNAL_BF16_COMPUTE_H_
#define EMBER_KERNELS_CPU_INTERNAL_BF16_COMPUTE_H_
#include <type_traits>

#include "core/dtype.h"

namespace ember::kernels::cpu::internal {

// The type a kernel computes an element of type T in: bf16 in f32, f32 and f64 in
// themselves.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, BFloat16>, float, T>;

}  // namespace ember::kernels::cpu::internal
#endif  // EMBER_KERNELS_CPU_INTERNAL_BF16_COMPUTE_H_

#if defined(EMBER_KERNELS_CPU_INTERNAL_BF16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_CPU_INTERNAL_BF16_INL_H_
#undef EMBER_KERNELS_CPU_INTERNAL_BF16_INL_H_
#else
#define EMBER_KERNELS_CPU_INTERNAL_BF16_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Lanes(d) elements from p (unaligned) as a vector of d's type: f32 and f64 as they
// are, bf16 widened to f32 exactly (its bits moved to the top half).
template <class D>
hn::Vec<D> LoadWide(D d, const hn::TFromD<D>* p) {
  return hn::LoadU(d, p);
}
template <class D>
hn::Vec<D> LoadWide(D d, const BFloat16* p) {
  static_assert(std::is_same_v<hn::TFromD<D>, float>, "bf16 widens to f32");
  const hn::RebindToUnsigned<D> du;
  const hn::Rebind<uint16_t, D> d16;
  const auto bits = hn::PromoteTo(du, hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p)));
  return hn::BitCast(d, hn::ShiftLeft<16>(bits));
}

// Stores v's Lanes(d) elements to p (unaligned): f32 and f64 as they are; to bf16 with
// BFloat16::FromFloat's rounding (to nearest even: add 0x7fff plus the lowest kept bit,
// keep the top 16 bits; a NaN keeps its top bits, made quiet).
template <class D>
void StoreNarrow(hn::Vec<D> v, D d, hn::TFromD<D>* p) {
  hn::StoreU(v, d, p);
}
template <class D>
void StoreNarrow(hn::Vec<D> v, D d, BFloat16* p) {
  static_assert(std::is_same_v<hn::TFromD<D>, float>, "bf16 narrows from f32");
  const hn::RebindToUnsigned<D> du;
  const hn::Rebind<uint16_t, D> d16;
  const auto bits = hn::BitCast(du, v);
  const auto keep = hn::ShiftRight<16>(bits);
  const auto rounded = hn::ShiftRight<16>(
      hn::Add(bits, hn::Add(hn::Set(du, 0x7fffu), hn::And(keep, hn::Set(du, 1u)))));
  const auto quiet = hn::Or(keep, hn::Set(du, 0x40u));
  const auto result = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), quiet, rounded);
  // As i32 (every value fits in 16 bits): Highway demotes i32, not u32, to u16.
  hn::StoreU(hn::DemoteTo(d16, hn::BitCast(hn::RebindToSigned<decltype(du)>(), result)), d16,
             reinterpret_cast<uint16_t*>(p));
}

// out[i] = bf16(in[i]) for n contiguous floats, rounded as BFloat16::FromFloat.
inline void NarrowRow(int64_t n, const float* in, BFloat16* out) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) StoreNarrow(hn::LoadU(df, in + i), df, out + i);
  for (; i < n; ++i) out[i] = BFloat16::FromFloat(in[i]);
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu::internal
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
