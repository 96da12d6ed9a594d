// PackedWeights and PackedLinear: one table of cases on every CPU SIMD target this
// machine has, in each format and in f32 and bf16, against the float64 product of the
// weights the format stores and, for int8, the activations it quantizes
// (kernels/reference/packed_linear.h): edges around a panel (16 columns), a thread's
// block (64), the depth's group (32) and the widened chunk (256), rows around the
// register tiles and well past them, a bias or none, padded rows. The stored weights
// themselves are held to the contract: int8 within half a scale of W, its scale the
// group's largest |W| over 127 to bf16's precision; int8's product the same bits on
// every target (AVX512-VNNI's integer sums and the portable f32 ones). CPU only (the
// family has no CUDA twin).

#include "kernels/packed_linear.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/reference/matmul.h"
#include "kernels/reference/packed_linear.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

namespace ref = ::ember::kernels::reference;
using cpu::PackedFormat;

constexpr PackedFormat kFormats[] = {PackedFormat::kF32, PackedFormat::kBF16, PackedFormat::kI8};

struct Case {
  int64_t m, k, n;
  bool bias;
  int64_t pad;  // extra elements per row of A and C
};

std::string Describe(const Case& c, PackedFormat format, DType dtype) {
  return std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) +
         (c.bias ? " + bias" : "") + ", pad " + std::to_string(c.pad) + ", " +
         cpu::PackedFormatName(format) + " weights, " + std::string(DTypeName(dtype));
}

// A and C of type T; the packed weights of `format`. Every C within the bound of a sum
// of k products rounded in f32 (plus bf16's one rounding of C) of the reference.
template <typename T>
void CheckPackedLinear(const std::string& path, const Case& c, PackedFormat format,
                       std::mt19937& rng) {
  const DType dtype = DTypeOf<T>::value;
  const std::vector<float> w = RandomVector<float>(c.n * c.k, -1, 1, rng);
  const std::vector<T> a = RandomVector<T>(c.m * (c.k + c.pad), -1, 1, rng);
  const std::vector<float> bias = RandomVector<float>(c.n, -1, 1, rng);
  std::vector<uint8_t> packed(static_cast<size_t>(cpu::PackedBytes(format, c.n, c.k)), 0xAB);
  cpu::PackWeights(format, c.n, c.k, w.data(), c.k, packed.data());
  const int64_t ldc = c.n + c.pad;
  std::vector<T> out(static_cast<size_t>(c.m * ldc), Convert<T>(7.0));
  cpu::PackedLinear(format, dtype, c.m, c.k, c.n, a.data(), c.k + c.pad, packed.data(),
                    c.bias ? bias.data() : nullptr, out.data(), ldc);
  const std::vector<double> stored = ref::StoredWeights(format, c.n, c.k, w);
  std::vector<double> a64(static_cast<size_t>(c.m * c.k));
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t p = 0; p < c.k; ++p) a64[i * c.k + p] = Convert<double>(a[i * (c.k + c.pad) + p]);
  }
  if (format == PackedFormat::kI8) {
    const std::vector<float> a32(a64.begin(), a64.end());  // exact: A is f32 or bf16
    a64 = ref::QuantizedActivations(c.m, c.k, a32.data(), c.k);
  }
  std::vector<double> abs_sum;
  // B [k, n] = W'^T: W' read with strides (1, k).
  const std::vector<double> expected =
      ref::Matmul(c.m, c.k, c.n, a64.data(), c.k, 1, stored.data(), 1, c.k, &abs_sum);
  const double bf16 = dtype == DType::kBF16 ? kBf16Roundoff : 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const double got = Convert<double>(out[i * ldc + j]);
      if (j >= c.n) {
        ASSERT_EQ(got, 7.0) << path << ", " << Describe(c, format, dtype) << ": C[" << i << "]["
                            << j << "] past n was written";
        continue;
      }
      const double want = expected[i * c.n + j] + (c.bias ? bias[j] : 0.0);
      const double scale = abs_sum[i * c.n + j] + (c.bias ? std::fabs(bias[j]) : 0.0);
      const double bound = (c.k + 2) * 0x1p-24 * scale + bf16 * std::fabs(want) + 1e-30;
      ASSERT_NEAR(got, want, bound)
          << path << ", " << Describe(c, format, dtype) << ": C[" << i << "][" << j << "]";
    }
  }
}

