// kernels/binary.h on the GPU: rows of contiguous or broadcast operands through
// internal::MapRows; any other layout one thread per output element (grid-stride), its
// operands' offsets from the merged strided layout (internal/device.cu.h). Each op is
// the same single IEEE operation or select as the CPU's, so both give the same bits.

#include <cuda_runtime.h>

#include "kernels/binary.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/internal/device.cu.h"

namespace ember::kernels::cuda {
namespace {

using internal::Strided;

// out[i] = op(a[i], b[i]); out is the third operand of the layout.
template <typename T, typename R, typename Op>
__global__ void BinaryKernel(const T* a, const T* b, R* out, Strided<3> layout, Op op) {
  EMBER_GRID_STRIDE(i, layout.numel) {
    int64_t o[3];
    layout.Offsets(i, o);
    out[o[2]] = internal::Narrow<R>(op(internal::Widen(a[o[0]]), internal::Widen(b[o[1]])));
  }
}

template <typename T>
__global__ void WhereKernel(const bool* condition, const T* a, const T* b, T* out,
                            Strided<4> layout) {
  EMBER_GRID_STRIDE(i, layout.numel) {
    int64_t o[4];
    layout.Offsets(i, o);
    out[o[3]] = condition[o[0]] ? a[o[1]] : b[o[2]];
  }
}

// Launches op over the broadcast shape for element type T, writing R.
template <typename T, typename R, typename Op>
void Launch(const char* name, IntSpan shape, StridedIn a, StridedIn b, void* out, Op op) {
  const Strides out_strides = ContiguousStrides(shape);
  const Strided<3> layout =
      internal::MakeStrided<3>(name, shape, {a.strides, b.strides, IntSpan(out_strides)});
  if (layout.numel == 0) return;
  // Rows (or one row) along which each operand is contiguous or one broadcast value, as
  // same-shape operands, a bias row or a scalar: internal::MapRows, with the grid for
  // row and column and 16-byte vectors (1.7x PyTorch's time for x + bias, [8192, 768],
  // before). Rows shorter than a warp, or any other layout, take the general kernel.
  const int d = layout.ndim - 1;
  if (layout.ndim >= 1 && layout.ndim <= 2 && layout.shape[d] >= 32 &&
      (layout.strides[0][d] == 0 || layout.strides[0][d] == 1) &&
      (layout.strides[1][d] == 0 || layout.strides[1][d] == 1)) {
    const int64_t rows = layout.ndim == 2 ? layout.shape[0] : 1;
    auto input = [&](const StridedIn& x, int k) {
      return internal::RowInput<T>{static_cast<const T*>(x.data),
                                   layout.ndim == 2 ? layout.strides[k][0] : 0,
                                   static_cast<int>(layout.strides[k][d])};
    };
    internal::MapRows<2>(rows, layout.shape[d],
                         internal::RowInputs<T, 2>{{input(a, 0), input(b, 1)}},
                         static_cast<R*>(out), op);
  } else {
    BinaryKernel<<<internal::Blocks(layout.numel), internal::kThreads>>>(
        static_cast<const T*>(a.data), static_cast<const T*>(b.data), static_cast<R*>(out), layout,
        op);
  }
  EMBER_CUDA_CHECK_LAUNCH(name);
}

// The dtypes of kernels/binary.h's arithmetic: f32, f64 and bf16 (in float, rounded
// once), and with `integers` i32, i64, u8, u16 (which wrap, as in C++ and PyTorch).
template <typename Op>
void Arithmetic(const char* name, DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out,
                bool integers, Op op) {
  const bool is_float = dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kBF16;
  const bool is_int =
      dtype == DType::kI32 || dtype == DType::kI64 || dtype == DType::kU8 || dtype == DType::kU16;
  EMBER_CHECK(is_float || (integers && is_int), name, ": dtype ", DTypeName(dtype),
              " is not supported (",
              integers ? "f32, f64, bf16, i32, i64, u8 or u16" : "f32, f64 or bf16", ")");
  internal::VisitDeviceType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr ((std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
                  std::is_same_v<T, internal::Bf16>) {
      Launch<T, T>(name, shape, a, b, out, op);
    }
  });
}

// Comparisons: any dtype but bf16 and f16; out is bool.
template <typename Op>
void Comparison(const char* name, DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out,
                Op op) {
  EMBER_CHECK(dtype != DType::kBF16 && dtype != DType::kF16, name, ": dtype ", DTypeName(dtype),
              " is not supported (convert to f32 first)");
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T>) Launch<T, bool>(name, shape, a, b, out, op);
  });
}

