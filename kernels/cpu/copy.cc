#include "kernels/copy.h"

#include <cstring>

#include "kernels/cpu/internal/strided.h"

namespace ember::kernels::cpu {

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