TEST(PackedLinearTest, TableOnEveryTarget) {
  const std::vector<Case> cases = {
      {1, 1, 1, false, 0},     {1, 31, 15, true, 0},   {1, 32, 16, false, 3},
      {1, 33, 17, true, 0},    {2, 100, 64, true, 1},  {4, 64, 65, false, 0},
      {3, 300, 200, true, 2},  {5, 33, 48, true, 0},   {8, 257, 129, false, 0},
      {9, 768, 70, true, 5},   {33, 96, 100, true, 0}, {32, 768, 192, false, 0},
      {1, 768, 2304, true, 0}, {6, 1000, 31, true, 4},
  };
  ForEachTarget([&](const std::string& target) {
    std::mt19937 rng(7);
    for (const Case& c : cases) {
      for (const PackedFormat format : kFormats) {
        CheckPackedLinear<float>("cpu " + target, c, format, rng);
        CheckPackedLinear<BFloat16>("cpu " + target, c, format, rng);
      }
    }
  });
}

TEST(PackedLinearTest, Int8KeepsEachWeightWithinHalfItsScale) {
  std::mt19937 rng(3);
  const int64_t n = 20, k = 70;
  std::vector<float> w = RandomVector<float>(n * k, -2, 2, rng);
  w[5] = 0;                                            // a group's largest
  for (int64_t p = 32; p < 64; ++p) w[1 * k + p] = 0;  // an all-zero group: scale 0
  w[2 * k + 3] = 1e-3f;                                // a group of tiny weights
  for (int64_t p = 0; p < 32; ++p) w[3 * k + p] = p == 3 ? 1e-3f : 0.0f;
  const std::vector<double> stored = ref::StoredWeights(PackedFormat::kI8, n, k, w);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t p0 = 0; p0 < k; p0 += 32) {
      float largest = 0;
      for (int64_t p = p0; p < std::min(k, p0 + 32); ++p) {
        largest = std::max(largest, std::fabs(w[j * k + p]));
      }
      for (int64_t p = p0; p < std::min(k, p0 + 32); ++p) {
        // s <= largest / 127 (1 + 2^-7): half a scale, with bf16's rounding up.
        EXPECT_LE(std::fabs(stored[j * k + p] - w[j * k + p]), largest / 127 * (1 + 0x1p-7) / 2)
            << "W[" << j << "][" << p << "]";
      }
    }
  }
  EXPECT_EQ(stored[1 * k + 40], 0.0) << "an all-zero group stays zero";
  EXPECT_NEAR(stored[3 * k + 3], 1e-3, 1e-3 / 127) << "a group of tiny weights keeps them";
  // The kernel multiplies by exactly these weights: A = 127 at one depth, 0 elsewhere,
  // is quantized exactly (a = 1, r = 127) and picks 127 times one column of W'.
  std::vector<uint8_t> packed(static_cast<size_t>(cpu::PackedBytes(PackedFormat::kI8, n, k)));
  cpu::PackWeights(PackedFormat::kI8, n, k, w.data(), k, packed.data());
  for (int64_t p = 0; p < k; ++p) {
    std::vector<float> a(static_cast<size_t>(k), 0.0f), c(static_cast<size_t>(n));
    a[p] = 127;
    cpu::PackedLinear(PackedFormat::kI8, DType::kF32, 1, k, n, a.data(), k, packed.data(), nullptr,
                      c.data(), n);
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(c[j], 127 * stored[j * k + p]) << j << ", " << p;
  }
}

