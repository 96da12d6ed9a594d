// ExpNonPositive: exp(x) for x <= 0, the argument softmax and cross entropy take after
// subtracting the row maximum; and StableSigmoid, the logistic function through it. A
// textual header, included once per SIMD target by a
// kernel's .cc after hwy/highway.h (Highway's per-target include guard below).

#if defined(EMBER_KERNELS_CPU_INTERNAL_EXP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_CPU_INTERNAL_EXP_INL_H_
#undef EMBER_KERNELS_CPU_INTERNAL_EXP_INL_H_
#else
#define EMBER_KERNELS_CPU_INTERNAL_EXP_INL_H_
#endif

#include <cstdint>
#include <type_traits>

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu::internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// exp(x) for x <= 0 (and -inf), within 2 ulp of the exact value where that is a normal
// float; 0 where it would be subnormal (x < ln(FLT_MIN)). About 16 vector operations in
// f32, against about 28 for hn::Exp, which also handles x > 0 and the subnormal range:
// softmax spends most of its time here. f64 uses hn::Exp.
//
//   x = n ln2 + r, n = round(x / ln2), |r| <= ln2 / 2  (ln2 in two parts: r is exact)
//   exp(r) ~ 1 + r + r^2 P(r)                          (Cephes expf's degree-5 P)
//   exp(x) = 2^n exp(r), 2^n built from its bits: (n + 127) << 23.
// n comes from one FMA: adding 1.5 * 2^23 + 127 rounds x / ln2 to an integer and leaves
// n + 127 in the low mantissa bits, whence the shift.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V ExpNonPositive(D d, V x) {
  using T = hn::TFromD<D>;
  if constexpr (!std::is_same_v<T, float>) {
    return hn::Exp(d, x);
  } else {
    const hn::RebindToSigned<D> di;
    constexpr float kShift = 12582912.0f + 127.0f;  // 1.5 * 2^23 + 127
    const V t = hn::MulAdd(x, hn::Set(d, 1.44269504088896341f), hn::Set(d, kShift));
    const V n = hn::Sub(t, hn::Set(d, kShift));
    V r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), x);  // exact: few mantissa bits
    r = hn::NegMulAdd(n, hn::Set(d, -2.12194440e-4f), r);
    V p = hn::MulAdd(hn::Set(d, 1.9875691500e-4f), r, hn::Set(d, 1.3981999507e-3f));
    p = hn::MulAdd(p, r, hn::Set(d, 8.3334519073e-3f));
    p = hn::MulAdd(p, r, hn::Set(d, 4.1665795894e-2f));
    p = hn::MulAdd(p, r, hn::Set(d, 1.6666665459e-1f));
    p = hn::MulAdd(p, r, hn::Set(d, 5.0000001201e-1f));
    const V exp_r = hn::Add(hn::MulAdd(p, hn::Mul(r, r), r), hn::Set(d, 1.0f));
    const V two_n = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, t)));
    // Below ln(FLT_MIN), n + 127 no longer fits the exponent field: flush to 0 (exact
    // for -inf, the masked positions). A NaN compares false and stays NaN.
    return hn::IfThenZeroElse(hn::Lt(x, hn::Set(d, -87.3365447505f)), hn::Mul(exp_r, two_n));
  }
}

// 1 / (1 + e^-z) through e = exp(-|z|) <= 1, which never overflows:
//   z >= 0: 1 / (1 + e),   z < 0: e / (1 + e).
// (For z < -87.3 that is 0 where the exact value is subnormal.) GELU and sigmoid use it.
template <class D, class V = hn::VFromD<D>>
HWY_INLINE V StableSigmoid(D d, V z) {
  const V one = hn::Set(d, 1);
  const V e = ExpNonPositive(d, hn::Neg(hn::Abs(z)));
  return hn::Div(hn::IfThenElse(hn::Lt(z, hn::Zero(d)), e, one), hn::Add(one, e));
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu::internal
HWY_AFTER_NAMESPACE();

#endif  // per-target include guard
