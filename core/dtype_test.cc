#include "core/dtype.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace ember {
namespace {

using internal::BitCast;

TEST(DTypeTest, SizesAndNames) {
  const std::vector<std::pair<DType, int64_t>> sizes = {
      {DType::kF32, 4}, {DType::kF64, 8}, {DType::kBF16, 2}, {DType::kF16, 2}, {DType::kI32, 4},
      {DType::kI64, 8}, {DType::kU8, 1},  {DType::kU16, 2},  {DType::kBool, 1}};
  for (const auto& [dtype, size] : sizes) {
    EXPECT_EQ(ItemSize(dtype), size) << DTypeName(dtype);
    EXPECT_EQ(ParseDType(DTypeName(dtype)).value(), dtype);
  }
  EXPECT_EQ(DTypeName(DType::kBF16), "bf16");
  EXPECT_TRUE(IsFloatingPoint(DType::kF16));
  EXPECT_FALSE(IsFloatingPoint(DType::kI64));
  EXPECT_FALSE(IsFloatingPoint(DType::kBool));
  absl::StatusOr<DType> bad = ParseDType("float");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'float'"), std::string::npos);
}

TEST(DTypeTest, VisitDTypeGivesTheCppType) {
  for (DType dtype : kAllDTypes) {
    const DType seen =
        VisitDType(dtype, [](auto tag) { return kDTypeOf<typename decltype(tag)::type>; });
    EXPECT_EQ(seen, dtype);
  }
}

// Value of a non-negative half or bf16 bit pattern, with the first pattern past the
// largest finite one (inf) standing for the power of two just above it: that is where
// IEEE round-to-nearest-even puts the overflow threshold.
double HalfValue(uint16_t bits) {
  return bits == 0x7c00 ? 65536.0 : static_cast<double>(internal::HalfBitsToFloat(bits));
}
double BF16Value(uint16_t bits) {
  return bits == 0x7f80 ? std::ldexp(1.0, 128)
                        : static_cast<double>(BitCast<float>(static_cast<uint32_t>(bits) << 16));
}

// Brute-force round-to-nearest-even of |x| onto the patterns [0, inf_bits], whose
// values increase with the bit pattern.
template <typename ValueFn>
uint16_t ReferenceRound(double magnitude, uint16_t inf_bits, ValueFn value) {
  uint32_t lo = 0, hi = inf_bits;  // value(lo) <= magnitude, find the largest such lo
  if (magnitude >= value(inf_bits)) return inf_bits;
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    (value(mid) <= magnitude ? lo : hi) = mid;
  }
  const double below = magnitude - value(lo), above = value(lo + 1) - magnitude;
  if (below < above) return lo;
  if (above < below) return lo + 1;
  return (lo % 2 == 0) ? lo : lo + 1;
}

std::vector<float> TestFloats() {
  std::mt19937 rng(1234);
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               -2.0f,
                               65504.0f,
                               65519.99f,
                               65520.0f,
                               0x1p-24f,
                               0x1p-25f,
                               0x1.8p-25f,
                               0x1p-14f,
                               3.0e38f,
                               std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity()};
  std::uniform_real_distribution<float> wide(-70000.0f, 70000.0f), tiny(-1e-4f, 1e-4f);
  for (int i = 0; i < 200000; ++i) {
    float bits_value = BitCast<float>(static_cast<uint32_t>(rng()));
    if (!std::isnan(bits_value)) values.push_back(bits_value);
    values.push_back(wide(rng));
    values.push_back(tiny(rng));
  }
  // Exact ties between neighbouring halves: midpoints of every half interval.
  for (uint32_t b = 0; b < 0x7c00; b += 7) {
    values.push_back(static_cast<float>((HalfValue(b) + HalfValue(b + 1)) / 2));
  }
  return values;
}

TEST(Float16Test, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = Float16{static_cast<uint16_t>(b)}.ToFloat();
    const uint16_t back = Float16::FromFloat(f).bits;
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(Float16{back}.ToFloat())) << b;
    } else {
      EXPECT_EQ(back, b) << "pattern " << b << " value " << f;
    }
  }
}

