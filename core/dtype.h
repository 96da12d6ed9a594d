#ifndef EMBER_CORE_DTYPE_H_
#define EMBER_CORE_DTYPE_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/error.h"

namespace ember {

// Element types. The C++ type of each: f32 float, f64 double, bf16 BFloat16,
// f16 Float16, i32 int32_t, i64 int64_t, u8 uint8_t, u16 uint16_t, bool bool.
enum class DType : uint8_t { kF32, kF64, kBF16, kF16, kI32, kI64, kU8, kU16, kBool };

inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF64, DType::kBF16,
                                       DType::kF16, DType::kI32, DType::kI64,
                                       DType::kU8,  DType::kU16, DType::kBool};

// Size of one element in bytes.
int64_t ItemSize(DType dtype);
// "f32", "f64", "bf16", "f16", "i32", "i64", "u8", "u16", "bool".
absl::string_view DTypeName(DType dtype);
// The inverse of DTypeName (for flags and files).
absl::StatusOr<DType> ParseDType(absl::string_view name);
bool IsFloatingPoint(DType dtype);

namespace internal {
template <typename To, typename From>
To BitCast(From from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}
uint16_t FloatToHalfBits(float value);
float HalfBitsToFloat(uint16_t bits);
}  // namespace internal

// bfloat16: the top 16 bits of an IEEE float32 (8 exponent bits, 7 mantissa bits).
// From float: round to nearest, ties to even; NaN stays a (quiet) NaN.
struct BFloat16 {
  uint16_t bits = 0;

  static BFloat16 FromFloat(float value) {
    const uint32_t x = internal::BitCast<uint32_t>(value);
    if (std::isnan(value)) return {static_cast<uint16_t>((x >> 16) | 0x0040u)};
    // Adding 0x7fff plus the lowest kept bit rounds the dropped 16 bits to nearest
    // even; a carry into the exponent is the correct rounding up (to inf at the top).
    const uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
    return {static_cast<uint16_t>((x + rounding_bias) >> 16)};
  }
  float ToFloat() const { return internal::BitCast<float>(static_cast<uint32_t>(bits) << 16); }
};

// IEEE 754 binary16 (5 exponent bits, 10 mantissa bits), subnormals included.
// From float: round to nearest, ties to even; |x| >= 65520 becomes inf.
struct Float16 {
  uint16_t bits = 0;

  static Float16 FromFloat(float value) { return {internal::FloatToHalfBits(value)}; }
  float ToFloat() const { return internal::HalfBitsToFloat(bits); }
};

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kF32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kF64;
};
template <>
struct DTypeOf<BFloat16> {
  static constexpr DType value = DType::kBF16;
};
template <>
struct DTypeOf<Float16> {
  static constexpr DType value = DType::kF16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kI32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kI64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kU8;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kU16;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};
template <typename T>
inline constexpr DType kDTypeOf = DTypeOf<T>::value;

template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with T the C++ type of `dtype`; returns what fn returns.
//   VisitDType(t.dtype(), [&](auto tag) { using T = typename decltype(tag)::type; ... });
template <typename Fn>
decltype(auto) VisitDType(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kF32:
      return fn(TypeTag<float>{});
    case DType::kF64:
      return fn(TypeTag<double>{});
    case DType::kBF16:
      return fn(TypeTag<BFloat16>{});
    case DType::kF16:
      return fn(TypeTag<Float16>{});
    case DType::kI32:
      return fn(TypeTag<int32_t>{});
    case DType::kI64:
      return fn(TypeTag<int64_t>{});
    case DType::kU8:
      return fn(TypeTag<uint8_t>{});
    case DType::kU16:
      return fn(TypeTag<uint16_t>{});
    case DType::kBool:
      return fn(TypeTag<bool>{});
  }
  EMBER_THROW("unknown dtype ", static_cast<int>(dtype));
}

// nvcc compiles this header into the CUDA kernels too; what both sides share is marked.
#ifdef __CUDACC__
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif

// A cast between two C++ number types (not the halves), as a cast in PyTorch:
// - to bool: value != 0;
// - float to integer: truncates toward zero, saturating at the integer's range, and
//   NaN gives 0 (C++ leaves out-of-range casts undefined; this keeps them defined);
// - integer to narrower integer: wraps modulo 2^bits.
// Convert below on the host and the CUDA kernels' Cast (kernels/cuda/internal/
// device.cu.h) both go through it.
template <typename To, typename From>
EMBER_HOST_DEVICE To NumberCast(From value) {
  if constexpr (std::is_same_v<To, bool>) {
    return value != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (value != value) return 0;  // NaN
    // (From)max may round up past max (2^63 for int64): >= catches that too.
    if (value >= static_cast<From>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    if (value <= static_cast<From>(std::numeric_limits<To>::lowest())) {
      return std::numeric_limits<To>::lowest();
    }
    return static_cast<To>(value);
  } else {
    return static_cast<To>(value);
  }
}

// Converts one element between the C++ types of two dtypes, as a cast in PyTorch:
// - to bf16/f16: through float, rounding to nearest even (so a double is rounded
//   twice, as in PyTorch);
// - between the other types: NumberCast.
template <typename To, typename From>
To Convert(From value) {
  constexpr bool kFromHalf = std::is_same_v<From, BFloat16> || std::is_same_v<From, Float16>;
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else if constexpr (kFromHalf) {
    return Convert<To>(value.ToFloat());
  } else if constexpr (std::is_same_v<To, BFloat16> || std::is_same_v<To, Float16>) {
    return To::FromFloat(static_cast<float>(value));
  } else {
    return NumberCast<To>(value);
  }
}

// A number of any dtype's kind, for fills, tensor-scalar math and creation: a
// double, an int64 or a bool, kept exactly (an int64 above 2^53 stays exact).
class Scalar {
 public:
  enum class Kind : uint8_t { kFloat, kInt, kBool };

  Scalar() : Scalar(0.0) {}
  Scalar(double value) : kind_(Kind::kFloat), double_(value) {}  // NOLINT
  Scalar(float value) : Scalar(static_cast<double>(value)) {}    // NOLINT
  Scalar(bool value) : kind_(Kind::kBool), int_(value) {}        // NOLINT
  Scalar(BFloat16 value) : Scalar(value.ToFloat()) {}            // NOLINT
  Scalar(Float16 value) : Scalar(value.ToFloat()) {}             // NOLINT
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T value) : kind_(Kind::kInt), int_(static_cast<int64_t>(value)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::kFloat; }

  // The value as the C++ type T, converted as Convert does.
  template <typename T>
  T to() const {
    switch (kind_) {
      case Kind::kFloat:
        return Convert<T>(double_);
      case Kind::kInt:
        return Convert<T>(int_);
      case Kind::kBool:
        return Convert<T>(int_ != 0);
    }
    return T();
  }

  std::string ToString() const;

 private:
  Kind kind_;
  double double_ = 0;
  int64_t int_ = 0;
};

}  // namespace ember

#endif  // EMBER_CORE_DTYPE_H_
