// The fused AdamW step (see adamw.h) in Highway SIMD, compiled once per target.

#include "kernels/adamw.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "kernels/cpu/internal/dispatch.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/adamw.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
// clang-format on
#include "kernels/cpu/internal/bf16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// p_bf16: null, or (T = float) where the updated p goes rounded to bf16 as well.
template <typename T>
void Step(int64_t n, T* p, const T* g, T* m, T* v, BFloat16* p_bf16, const AdamWConstants<T>& k) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  auto update = [&](auto pv, auto gv, auto mv, auto vv, auto* po, auto* mo, auto* vo,
                    BFloat16* bo) {
    gv = hn::Mul(gv, hn::Set(d, k.grad_scale));
    pv = hn::Mul(pv, hn::Set(d, k.decay));
    mv = hn::Add(hn::Mul(mv, hn::Set(d, k.beta1)), hn::Mul(gv, hn::Set(d, k.one_minus_beta1)));
    vv = hn::Add(hn::Mul(vv, hn::Set(d, k.beta2)),
                 hn::Mul(hn::Mul(gv, gv), hn::Set(d, k.one_minus_beta2)));
    const auto denom = hn::Add(hn::Div(hn::Sqrt(vv), hn::Set(d, k.bc2_sqrt)), hn::Set(d, k.eps));
    pv = hn::Add(pv, hn::Mul(hn::Set(d, k.neg_step_size), hn::Div(mv, denom)));
    hn::StoreU(pv, d, po);
    hn::StoreU(mv, d, mo);
    hn::StoreU(vv, d, vo);
    if constexpr (std::is_same_v<T, float>) {
      if (bo) internal::HWY_NAMESPACE::StoreNarrow(pv, d, bo);
    }
  };
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    update(hn::LoadU(d, p + i), hn::LoadU(d, g + i), hn::LoadU(d, m + i), hn::LoadU(d, v + i),
           p + i, m + i, v + i, p_bf16 ? p_bf16 + i : nullptr);
  }
  if (i == n) return;
  // The tail through the same vector code on zero-padded copies, so that an element's
  // result does not depend on where a thread's range (or a tensor) starts or ends (a
  // scalar loop may contract a multiply and an add into one FMA).
  constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(T);
  const size_t tail_bytes = static_cast<size_t>(n - i) * sizeof(T);
  T tail[4][kMaxLanes] = {};
  BFloat16 tail_bf16[kMaxLanes];
  std::memcpy(tail[0], p + i, tail_bytes);
  std::memcpy(tail[1], g + i, tail_bytes);
  std::memcpy(tail[2], m + i, tail_bytes);
  std::memcpy(tail[3], v + i, tail_bytes);
  update(hn::LoadU(d, tail[0]), hn::LoadU(d, tail[1]), hn::LoadU(d, tail[2]), hn::LoadU(d, tail[3]),
         tail[0], tail[2], tail[3], p_bf16 ? tail_bf16 : nullptr);
  std::memcpy(p + i, tail[0], tail_bytes);
  std::memcpy(m + i, tail[2], tail_bytes);
  std::memcpy(v + i, tail[3], tail_bytes);
  if (p_bf16) std::memcpy(p_bf16 + i, tail_bf16, static_cast<size_t>(n - i) * sizeof(BFloat16));
}

// The tensors laid end to end as one range of elements, split across the pool; each
// thread steps through the pieces of the tensors its part covers.
void AdamWStep(DType dtype, int64_t count, const AdamWTensor* tensors) {
  std::vector<int64_t> start(count + 1, 0);  // tensor t's first element in the range
  for (int64_t t = 0; t < count; ++t) {
    EMBER_CHECK(tensors[t].hyper.step >= 1, "adamw: step must start at 1, got ",
                tensors[t].hyper.step);
    EMBER_CHECK(!tensors[t].p_bf16 || dtype == DType::kF32,
                "adamw: a bf16 copy of the parameter needs an f32 parameter, not ",
                DTypeName(dtype));
    start[t + 1] = start[t] + tensors[t].n;
  }
  DispatchFloat("adamw", dtype, [&](auto type) {
    using T = decltype(type);
    std::vector<AdamWConstants<T>> k(count);
    for (int64_t t = 0; t < count; ++t) k[t] = AdamWConstants<T>::Of(tensors[t].hyper);
    ParallelForWork(start[count], 1, [&](int64_t b, int64_t e) {
      int64_t t = std::upper_bound(start.begin(), start.end(), b) - start.begin() - 1;
      for (; b < e; ++t) {
        const int64_t end = std::min(e, start[t + 1]), i = b - start[t];
        const AdamWTensor& a = tensors[t];
        BFloat16* const p_bf16 = a.p_bf16 ? At<BFloat16>(a.p_bf16, i) : nullptr;
        Step(end - b, At<T>(a.p, i), At<T>(a.g, i), At<T>(a.m, i), At<T>(a.v, i), p_bf16, k[t]);
        b = end;
      }
    });
  });
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(AdamWStep);

void AdamWStep(DType dtype, int64_t count, const AdamWTensor* tensors) {
  HWY_DYNAMIC_DISPATCH(AdamWStep)(dtype, count, tensors);
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