#define EMBER_BINARY_OP(Name, expression)        \
  struct Name##Op {                              \
    template <typename T>                        \
    __device__ auto operator()(T a, T b) const { \
      return expression;                         \
    }                                            \
  };

// Arithmetic results are cast back to T: u8 + u8 is computed in int, then wraps.
EMBER_BINARY_OP(Add, T(a + b))
EMBER_BINARY_OP(Sub, T(a - b))
EMBER_BINARY_OP(Mul, T(a* b))
EMBER_BINARY_OP(Div, T(a / b))
// NaN propagates (a != a only for NaN), as in PyTorch.
EMBER_BINARY_OP(Maximum, T((a != a || a > b) ? a : b))
EMBER_BINARY_OP(Minimum, T((a != a || a < b) ? a : b))
EMBER_BINARY_OP(Pow, T(pow(a, b)))
EMBER_BINARY_OP(Eq, a == b)
EMBER_BINARY_OP(Ne, a != b)
EMBER_BINARY_OP(Lt, a < b)
EMBER_BINARY_OP(Le, a <= b)
EMBER_BINARY_OP(Gt, a > b)
EMBER_BINARY_OP(Ge, a >= b)
#undef EMBER_BINARY_OP

}  // namespace

void Add(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic("add", dtype, shape, a, b, out, true, AddOp{});
}
void Sub(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic("sub", dtype, shape, a, b, out, true, SubOp{});
}
void Mul(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic("mul", dtype, shape, a, b, out, true, MulOp{});
}
void Div(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic("div", dtype, shape, a, b, out, false, DivOp{});
}
void Maximum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic("maximum", dtype, shape, a, b, out, true, MaximumOp{});
}
void Minimum(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic("minimum", dtype, shape, a, b, out, true, MinimumOp{});
}
void Pow(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Arithmetic("pow", dtype, shape, a, b, out, false, PowOp{});
}
void Eq(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("eq", dtype, shape, a, b, out, EqOp{});
}
void Ne(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("ne", dtype, shape, a, b, out, NeOp{});
}
void Lt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("lt", dtype, shape, a, b, out, LtOp{});
}
void Le(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("le", dtype, shape, a, b, out, LeOp{});
}
void Gt(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("gt", dtype, shape, a, b, out, GtOp{});
}
void Ge(DType dtype, IntSpan shape, StridedIn a, StridedIn b, void* out) {
  Comparison("ge", dtype, shape, a, b, out, GeOp{});
}

void Where(DType dtype, IntSpan shape, StridedIn condition, StridedIn a, StridedIn b, void* out) {
  const Strides out_strides = ContiguousStrides(shape);
  const Strided<4> layout = internal::MakeStrided<4>(
      "where", shape, {condition.strides, a.strides, b.strides, IntSpan(out_strides)});
  if (layout.numel == 0) return;
  internal::VisitDeviceType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    WhereKernel<<<internal::Blocks(layout.numel), internal::kThreads>>>(
        static_cast<const bool*>(condition.data), static_cast<const T*>(a.data),
        static_cast<const T*>(b.data), static_cast<T*>(out), layout);
  });
  EMBER_CUDA_CHECK_LAUNCH("where");
}

}  // namespace ember::kernels::cuda
