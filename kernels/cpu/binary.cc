// Elementwise binary kernels (see binary.h). The arithmetic is compiled once per SIMD
// target (Highway vectors for f32/f64, the scalar form of the same op for integers);
// comparisons, Pow and Where are plain loops that the compiler vectorises where it can.

#include "kernels/binary.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "base/error.h"
#include "kernels/cpu/internal/dispatch.h"
#include "kernels/cpu/internal/strided.h"

// hwy/foreach_target.h must come first: it re-includes this file once per target.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/binary.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "kernels/cpu/internal/map-inl.h"
// clang-format on

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using internal::HWY_NAMESPACE::Map;

void CheckArithmeticDType(const char* op, DType dtype, bool integers) {
  const bool is_float = dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kBF16;
  const bool is_int =
      dtype == DType::kI32 || dtype == DType::kI64 || dtype == DType::kU8 || dtype == DType::kU16;
  EMBER_CHECK(is_float || (integers && is_int), op, ": dtype ", DTypeName(dtype),
              " is not supported (",
              integers ? "f32, f64, bf16, i32, i64, u8 or u16" : "f32, f64 or bf16", ")");
}

// Each op in two forms: on vectors, and on scalars for strided rows and integer dtypes.
// Both are single IEEE operations (or the same selects), so the paths agree to the bit.
struct AddOp {
  template <class D, class V>
  V operator()(D, V a, V b) const {
    return hn::Add(a, b);
  }
  template <typename T>
  T operator()(T a, T b) const {
    return a + b;
  }
};
struct SubOp {
  template <class D, class V>
  V operator()(D, V a, V b) const {
    return hn::Sub(a, b);
  }
  template <typename T>
  T operator()(T a, T b) const {
    return a - b;
  }
};
struct MulOp {
  template <class D, class V>
  V operator()(D, V a, V b) const {
    return hn::Mul(a, b);
  }
  template <typename T>
  T operator()(T a, T b) const {
    return a * b;
  }
};
struct DivOp {
  template <class D, class V>
  V operator()(D, V a, V b) const {
    return hn::Div(a, b);
  }
  template <typename T>
  T operator()(T a, T b) const {
    return a / b;
  }
};
// NaN if either is NaN, else the larger (smaller) one: a where a > b (a < b), else b,
// so a tie (+0 and -0) gives the second operand on every SIMD target and in scalar
// code alike (hn::Max leaves ties to the target), as the CUDA kernels do.
struct MaximumOp {
  template <class D, class V>
  V operator()(D, V a, V b) const {
    return hn::IfThenElse(hn::IsNaN(a), a,
                          hn::IfThenElse(hn::IsNaN(b), b, hn::IfThenElse(hn::Gt(a, b), a, b)));
  }
  template <typename T>
  T operator()(T a, T b) const {
    return std::isnan(a) ? a : std::isnan(b) ? b : a > b ? a : b;
  }
};
struct MinimumOp {
  template <class D, class V>
  V operator()(D, V a, V b) const {
    return hn::IfThenElse(hn::IsNaN(a), a,
                          hn::IfThenElse(hn::IsNaN(b), b, hn::IfThenElse(hn::Lt(a, b), a, b)));
  }
  template <typename T>
  T operator()(T a, T b) const {
    return std::isnan(a) ? a : std::isnan(b) ? b : a < b ? a : b;
  }
};

// One row of n elements; a and b step by sa and sb (elements), out is contiguous. bf16
// computes in f32 and rounds once.
template <class Op, typename T>
void Row(int64_t n, const T* a, int64_t sa, const T* b, int64_t sb, T* out) {
  using C = internal::Compute<T>;
  const Op op;
  if (sa == 1 && sb == 1) {
    Map(n, out, op, a, b);
  } else if (sa == 1 && sb == 0) {
    const C scalar = Convert<C>(*b);
    Map(
        n, out, [&](auto d, auto x) { return op(d, x, hn::Set(d, scalar)); }, a);
  } else if (sa == 0 && sb == 1) {
    const C scalar = Convert<C>(*a);
    Map(
        n, out, [&](auto d, auto y) { return op(d, hn::Set(d, scalar), y); }, b);
  } else {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = Convert<T>(op(Convert<C>(a[i * sa]), Convert<C>(b[i * sb])));
    }
  }
}

// The arithmetic entry points: f32/f64/bf16 rows in SIMD (Row), integer dtypes through
// the op's scalar form (C++ semantics: wrap-around for unsigned, as PyTorch).
template <class Op>
void Arithmetic(const char* op, DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out,
                bool integers) {
  CheckArithmeticDType(op, dtype, integers);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr bool kBf16 = std::is_same_v<T, BFloat16>;
    if constexpr ((std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) || kBf16) {
      const T* pa = static_cast<const T*>(a.data);
      const T* pb = static_cast<const T*>(b.data);
      T* po = static_cast<T*>(out);
      internal::ParallelForRows<2>(
          shape, {a.strides, b.strides}, [&](const auto& o, int64_t n, const auto& s) {
            if constexpr (std::is_floating_point_v<T> || kBf16) {
              Row<Op>(n, pa + o[0], s[0], pb + o[1], s[1], po + o[2]);
            } else {
              const Op scalar;
              for (int64_t i = 0; i < n; ++i) {
                po[o[2] + i] = static_cast<T>(scalar(pa[o[0] + i * s[0]], pb[o[1] + i * s[1]]));
              }
            }
          });
    }
  });
}

