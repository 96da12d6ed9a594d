#include "core/dtype.h"

#include "absl/strings/str_cat.h"

namespace ember {

int64_t ItemSize(DType dtype) {
  return VisitDType(dtype,
                    [](auto tag) -> int64_t { return sizeof(typename decltype(tag)::type); });
}

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kBF16:
      return "bf16";
    case DType::kF16:
      return "f16";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kU8:
      return "u8";
    case DType::kU16:
      return "u16";
    case DType::kBool:
      return "bool";
  }
  return "unknown";
}

absl::StatusOr<DType> ParseDType(absl::string_view name) {
  for (DType dtype : kAllDTypes) {
    if (DTypeName(dtype) == name) return dtype;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown dtype '", name, "' (expected one of f32, f64, bf16, f16, i32, i64, u8, u16, bool)"));
}

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kBF16 ||
         dtype == DType::kF16;
}

std::string Scalar::ToString() const {
  switch (kind_) {
    case Kind::kFloat:
      return absl::StrCat(double_);
    case Kind::kInt:
      return absl::StrCat(int_);
    case Kind::kBool:
      return int_ ? "true" : "false";
  }
  return "";
}

namespace internal {

// After F. Giesen's float_to_half_fast3_rtne (public domain), rewritten here.
uint16_t FloatToHalfBits(float value) {
  uint32_t x = BitCast<uint32_t>(value);
  const uint32_t sign = x & 0x80000000u;
  x ^= sign;
  uint16_t half;
  if (x >= 0x47800000u) {
    // |value| >= 2^16, inf or NaN (values in [65520, 65536) overflow to inf below).
    half = x > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (x < 0x38800000u) {
    // |value| < 2^-14: a half subnormal or zero. Adding 0.5f puts the half's 10
    // mantissa bits at the bottom of the float's mantissa, and the FPU's own
    // round-to-nearest-even does the rounding.
    const float shifted = BitCast<float>(x) + 0.5f;
    half = static_cast<uint16_t>(BitCast<uint32_t>(shifted) - 0x3f000000u);
  } else {
    // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to
    // nearest even; a carry into the exponent is correct (up to inf).
    const uint32_t mantissa_odd = (x >> 13) & 1u;
    x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + mantissa_odd;
    half = static_cast<uint16_t>(x >> 13);
  }
  return half | static_cast<uint16_t>(sign >> 16);
}

float HalfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return BitCast<float>(sign | 0x7f800000u | (mantissa << 13));
  return BitCast<float>(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

}  // namespace internal
}  // namespace ember