// int8's integer sums are exact and the rest is one order of f32 operations: every
// target (vpdpbusd on AVX512-VNNI, f32 elsewhere) gives the same bits, for one row and
// for a batch whose rows are each the same as alone. A row with a NaN is NaN, the other
// rows untouched.
TEST(PackedLinearTest, Int8IsTheSameOnEveryTargetAndForEachRow) {
  std::mt19937 rng(5);
  const int64_t m = 5, k = 200, n = 150;
  const std::vector<float> w = RandomVector<float>(n * k, -1, 1, rng);
  std::vector<float> a = RandomVector<float>(m * k, -3, 3, rng);
  for (int64_t p = 64; p < 96; ++p) a[1 * k + p] = 0;  // a group of zeros
  std::vector<uint8_t> packed(static_cast<size_t>(cpu::PackedBytes(PackedFormat::kI8, n, k)));
  cpu::PackWeights(PackedFormat::kI8, n, k, w.data(), k, packed.data());
  std::vector<float> first;
  ForEachTarget([&](const std::string& target) {
    std::vector<float> c(static_cast<size_t>(m * n));
    cpu::PackedLinear(PackedFormat::kI8, DType::kF32, m, k, n, a.data(), k, packed.data(), nullptr,
                      c.data(), n);
    for (int64_t i = 0; i < m; ++i) {
      std::vector<float> alone(static_cast<size_t>(n));
      cpu::PackedLinear(PackedFormat::kI8, DType::kF32, 1, k, n, a.data() + i * k, k, packed.data(),
                        nullptr, alone.data(), n);
      ASSERT_EQ(alone, std::vector<float>(c.begin() + i * n, c.begin() + (i + 1) * n))
          << target << ": row " << i;
    }
    if (first.empty()) {
      first = c;
    } else {
      ASSERT_EQ(c, first) << target;
    }
  });
  a[2 * k + 150] = NAN;
  std::vector<float> c(static_cast<size_t>(m * n));
  cpu::PackedLinear(PackedFormat::kI8, DType::kF32, m, k, n, a.data(), k, packed.data(), nullptr,
                    c.data(), n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (i == 2) {
        ASSERT_TRUE(std::isnan(c[i * n + j])) << j;
      } else {
        ASSERT_EQ(c[i * n + j], first[i * n + j]) << i << ", " << j;
      }
    }
  }
}

TEST(PackedLinearTest, RejectsWhatItCannotPack) {
  std::vector<float> w = {1, 2, INFINITY, 4};
  std::vector<uint8_t> packed(static_cast<size_t>(cpu::PackedBytes(PackedFormat::kI8, 2, 2)));
  EXPECT_THROW(cpu::PackWeights(PackedFormat::kI8, 2, 2, w.data(), 2, packed.data()), Error);
  EXPECT_THROW(cpu::PackedBytes(PackedFormat::kF32, 0, 5), Error);
  const std::vector<double> a = {1, 2};
  std::vector<double> c(2);
  EXPECT_THROW(cpu::PackedLinear(PackedFormat::kF32, DType::kF64, 1, 2, 2, a.data(), 2,
                                 packed.data(), nullptr, c.data(), 2),
               Error);
}

TEST(PackedLinearTest, ResultsDoNotDependOnTheThreadCount) {
  std::mt19937 rng(11);
  const int64_t m = 6, k = 300, n = 500;
  const std::vector<float> w = RandomVector<float>(n * k, -1, 1, rng);
  const std::vector<float> a = RandomVector<float>(m * k, -1, 1, rng);
  for (const PackedFormat format : kFormats) {
    std::vector<uint8_t> packed(static_cast<size_t>(cpu::PackedBytes(format, n, k)));
    cpu::PackWeights(format, n, k, w.data(), k, packed.data());
    const int threads = cpu::NumThreads();
    std::vector<std::vector<float>> results;
    for (const int count : {1, 3}) {
      cpu::SetNumThreads(count);
      results.emplace_back(static_cast<size_t>(m * n));
      cpu::PackedLinear(format, DType::kF32, m, k, n, a.data(), k, packed.data(), nullptr,
                        results.back().data(), n);
    }
    cpu::SetNumThreads(threads);
    EXPECT_EQ(results[0], results[1]) << cpu::PackedFormatName(format);
  }
}

}  // namespace
}  // namespace ember::kernels
