#include "tensor/random.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/cuda.h"

namespace ember {
namespace {

TEST(PhiloxTest, KnownAnswers) {
  // Random123's known-answer vectors for philox4x32-10 (kat_vectors).
  EXPECT_EQ(Generator::Philox({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(
      Generator::Philox({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      Generator::Philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(GeneratorTest, StreamIsTheBlocksInOrder) {
  Generator gen(0x123456789abcdefULL);
  for (uint64_t block = 0; block < 3; ++block) {
    const auto words =
        Generator::Philox({static_cast<uint32_t>(block), 0, 0, 0}, {0x89abcdef, 0x01234567});
    for (uint32_t w : words) EXPECT_EQ(gen.NextUint32(), w);
  }
  EXPECT_EQ(gen.offset(), 12u);
}

TEST(GeneratorTest, SeedAndOffsetRestoreTheStream) {
  Generator a(42);
  for (int i = 0; i < 7; ++i) a.NextUint32();
  Generator b(42);
  b.set_offset(a.offset());  // mid-block
  for (int i = 0; i < 20; ++i) EXPECT_EQ(a.NextUint32(), b.NextUint32());
  a.ManualSeed(42);
  Generator c(42);
  EXPECT_EQ(a.NextUint64(), c.NextUint64());
  EXPECT_NE(Generator(1).NextUint32(), Generator(2).NextUint32());
}

TEST(GeneratorTest, NextBelowIsUnbiasedAndInRange) {
  Generator gen(5);
  std::vector<int> counts(6, 0);
  const int n = 60000;
  for (int i = 0; i < n; ++i) ++counts[gen.NextBelow(6)];
  for (int c : counts) EXPECT_NEAR(c, n / 6, 5 * std::sqrt(n / 6.0));  // 5 sigma
  const uint64_t huge = (uint64_t{1} << 63) + 12345;  // most draws of 2^64 are rejected once
  for (int i = 0; i < 1000; ++i) EXPECT_LT(gen.NextBelow(huge), huge);
}

TEST(RandomTensorTest, SameSeedSameNumbersEverywhere) {
  Generator a(2026), b(2026);
  const Tensor x = Rand({3, 4}, a), y = Rand({3, 4}, b);
  EXPECT_EQ(x.ToVector<float>(), y.ToVector<float>());
  // The first f32 uniform of seed 2026 is the top 24 bits of its first Philox word:
  // pinned so that a change of generator or of bit use cannot go unnoticed.
  const uint32_t first = Generator::Philox({0, 0, 0, 0}, {2026, 0})[0];
  EXPECT_EQ(x.at<float>({0, 0}), static_cast<float>(first >> 8) * 0x1p-24f);
  // Row-major order: drawing 12 at once equals drawing 1 then 11.
  Generator c(2026);
  std::vector<float> split = Rand({1}, c).ToVector<float>();
  const std::vector<float> rest = Rand({11}, c).ToVector<float>();
  split.insert(split.end(), rest.begin(), rest.end());
  EXPECT_EQ(split, x.ToVector<float>());
}

// Rand draws each element from its own place in the stream: from an offset inside a
// Philox block, the same numbers as drawing them one by one, and the generator moves
// past them; on a GPU, the same numbers again.
TEST(RandomTensorTest, RandIsTheStreamFromAnyOffsetOnAnyDevice) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16}) {
    Generator gen(77), one_by_one(77);
    gen.NextUint32();
    one_by_one.NextUint32();
    const Tensor t = Rand({5, 7}, gen, dtype);
    const int bits = dtype == DType::kF64 ? 53 : dtype == DType::kF32 ? 24 : 8;
    for (double v : t.ToVector<double>()) EXPECT_EQ(v, one_by_one.NextUniform(bits));
    EXPECT_EQ(gen.offset(), one_by_one.offset());
    if (cuda::IsAvailable()) {
      Generator again(77);
      again.NextUint32();
      EXPECT_EQ(Rand({5, 7}, again, dtype, Device::Cuda(0)).ToVector<double>(),
                t.ToVector<double>());
    }
  }
}

TEST(RandomTensorTest, UniformRangesAndMoments) {
  Generator gen(1);
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    const std::vector<double> u = Rand({20000}, gen, dtype).ToVector<double>();
    double sum = 0;
    for (double v : u) {
      ASSERT_GE(v, 0.0);
      ASSERT_LT(v, 1.0) << DTypeName(dtype);  // 1.0 never appears, even in bf16
      sum += v;
    }
    EXPECT_NEAR(sum / u.size(), 0.5, 0.01) << DTypeName(dtype);
  }
  const std::vector<double> w = Uniform({10000}, -3, 5, gen, DType::kF64).ToVector<double>();
  for (double v : w) {
    ASSERT_GE(v, -3.0);
    ASSERT_LT(v, 5.0);
  }
  EXPECT_THROW(Rand({2}, gen, DType::kI32), Error);
  EXPECT_THROW(Uniform({2}, 1, 0, gen), Error);
}

TEST(RandomTensorTest, NormalMoments) {
  Generator gen(3);
  const std::vector<double> z = Normal({100001}, 2.0, 3.0, gen, DType::kF64).ToVector<double>();
  double mean = 0, var = 0, beyond_3_sigma = 0;
  for (double v : z) mean += v;
  mean /= z.size();
  for (double v : z) {
    var += (v - mean) * (v - mean);
    beyond_3_sigma += std::fabs(v - 2.0) > 9.0;
  }
  var /= z.size() - 1;
  // Standard errors: mean 3/sqrt(n) ~ 0.0095, variance 9*sqrt(2/n) ~ 0.04.
  EXPECT_NEAR(mean, 2.0, 0.05);
  EXPECT_NEAR(var, 9.0, 0.2);
  EXPECT_NEAR(beyond_3_sigma / z.size(), 0.0027, 0.001);
  const Tensor r = Randn({5}, gen, DType::kBF16);
  EXPECT_EQ(r.dtype(), DType::kBF16);
  EXPECT_THROW(Normal({2}, 0, -1, gen), Error);
}

TEST(RandomTensorTest, RangesAreTheWholeTensorsSlicesAndMoveTheStreamAsIt) {
  for (DType dtype : {DType::kF32, DType::kF64}) {
    for (const auto& [begin, end] :
         std::vector<std::pair<int64_t, int64_t>>{{0, 11}, {3, 8}, {4, 9}, {10, 11}, {5, 5}}) {
      Generator whole_gen(9), range_gen(9);
      whole_gen.set_offset(6);
      range_gen.set_offset(6);
      const Tensor whole = Uniform({11}, -2, 3, whole_gen, dtype);
      const Tensor range = UniformRange(11, begin, end, -2, 3, range_gen, dtype);
      EXPECT_EQ(range.To(DType::kF64).ToVector<double>(),
                whole.Narrow(0, begin, end - begin).To(DType::kF64).ToVector<double>());
      EXPECT_EQ(range_gen.offset(), whole_gen.offset());
      const Tensor normal = Normal({11}, 1, 0.5, whole_gen, dtype);
      const Tensor normal_range = NormalRange(11, begin, end, 1, 0.5, range_gen, dtype);
      EXPECT_EQ(normal_range.To(DType::kF64).ToVector<double>(),
                normal.Narrow(0, begin, end - begin).To(DType::kF64).ToVector<double>())
          << begin << " " << end;
      EXPECT_EQ(range_gen.offset(), whole_gen.offset());
    }
  }
  Generator gen(1);
  EXPECT_THROW(UniformRange(4, 3, 5, 0, 1, gen), Error);
}

TEST(RandomTensorTest, RandIntCoversTheRangeOnly) {
  Generator gen(9);
  const std::vector<int64_t> v = RandInt(-2, 3, {5000}, gen).ToVector<int64_t>();
  std::vector<int> counts(5, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -2);
    ASSERT_LT(x, 3);
    ++counts[x + 2];
  }
  for (int c : counts) EXPECT_GT(c, 800);
  const int64_t lo = std::numeric_limits<int64_t>::lowest(),
                hi = std::numeric_limits<int64_t>::max();
  EXPECT_NO_THROW(RandInt(lo, hi, {10}, gen));
  EXPECT_EQ(RandInt(0, 10, {3}, gen, DType::kU8).dtype(), DType::kU8);
  try {
    RandInt(3, 3, {1}, gen);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "randint: low 3 must be less than high 3");
  }
}

TEST(RandomTensorTest, RandPermIsAUniformPermutation) {
  Generator gen(5);
  std::vector<int64_t> v = RandPerm(1000, gen).ToVector<int64_t>();
  std::vector<int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_NE(v, sorted);
  Generator again(5);
  EXPECT_EQ(RandPerm(1000, again).ToVector<int64_t>(), v);
  // Each of the 3! orders of three elements, 6000 draws: 1000 expected each; a
  // deviation of 150 is over 5 standard deviations (sqrt(6000 * 1/6 * 5/6) = 28.9).
  std::map<std::vector<int64_t>, int> counts;
  for (int i = 0; i < 6000; ++i) ++counts[RandPerm(3, gen).ToVector<int64_t>()];
  ASSERT_EQ(counts.size(), 6u);
  for (const auto& [order, count] : counts) EXPECT_NEAR(count, 1000, 150);
  EXPECT_EQ(RandPerm(0, gen).numel(), 0);
  EXPECT_EQ(RandPerm(4, gen, DType::kI32).dtype(), DType::kI32);
  EXPECT_THROW(RandPerm(-1, gen), Error);
}

TEST(RandomTensorTest, DefaultGeneratorReseeds) {
  ManualSeed(11);
  const std::vector<float> a = Rand({4}).ToVector<float>();
  ManualSeed(11);
  EXPECT_EQ(Rand({4}).ToVector<float>(), a);
}

}  // namespace
}  // namespace ember
