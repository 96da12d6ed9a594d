// Elementwise binary kernels (see binary.h). The f32/f64 arithmetic is Highway SIMD,
// compiled once per target; integer dtypes, comparisons, Pow and Where use plain
// loops that the compiler vectorises where it can.

#include "kernels/cpu/binary.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "kernels/cpu/internal/strided.h"
#include "kernels/cpu/thread_pool.h"

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

// Each op in two forms: on vectors, and on scalars for strided rows. Both are single
// IEEE operations (or the same selects), so the paths agree to the bit.
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
// NaN if either is NaN, else the larger (smaller) one.
struct MaximumOp {
  template <class D, class V>
  V operator()(D, V a, V b) const {
    return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::Max(a, b)));
  }
  template <typename T>
  T operator()(T a, T b) const {
    return std::isnan(a) ? a : std::isnan(b) ? b : std::max(a, b);
  }
};
struct MinimumOp {
  template <class D, class V>
  V operator()(D, V a, V b) const {
    return hn::IfThenElse(hn::IsNaN(a), a, hn::IfThenElse(hn::IsNaN(b), b, hn::Min(a, b)));
  }
  template <typename T>
  T operator()(T a, T b) const {
    return std::isnan(a) ? a : std::isnan(b) ? b : std::min(a, b);
  }
};

// One row of n elements; a and b step by sa and sb (elements), out is contiguous.
template <class Op, typename T>
void Row(int64_t n, const T* a, int64_t sa, const T* b, int64_t sb, T* out) {
  const Op op;
  if (sa == 1 && sb == 1) {
    Map(n, out, op, a, b);
  } else if (sa == 1 && sb == 0) {
    const T scalar = *b;
    Map(
        n, out, [&](auto d, auto x) { return op(d, x, hn::Set(d, scalar)); }, a);
  } else if (sa == 0 && sb == 1) {
    const T scalar = *a;
    Map(
        n, out, [&](auto d, auto y) { return op(d, hn::Set(d, scalar), y); }, b);
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i * sa], b[i * sb]);
  }
}

#define EMBER_BINARY_ROW(Name)                                                           \
  void Name##RowF32(int64_t n, const float* a, int64_t sa, const float* b, int64_t sb,   \
                    float* out) {                                                        \
    Row<Name##Op>(n, a, sa, b, sb, out);                                                 \
  }                                                                                      \
  void Name##RowF64(int64_t n, const double* a, int64_t sa, const double* b, int64_t sb, \
                    double* out) {                                                       \
    Row<Name##Op>(n, a, sa, b, sb, out);                                                 \
  }
EMBER_BINARY_ROW(Add)
EMBER_BINARY_ROW(Sub)
EMBER_BINARY_ROW(Mul)
EMBER_BINARY_ROW(Div)
EMBER_BINARY_ROW(Maximum)
EMBER_BINARY_ROW(Minimum)
#undef EMBER_BINARY_ROW

}  // namespace HWY_NAMESPACE
}  // namespace ember::kernels::cpu
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels::cpu {
namespace {

// Work per thread below which a loop stays on one thread (elements).
constexpr int64_t kGrain = 32768;

template <typename T>
using RowFn = void (*)(int64_t, const T*, int64_t, const T*, int64_t, T*);

// Runs row(n, offsets..., strides..., out) over every row of the merged loop, split
// across the pool: by rows, or within the one row when everything merged into one.
// `row` gets element offsets; out is contiguous, so its inner stride is 1.
template <size_t N, typename RowBody>
void ForRows(IntSpan shape, const std::array<IntSpan, N>& strides, const RowBody& row) {
  const int64_t numel = NumElements(shape);
  if (numel == 0) return;
  const Strides out_strides = ContiguousStrides(shape);
  std::array<IntSpan, N + 1> all;
  for (size_t k = 0; k < N; ++k) all[k] = strides[k];
  all[N] = out_strides;
  const auto loop = internal::Coalesce<N + 1>(shape, all);
  const int64_t length = loop.row_length(), rows = loop.rows();
  if (rows == 1) {
    std::array<int64_t, N + 1> step;
    for (size_t k = 0; k <= N; ++k) step[k] = loop.strides[k][0];
    ParallelFor(length, kGrain, [&](int64_t begin, int64_t end) {
      std::array<int64_t, N + 1> offset;
      for (size_t k = 0; k <= N; ++k) offset[k] = begin * step[k];
      row(offset, end - begin, step);
    });
    return;
  }
  ParallelFor(rows, std::max<int64_t>(1, kGrain / length), [&](int64_t begin, int64_t end) {
    internal::ForEachRow(loop, begin, end, [&](const auto& offset, int64_t n, const auto& step) {
      row(offset, n, step);
    });
  });
}

void CheckDType(const char* op, DType dtype, bool integers) {
  const bool is_float = dtype == DType::kF32 || dtype == DType::kF64;
  const bool is_int =
      dtype == DType::kI32 || dtype == DType::kI64 || dtype == DType::kU8 || dtype == DType::kU16;
  EMBER_CHECK(is_float || (integers && is_int), op, ": dtype ", DTypeName(dtype),
              " is not supported (", integers ? "f32, f64, i32, i64, u8 or u16" : "f32 or f64",
              ")");
}

// The SIMD ops: f32/f64 rows through the dispatched row function, integer dtypes
// through the same op's scalar form.
template <class ScalarOp>
void Arithmetic(const char* op, DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out,
                RowFn<float> f32, RowFn<double> f64, bool integers) {
  CheckDType(op, dtype, integers);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T* pa = static_cast<const T*>(a.data);
      const T* pb = static_cast<const T*>(b.data);
      T* po = static_cast<T*>(out);
      ForRows<2>(shape, {a.strides, b.strides}, [&](const auto& o, int64_t n, const auto& s) {
        if constexpr (std::is_same_v<T, float>) {
          f32(n, pa + o[0], s[0], pb + o[1], s[1], po + o[2]);
        } else if constexpr (std::is_same_v<T, double>) {
          f64(n, pa + o[0], s[0], pb + o[1], s[1], po + o[2]);
        } else {
          const ScalarOp scalar;
          for (int64_t i = 0; i < n; ++i)
            po[o[2] + i] = scalar(pa[o[0] + i * s[0]], pb[o[1] + i * s[1]]);
        }
      });
    }
  });
}