TEST(Float16Test, KnownValues) {
  EXPECT_EQ(Float16::FromFloat(1.0f).bits, 0x3c00);
  EXPECT_EQ(Float16::FromFloat(-2.0f).bits, 0xc000);
  EXPECT_EQ(Float16::FromFloat(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Float16::FromFloat(0x1p-24f).bits, 0x0001);
  EXPECT_EQ(Float16::FromFloat(0x1p-25f).bits, 0x0000);    // tie goes to even (zero)
  EXPECT_EQ(Float16::FromFloat(0x1.8p-24f).bits, 0x0002);  // tie goes to even (2)
  EXPECT_EQ(Float16::FromFloat(65520.0f).bits, 0x7c00);    // tie with "65536": inf
  EXPECT_FLOAT_EQ(Float16{0x3555}.ToFloat(), 0.333251953125f);
}

TEST(Float16Test, RoundsToNearestEvenLikeABruteForceSearch) {
  for (float f : TestFloats()) {
    const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    const uint16_t expected = sign | ReferenceRound(std::fabs(f), 0x7c00, HalfValue);
    ASSERT_EQ(Float16::FromFloat(f).bits, expected) << "value " << f;
  }
}

TEST(BFloat16Test, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const float f = BFloat16{static_cast<uint16_t>(b)}.ToFloat();
    const uint16_t back = BFloat16::FromFloat(f).bits;
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(BFloat16{back}.ToFloat())) << b;
    } else {
      EXPECT_EQ(back, b) << b;
    }
  }
}

TEST(BFloat16Test, RoundsToNearestEvenLikeABruteForceSearch) {
  EXPECT_EQ(BFloat16::FromFloat(1.0f).bits, 0x3f80);
  EXPECT_EQ(BFloat16::FromFloat(3.14159265f).bits, 0x4049);
  EXPECT_TRUE(std::isnan(BFloat16::FromFloat(std::nanf("")).ToFloat()));
  for (float f : TestFloats()) {
    const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    const uint16_t expected = sign | ReferenceRound(std::fabs(f), 0x7f80, BF16Value);
    ASSERT_EQ(BFloat16::FromFloat(f).bits, expected) << "value " << f;
  }
}

TEST(ConvertTest, FloatToIntegerTruncatesAndSaturates) {
  EXPECT_EQ((Convert<int32_t>(2.9)), 2);
  EXPECT_EQ((Convert<int32_t>(-2.9f)), -2);
  EXPECT_EQ((Convert<int32_t>(1e20)), std::numeric_limits<int32_t>::max());
  EXPECT_EQ((Convert<int64_t>(-1e30f)), std::numeric_limits<int64_t>::lowest());
  EXPECT_EQ((Convert<int64_t>(9.3e18)), std::numeric_limits<int64_t>::max());
  EXPECT_EQ((Convert<uint8_t>(-3.0)), 0);
  EXPECT_EQ((Convert<int32_t>(std::nan(""))), 0);
  EXPECT_EQ((Convert<int32_t>(Float16::FromFloat(-7.5f))), -7);
}

TEST(ConvertTest, BoolAndIntegerWrap) {
  EXPECT_TRUE((Convert<bool>(0.1)));
  EXPECT_FALSE((Convert<bool>(int64_t{0})));
  EXPECT_EQ((Convert<float>(true)), 1.0f);
  EXPECT_EQ((Convert<uint8_t>(int64_t{257})), 1);
  EXPECT_EQ((Convert<int64_t>(uint16_t{65535})), 65535);
  EXPECT_EQ((Convert<BFloat16>(1.0).bits), 0x3f80);
  EXPECT_EQ((Convert<double>(BFloat16{0x4049})), 3.140625);
}

TEST(ScalarTest, KeepsItsKindAndValue) {
  const Scalar big = int64_t{9007199254740993};  // 2^53 + 1: not a double
  EXPECT_EQ(big.kind(), Scalar::Kind::kInt);
  EXPECT_EQ(big.to<int64_t>(), 9007199254740993);
  EXPECT_EQ(Scalar(2.5).to<int32_t>(), 2);
  EXPECT_EQ(Scalar(true).kind(), Scalar::Kind::kBool);
  EXPECT_EQ(Scalar(true).to<float>(), 1.0f);
  EXPECT_TRUE(Scalar(1.5f).is_floating_point());
  EXPECT_EQ(Scalar(-3).ToString(), "-3");
  EXPECT_EQ(Scalar(false).ToString(), "false");
}

}  // namespace
}  // namespace ember
