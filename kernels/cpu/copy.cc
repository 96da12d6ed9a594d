// CopyCast and Fill (see copy.h): element by element through Convert, but for the
// conversions mixed precision makes in bulk (f32 <-> bf16 along contiguous rows), which
// run in SIMD once per target.

#include "kernels/copy.h"

#include <cstring>

#include "kernels/cpu/internal/strided.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/copy.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/cpu/internal/bf16-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using internal::HWY_NAMESPACE::LoadWide;

// out[i] = bf16(in[i]) for n contiguous floats, rounded as BFloat16::FromFloat.
void F32ToBf16(int64_t n, const float* in, BFloat16* out) {
  internal::HWY_NAMESPACE::NarrowRow(n, in, out);
}

// out[i] = float(in[i]).
void Bf16ToF32(int64_t n, const BFloat16* in, float* out) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(LoadWide(df, in + i), df, out + i);
  for (; i < n; ++i) out[i] = in[i].ToFloat();
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(F32ToBf16);
HWY_EXPORT(Bf16ToF32);

void CopyCast(IntSpan shape, DType src_dtype, const void* src, IntSpan src_strides, DType dst_dtype,
              void* dst, IntSpan dst_strides) {
  if (NumElements(shape) == 0) return;
  const auto loop = Coalesce<2>(shape, {src_strides, dst_strides});
  VisitDType(src_dtype, [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    VisitDType(dst_dtype, [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      const S* in = static_cast<const S*>(src);
      D* out = static_cast<D*>(dst);
      internal::ParallelForLoop(loop, [&](const auto& offset, int64_t n, const auto& step) {
        const int64_t a = offset[0], b = offset[1], sa = step[0], sb = step[1];
        if constexpr (std::is_same_v<S, D>) {
          if (sa == 1 && sb == 1) {
            std::memcpy(out + b, in + a, n * sizeof(D));
            return;
          }
        }
        if constexpr (std::is_same_v<S, float> && std::is_same_v<D, BFloat16>) {
          if (sa == 1 && sb == 1) {
            HWY_DYNAMIC_DISPATCH(F32ToBf16)
            (n, reinterpret_cast<const float*>(in + a), reinterpret_cast<BFloat16*>(out + b));
            return;
          }
        }
        if constexpr (std::is_same_v<S, BFloat16> && std::is_same_v<D, float>) {
          if (sa == 1 && sb == 1) {
            HWY_DYNAMIC_DISPATCH(Bf16ToF32)
            (n, reinterpret_cast<const BFloat16*>(in + a), reinterpret_cast<float*>(out + b));
            return;
          }
        }
        for (int64_t i = 0; i < n; ++i) out[b + i * sb] = Convert<D>(in[a + i * sa]);
      });
    });
  });
}

void Fill(IntSpan shape, DType dtype, void* dst, IntSpan strides, const Scalar& value) {
  if (NumElements(shape) == 0) return;
  const auto loop = Coalesce<1>(shape, {strides});
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    T* out = static_cast<T*>(dst);
    internal::ParallelForLoop(loop, [&](const auto& offset, int64_t n, const auto& step) {
      for (int64_t i = 0; i < n; ++i) out[offset[0] + i * step[0]] = v;
    });
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