// Integer forms (C++ semantics: wrap-around for unsigned, as PyTorch).
struct IntAdd {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a + b);
  }
};
struct IntSub {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a - b);
  }
};
struct IntMul {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a * b);
  }
};
struct IntMax {
  template <typename T>
  T operator()(T a, T b) const {
    return std::max(a, b);
  }
};
struct IntMin {
  template <typename T>
  T operator()(T a, T b) const {
    return std::min(a, b);
  }
};
struct NoIntegers {
  template <typename T>
  T operator()(T, T) const {
    return T();
  }
};

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
      ForRows<2>(shape, {a.strides, b.strides}, [&](const auto& o, int64_t n, const auto& s) {
        for (int64_t i = 0; i < n; ++i)
          po[o[2] + i] = compare(pa[o[0] + i * s[0]], pb[o[1] + i * s[1]]);
      });
    }
  });
}

}  // namespace

#define EMBER_DEFINE_ARITHMETIC(Name, name, IntOp, integers)                              \
  HWY_EXPORT(Name##RowF32);                                                               \
  HWY_EXPORT(Name##RowF64);                                                               \
  void Name(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {            \
    Arithmetic<IntOp>(name, dtype, shape, a, b, out, &HWY_DYNAMIC_DISPATCH(Name##RowF32), \
                      &HWY_DYNAMIC_DISPATCH(Name##RowF64), integers);                     \
  }
EMBER_DEFINE_ARITHMETIC(Add, "add", IntAdd, true)
EMBER_DEFINE_ARITHMETIC(Sub, "sub", IntSub, true)
EMBER_DEFINE_ARITHMETIC(Mul, "mul", IntMul, true)
EMBER_DEFINE_ARITHMETIC(Div, "div", NoIntegers, false)
EMBER_DEFINE_ARITHMETIC(Maximum, "maximum", IntMax, true)
EMBER_DEFINE_ARITHMETIC(Minimum, "minimum", IntMin, true)
#undef EMBER_DEFINE_ARITHMETIC

void Pow(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  CheckDType("pow", dtype, /*integers=*/false);
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* pa = static_cast<const T*>(a.data);
      const T* pb = static_cast<const T*>(b.data);
      T* po = static_cast<T*>(out);
      ForRows<2>(shape, {a.strides, b.strides}, [&](const auto& o, int64_t n, const auto& s) {
        for (int64_t i = 0; i < n; ++i)
          po[o[2] + i] = std::pow(pa[o[0] + i * s[0]], pb[o[1] + i * s[1]]);
      });
    }
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
    ForRows<3>(shape, {condition.strides, a.strides, b.strides},
               [&](const auto& o, int64_t n, const auto& s) {
                 for (int64_t i = 0; i < n; ++i) {
                   po[o[3] + i] = pc[o[0] + i * s[0]] ? pa[o[1] + i * s[1]] : pb[o[2] + i * s[2]];
                 }
               });
  });
}

}  // namespace ember::kernels::cpu
#endif  // HWY_ONCE
