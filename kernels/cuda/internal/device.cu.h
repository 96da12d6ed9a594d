#ifndef EMBER_KERNELS_CUDA_INTERNAL_DEVICE_CU_H_
#define EMBER_KERNELS_CUDA_INTERNAL_DEVICE_CU_H_

// What every kernels/cuda .cu file shares: ember's dtypes as device types, dtype
// conversion with the CPU's exact bits, strided layouts, and the launch shape of an
// elementwise kernel.

#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "base/error.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "kernels/strided.h"

namespace ember::kernels::cuda::internal {

// ---- dtypes on the device ----

// bf16 and f16 as raw bits: core/dtype.h's BFloat16 and Float16 have the same
// layout, but their conversions are host code.
struct Bf16 {
  uint16_t bits;
};
struct F16 {
  uint16_t bits;
};

// The device type of an ember element type T.
template <typename T>
struct DeviceTypeOf {
  using type = T;
};
template <>
struct DeviceTypeOf<BFloat16> {
  using type = Bf16;
};
template <>
struct DeviceTypeOf<Float16> {
  using type = F16;
};
template <typename T>
using DeviceType = typename DeviceTypeOf<T>::type;

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Bf16> || std::is_same_v<T, F16>;

// The conversions of core/dtype.h (BFloat16::FromFloat, internal::FloatToHalfBits,
// HalfBitsToFloat), bit for bit, so that a cast gives the same bits on both devices.
__device__ inline float ToFloat(Bf16 x) {
  return __uint_as_float(static_cast<uint32_t>(x.bits) << 16);
}
__device__ inline float ToFloat(F16 x) {
  const uint32_t sign = static_cast<uint32_t>(x.bits & 0x8000u) << 16;
  const uint32_t exponent = (x.bits >> 10) & 0x1fu, mantissa = x.bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return __uint_as_float(sign | 0x7f800000u | (mantissa << 13));
  return __uint_as_float(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}
template <typename To>
__device__ To FromFloat(float value);
template <>
__device__ inline Bf16 FromFloat<Bf16>(float value) {
  const uint32_t x = __float_as_uint(value);
  if (isnan(value)) return {static_cast<uint16_t>((x >> 16) | 0x0040u)};
  return {static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16)};  // nearest even
}
template <>
__device__ inline F16 FromFloat<F16>(float value) {
  uint32_t x = __float_as_uint(value);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint16_t half;
  if (x >= 0x47800000u) {  // |value| >= 2^16, inf or NaN
    half = x > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (x < 0x38800000u) {  // subnormal or zero: the FPU rounds (see dtype.cc)
    half =
        static_cast<uint16_t>(__float_as_uint(__fadd_rn(__uint_as_float(x), 0.5f)) - 0x3f000000u);
  } else {  // normal: rebias, round 13 bits to nearest even
    x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + ((x >> 13) & 1u);
    half = static_cast<uint16_t>(x >> 13);
  }
  return {static_cast<uint16_t>(half | (sign >> 16))};
}

// core/dtype.h's Convert on the device: halves through float, the other types by
// the same NumberCast.
template <typename To, typename From>
__device__ To Cast(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (kIsHalf<From>) {
    return Cast<To>(ToFloat(value));
  } else if constexpr (kIsHalf<To>) {
    return FromFloat<To>(static_cast<float>(value));
  } else {
    return NumberCast<To>(value);
  }
}

// The type a kernel computes an element of T in: float for bf16, T itself otherwise.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, Bf16>, float, T>;

// An element as the type a kernel computes it in: bf16 and f16 widened to float (exactly),
// the others as they are; and a computed value stored as R, rounded once to a half.
template <typename T>
__device__ auto Widen(T x) {
  if constexpr (kIsHalf<T>) {
    return ToFloat(x);
  } else {
    return x;
  }
}
template <typename R, typename V>
__device__ R Narrow(V value) {
  if constexpr (kIsHalf<R>) {
    return FromFloat<R>(static_cast<float>(value));
  } else {
    return static_cast<R>(value);
  }
}

// Calls fn(TypeTag<T>{}) with T the device type of `dtype`.
template <typename Fn>
decltype(auto) VisitDeviceType(DType dtype, Fn&& fn) {
  return VisitDType(
      dtype, [&](auto tag) { return fn(TypeTag<DeviceType<typename decltype(tag)::type>>{}); });
}

// Calls fn(T()) with T = float or double for dtype f32 or f64, and returns what it
// returns, as kernels/cpu/internal/dispatch.h's DispatchFloat; any other dtype is an
// error naming the op.
template <typename Fn>
decltype(auto) DispatchFloat(const char* op, DType dtype, Fn&& fn) {
  EMBER_CHECK(dtype == DType::kF32 || dtype == DType::kF64, op, ": dtype ", DTypeName(dtype),
              " is not supported (f32 or f64)");
  if (dtype == DType::kF32) return fn(float());
  return fn(double());
}

// DispatchFloat for the kernels that also read and write bf16 (computing in float, through
// Widen and Narrow): fn(Bf16()) for dtype bf16.
template <typename Fn>
decltype(auto) DispatchFloatOrBf16(const char* op, DType dtype, Fn&& fn) {
  if (dtype == DType::kBF16) return fn(Bf16());
  return DispatchFloat(op, dtype, std::forward<Fn>(fn));
}

// ---- ordering ----

// An unsigned key that orders as the value does (sort.h's order, and top-k's reversed):
// NaN the largest, -0 equal to +0, int64 by its sign-flipped bits.
__device__ inline uint32_t OrderKey(float v) {
  if (v != v) return 0xffffffffu;
  const uint32_t u = __float_as_uint(v == 0.0f ? 0.0f : v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ inline uint64_t OrderKey(double v) {
  if (v != v) return ~uint64_t{0};
  const uint64_t u = static_cast<uint64_t>(__double_as_longlong(v == 0.0 ? 0.0 : v));
  return (u >> 63) ? ~u : (u | (uint64_t{1} << 63));
}
__device__ inline uint64_t OrderKey(int64_t v) {
  return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
}

// ---- strided layouts ----

inline constexpr int kMaxDims = 8;

// N operands over one shape, merged as kernels/strided.h merges them (a
// contiguous operand becomes one dimension), passed to a kernel by value.
template <size_t N>
struct Strided {
  int ndim;
  int64_t numel;
  int64_t shape[kMaxDims];       // innermost last
  int64_t strides[N][kMaxDims];  // in elements; 0 where broadcast

  // Operand k's offset (in elements) of the element with row-major linear index i.
  __device__ void Offsets(int64_t i, int64_t (&offset)[N]) const {
    for (size_t k = 0; k < N; ++k) offset[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t index = i % shape[d];
      i /= shape[d];
      for (size_t k = 0; k < N; ++k) offset[k] += index * strides[k][d];
    }
  }
};

// Throws ember::Error naming `op` when more than kMaxDims dimensions stay after
// merging.
template <size_t N>
Strided<N> MakeStrided(const char* op, IntSpan shape, const std::array<IntSpan, N>& strides) {
  const StridedLoop<N> loop = Coalesce(shape, strides);
  Strided<N> s{};
  s.ndim = static_cast<int>(loop.shape.size());
  EMBER_CHECK(s.ndim <= kMaxDims, op, ": shape ", ShapeToString(shape), " with these strides has ",
              s.ndim, " dimensions that cannot be merged; the CUDA kernels take at most ",
              kMaxDims);
  s.numel = NumElements(shape, op);
  for (int d = 0; d < s.ndim; ++d) {
    s.shape[d] = loop.shape[d];
    for (size_t k = 0; k < N; ++k) s.strides[k][d] = loop.strides[k][d];
  }
  return s;
}

// ---- launching ----

inline constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items: enough to fill any GPU, never more than
// the items need.
inline int Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 65536 ? blocks : 65536);
}

// The grid-stride loop over i in [0, n): EMBER_GRID_STRIDE(i, n) { ... }
#define EMBER_GRID_STRIDE(i, n)                                                          \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)

// ---- maps row by row ----

// kVec elements of T, loaded or stored as one access of sizeof(T) * kVec bytes.
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Vec {
  T v[kVec];
};

// An input of a map over a [rows, cols] grid: element (r, j) at
// data[r * row_stride + j * step], step 1 (contiguous rows) or 0 (one value per row,
// broadcast along it). row_stride 0 broadcasts one row to every row.
template <typename T>
struct RowInput {
  const T* data;
  int64_t row_stride;
  int step;
};

template <typename T, int N>
struct RowInputs {
  RowInput<T> in[N];
};

// out[r * cols + j] = fn(in[0](r, j), ..., in[N-1](r, j)), fn given the inputs widened
// (bf16 as float) and its result narrowed to R. Block x of the grid maps
// kVec * blockDim.x columns of rows y, y + gridDim.y, ...: each thread one vector of
// kVec neighbouring elements, so that a warp moves 512 contiguous bytes of f32 per
// access (one element per thread left most of the memory system's bandwidth idle:
// 1.75x PyTorch's time for GELU on an H200). Row and column come from the grid, not
// from a division of a flat index.
template <int kVec, int N, typename T, typename R, typename Fn>
__global__ void MapRowsKernel(int64_t rows, int64_t cols, RowInputs<T, N> inputs, R* out, Fn fn) {
  const int64_t j = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * kVec;
  if (j >= cols) return;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    Vec<T, kVec> x[N];
    for (int k = 0; k < N; ++k) {
      const RowInput<T>& input = inputs.in[k];
      const T* row = input.data + r * input.row_stride;
      if (input.step == 1) {
        x[k] = *reinterpret_cast<const Vec<T, kVec>*>(row + j);
      } else {
        for (int e = 0; e < kVec; ++e) x[k].v[e] = row[0];
      }
    }
    Vec<R, kVec> y;
    for (int e = 0; e < kVec; ++e) {
      if constexpr (N == 1) y.v[e] = Narrow<R>(fn(Widen(x[0].v[e])));
      if constexpr (N == 2) y.v[e] = Narrow<R>(fn(Widen(x[0].v[e]), Widen(x[1].v[e])));
    }
    *reinterpret_cast<Vec<R, kVec>*>(out + r * cols + j) = y;
  }
}

// The launch shape of a kernel over rows of `per_row` threads each (a warp multiple, at
// most kThreads, a block): x tiles a row, y takes rows y, y + gridDim.y, ...
struct RowLaunch {
  RowLaunch(int64_t rows, int64_t per_row)
      : threads(static_cast<int>(per_row < kThreads ? (per_row + 31) / 32 * 32 : kThreads)),
        grid(static_cast<unsigned>((per_row + threads - 1) / threads),
             static_cast<unsigned>(rows < 65535 ? rows : 65535)) {}
  int threads;
  dim3 grid;
};

// Launches MapRowsKernel on the current device's stream, with 16-byte vectors where
// cols, every row stride and every pointer allow them, else one element a thread.
template <int N, typename T, typename R, typename Fn>
void MapRows(int64_t rows, int64_t cols, const RowInputs<T, N>& inputs, R* out, Fn fn) {
  if (rows == 0 || cols == 0) return;
  constexpr int kVec = 16 / sizeof(T);
  auto aligned = [](const void* p, size_t bytes) {
    return reinterpret_cast<uintptr_t>(p) % bytes == 0;
  };
  bool vectors = cols % kVec == 0 && aligned(out, sizeof(R) * kVec);
  for (int k = 0; k < N; ++k) {
    vectors = vectors && inputs.in[k].row_stride % kVec == 0 &&
              aligned(inputs.in[k].data, sizeof(T) * kVec);
  }
  const RowLaunch launch(rows, (cols + (vectors ? kVec : 1) - 1) / (vectors ? kVec : 1));
  if (vectors) {
    MapRowsKernel<kVec><<<launch.grid, launch.threads>>>(rows, cols, inputs, out, fn);
  } else {
    MapRowsKernel<1><<<launch.grid, launch.threads>>>(rows, cols, inputs, out, fn);
  }
}

// ---- reductions within a block ----

// Reduces v over the 32 lanes of a warp with butterfly shuffles (every lane must call
// it) and returns the result to every lane, in an order fixed by the lane numbers.
template <typename T, typename Op>
__device__ T WarpReduce(T v, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces v over the block with op (associative and commutative; `identity` its
// neutral element) and returns the result to every thread. blockDim.x must be a
// multiple of 32, at most 1024, and every thread of the block must call it. Warps
// reduce with butterfly shuffles, then every warp reduces the warps' results the same
// way; the order depends only on the block size, so a result is the same every run.
template <typename T, typename Op>
__device__ T BlockReduce(T v, Op op, T identity) {
  __shared__ T partial[32];
  v = WarpReduce(v, op);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // a previous call's readers are done with partial
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : identity;
  return WarpReduce(v, op);
}

struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
// NaN wins (a != a only for NaN), as torch.max and torch.min.
struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return (a != a || a > b) ? a : b;
  }
};
struct MinOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return (a != a || a < b) ? a : b;
  }
};

// One block per row: at most 65536 blocks, grid-striding over the rest of the rows.
inline int RowBlocks(int64_t rows) { return static_cast<int>(rows < 65536 ? rows : 65536); }
#define EMBER_FOR_EACH_ROW(r, rows) for (int64_t r = blockIdx.x; r < (rows); r += gridDim.x)

}  // namespace ember::kernels::cuda::internal

#endif  // EMBER_KERNELS_CUDA_INTERNAL_DEVICE_CU_H_