void Add(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic<AddOp>("add", dtype, shape, a, b, out, /*integers=*/true);
}
void Sub(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic<SubOp>("sub", dtype, shape, a, b, out, /*integers=*/true);
}
void Mul(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic<MulOp>("mul", dtype, shape, a, b, out, /*integers=*/true);
}
void Div(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic<DivOp>("div", dtype, shape, a, b, out, /*integers=*/false);
}
void Maximum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic<MaximumOp>("maximum", dtype, shape, a, b, out, /*integers=*/true);
}
void Minimum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic<MinimumOp>("minimum", dtype, shape, a, b, out, /*integers=*/true);
}

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {

HWY_EXPORT(Add);
HWY_EXPORT(Sub);
HWY_EXPORT(Mul);
HWY_EXPORT(Div);
HWY_EXPORT(Maximum);
HWY_EXPORT(Minimum);

void Add(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  HWY_DYNAMIC_DISPATCH(Add)(dtype, shape, a, b, out);
}
void Sub(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  HWY_DYNAMIC_DISPATCH(Sub)(dtype, shape, a, b, out);
}
void Mul(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  HWY_DYNAMIC_DISPATCH(Mul)(dtype, shape, a, b, out);
}
void Div(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  HWY_DYNAMIC_DISPATCH(Div)(dtype, shape, a, b, out);
}
void Maximum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  HWY_DYNAMIC_DISPATCH(Maximum)(dtype, shape, a, b, out);
}
void Minimum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  HWY_DYNAMIC_DISPATCH(Minimum)(dtype, shape, a, b, out);
}

// The ops without SIMD code: plain loops over the merged rows.
namespace {

template <typename Compare>
void Comparison(const char* op, DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out,
                Compare compare) {
  EMBER_CHECK(dtype != DType::kBF16 && dtype != DType::kF16, op, ": dtype ", DTypeName(dtype),
              " is not supported (convert to f32 first)");
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T>) {
      const T* pa = static_cast<const T*>(a.data);
      const T* pb = static_cast<const T*>(b.data);
      bool* po = static_cast<bool*>(out);
      internal::ParallelForRows<2>(
          shape, {a.strides, b.strides}, [&](const auto& o, int64_t n, const auto& s) {
            for (int64_t i = 0; i < n; ++i)
              po[o[2] + i] = compare(pa[o[0] + i * s[0]], pb[o[1] + i * s[1]]);
          });
    }
  });
}

}  // namespace

void Pow(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  DispatchFloatOrBf16("pow", dtype, [&](auto type) {
    using T = decltype(type);
    using C = internal::Compute<T>;
    const T* pa = static_cast<const T*>(a.data);
    const T* pb = static_cast<const T*>(b.data);
    T* po = static_cast<T*>(out);
    internal::ParallelForRows<2>(
        shape, {a.strides, b.strides}, [&](const auto& o, int64_t n, const auto& s) {
          for (int64_t i = 0; i < n; ++i) {
            po[o[2] + i] = Convert<T>(
                std::pow(Convert<C>(pa[o[0] + i * s[0]]), Convert<C>(pb[o[1] + i * s[1]])));
          }
        });
  });
}

void Eq(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("eq", dtype, shape, a, b, out, [](auto x, auto y) { return x == y; });
}
void Ne(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("ne", dtype, shape, a, b, out, [](auto x, auto y) { return x != y; });
}
void Lt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("lt", dtype, shape, a, b, out, [](auto x, auto y) { return x < y; });
}
void Le(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("le", dtype, shape, a, b, out, [](auto x, auto y) { return x <= y; });
}
void Gt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("gt", dtype, shape, a, b, out, [](auto x, auto y) { return x > y; });
}
void Ge(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("ge", dtype, shape, a, b, out, [](auto x, auto y) { return x >= y; });
}

void Where(DType dtype, IntSpan shape, StridedIn condition, StridedIn a, StridedIn b, void* out) {
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool* pc = static_cast<const bool*>(condition.data);
    const T* pa = static_cast<const T*>(a.data);
    const T* pb = static_cast<const T*>(b.data);
    T* po = static_cast<T*>(out);
    internal::ParallelForRows<3>(shape, {condition.strides, a.strides, b.strides},
                                 [&](const auto& o, int64_t n, const auto& s) {
                                   for (int64_t i = 0; i < n; ++i) {
                                     po[o[3] + i] = pc[o[0] + i * s[0]] ? pa[o[1] + i * s[1]]
                                                                        : pb[o[2] + i * s[2]];
                                   }
                                 });
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
