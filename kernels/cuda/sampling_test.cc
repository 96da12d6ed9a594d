// kernels/cuda sampling.cu against kernels/cpu: the same top k (values, indices, ties
// and NaN in torch.topk's order) and the same multinomial draws for the same
// uniforms. Skips, saying why, without a GPU.

#include "kernels/cpu/sampling.h"

#include <cmath>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/internal/testing.h"
#include "kernels/cuda/internal/testing.h"
#include "kernels/cuda/kernels.h"

namespace ember::kernels::cuda {
namespace {

using internal::DeviceBuffer;

TEST(CudaSamplingTest, TopKMatchesTheCpu) {
  EMBER_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(3);
  for (const auto& [rows, n, k] : std::vector<std::array<int64_t, 3>>{
           {1, 50257, 40}, {3, 10, 10}, {4, 1000, 1}, {2, 300, 17}}) {
    std::vector<float> x = cpu::internal::RandomVector<float>(rows * n, -5, 5, rng);
    for (int64_t i = 0; i < rows * n; i += 5) x[i] = std::round(x[i]);  // ties
    x[n / 2] = NAN;
    std::vector<float> values(rows * k);
    std::vector<int64_t> indices(rows * k);
    cpu::TopKRows(DType::kF32, rows, n, k, x.data(), values.data(), indices.data());
    const DeviceBuffer gx(x), gvalues(rows * k * 4), gindices(rows * k * 8);
    TopKRows(DType::kF32, rows, n, k, gx.data(), gvalues.data(), gindices.as<int64_t>());
    EXPECT_EQ(gindices.ToHost<int64_t>(), indices) << rows << "x" << n << " k=" << k;
    const std::vector<float> got = gvalues.ToHost<float>();
    for (int64_t i = 0; i < rows * k; ++i) {
      EXPECT_TRUE(got[i] == values[i] || (std::isnan(got[i]) && std::isnan(values[i]))) << i;
    }
  }
}

TEST(CudaSamplingTest, MultinomialDrawsWhatTheCpuDraws) {
  EMBER_SKIP_WITHOUT_CUDA();
  std::mt19937 rng(5);
  const int64_t rows = 64, n = 300;
  std::vector<double> probs = cpu::internal::RandomVector<double>(rows * n, 0, 1, rng);
  for (int64_t j = 0; j < n; ++j) probs[j] = j % 3 == 0 ? 0 : probs[j];  // zeros in row 0
  for (int64_t j = 0; j < n; ++j) probs[n + j] = 0;                      // row 1: all zero
  std::vector<double> uniform = cpu::internal::RandomVector<double>(rows, 0, 1, rng);
  uniform[2] = 0;
  uniform[3] = std::nextafter(1.0, 0.0);
  std::vector<int64_t> want(rows);
  cpu::MultinomialRows(DType::kF64, rows, n, probs.data(), uniform.data(), want.data());
  const DeviceBuffer gprobs(probs), gout(rows * 8);
  MultinomialRows(DType::kF64, rows, n, gprobs.data(), uniform.data(), gout.as<int64_t>());
  EXPECT_EQ(gout.ToHost<int64_t>(), want);
  EXPECT_EQ(want[1], -1);
}

}  // namespace
}  // namespace ember::kernels::cuda
