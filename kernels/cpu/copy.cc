#include "kernels/cpu/copy.h"

#include <cstring>

namespace ember::kernels::cpu {
namespace {

// A strided loop nest over up to two operands, with dimensions of size 1 dropped and
// neighbouring dimensions merged where every operand steps through them as one
// (stride[d] == stride[d + 1] * size[d + 1]). The innermost dimension is last.
struct Loop {
  Shape shape;
  Strides strides[2];
};

Loop Coalesce(IntSpan shape, IntSpan a_strides, IntSpan b_strides) {
  Loop loop;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const bool mergeable = !loop.shape.empty() &&
                           loop.strides[0].back() == a_strides[d] * shape[d] &&
                           loop.strides[1].back() == b_strides[d] * shape[d];
    if (mergeable) {
      loop.shape.back() *= shape[d];
      loop.strides[0].back() = a_strides[d];
      loop.strides[1].back() = b_strides[d];
    } else {
      loop.shape.push_back(shape[d]);
      loop.strides[0].push_back(a_strides[d]);
      loop.strides[1].push_back(b_strides[d]);
    }
  }
  if (loop.shape.empty()) {  // a scalar, or every size is 1: one element
    loop.shape.push_back(1);
    loop.strides[0].push_back(1);
    loop.strides[1].push_back(1);
  }
  return loop;
}

// Calls inner(a_offset, b_offset, n, a_stride, b_stride) once per run of the
// innermost dimension (offsets in elements).
template <typename Inner>
void ForEachRow(const Loop& loop, Inner&& inner) {
  const size_t last = loop.shape.size() - 1;
  const IntSpan outer(loop.shape.data(), last);
  for (NdIndexIterator it(outer); !it.done(); it.Next()) {
    const int64_t a = FlatIndex(it.index(), loop.strides[0]);
    const int64_t b = FlatIndex(it.index(), loop.strides[1]);
    inner(a, b, loop.shape[last], loop.strides[0][last], loop.strides[1][last]);
  }
}

}  // namespace

void CopyCast(IntSpan shape, DType src_dtype, const void* src, IntSpan src_strides, DType dst_dtype,
              void* dst, IntSpan dst_strides) {
  if (NumElements(shape) == 0) return;
  const Loop loop = Coalesce(shape, src_strides, dst_strides);
  VisitDType(src_dtype, [&](auto src_tag) {
    using S = typename decltype(src_tag)::type;
    VisitDType(dst_dtype, [&](auto dst_tag) {
      using D = typename decltype(dst_tag)::type;
      const S* in = static_cast<const S*>(src);
      D* out = static_cast<D*>(dst);
      ForEachRow(loop, [&](int64_t a, int64_t b, int64_t n, int64_t sa, int64_t sb) {
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
  const Loop loop = Coalesce(shape, strides, strides);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    T* out = static_cast<T*>(dst);
    ForEachRow(loop, [&](int64_t a, int64_t, int64_t n, int64_t sa, int64_t) {
      for (int64_t i = 0; i < n; ++i) out[a + i * sa] = v;
    });
  });
}

}  // namespace ember::kernels::cpu
