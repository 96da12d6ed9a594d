// The fused AdamW step against torch.optim.AdamW's trajectory (fixture written by
// tools/reference/adamw_steps.py) on every SIMD target, and f64 against the formula.

#include "kernels/adamw.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/testing.h"

namespace ember::kernels::cpu {
namespace {

constexpr int kN = 37, kSteps = 10;

double Gradient(int i, int t) { return i % 11 == 0 ? 0.0 : std::cos(0.5 * i + t) * (1 + i % 3); }

std::vector<std::vector<double>> Trajectory() {
  std::ifstream file("kernels/cpu/testdata/adamw_reference.txt");
  EXPECT_TRUE(file.good());
  std::vector<std::vector<double>> steps;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    steps.emplace_back();
    for (double v; in >> v;) steps.back().push_back(v);
  }
  return steps;
}

TEST(AdamWTest, FollowsPyTorchsTrajectoryOnEveryTarget) {
  const std::vector<std::vector<double>> want = Trajectory();
  ASSERT_EQ(want.size(), static_cast<size_t>(kSteps));
  ForEachTarget([&](const std::string& target) {
    std::vector<float> p(kN), m(kN, 0), v(kN, 0), g(kN);
    for (int i = 0; i < kN; ++i) p[i] = static_cast<float>(std::sin(i));
    for (int t = 1; t <= kSteps; ++t) {
      for (int i = 0; i < kN; ++i) g[i] = static_cast<float>(Gradient(i, t));
      AdamWStep(DType::kF32, kN, p.data(), g.data(), m.data(), v.data(),
                {1e-2, 0.9, 0.95, 1e-8, 0.1, t});
      for (int i = 0; i < kN; ++i) {
        ASSERT_NEAR(p[i], want[t - 1][i], 1e-6 * std::fabs(want[t - 1][i]) + 1e-7)
            << target << " step " << t << " element " << i;
      }
    }
  });
}

TEST(AdamWTest, DoubleFollowsTheFormula) {
  const int n = 1000;  // splits across threads
  std::vector<double> p(n), m(n, 0), v(n, 0), g(n), rp(n), rm(n, 0), rv(n, 0);
  for (int i = 0; i < n; ++i) rp[i] = p[i] = std::sin(i);
  const double lr = 3e-4, b1 = 0.8, b2 = 0.99, eps = 1e-6, wd = 0.01;
  for (int t = 1; t <= 5; ++t) {
    for (int i = 0; i < n; ++i) g[i] = Gradient(i, t);
    AdamWStep(DType::kF64, n, p.data(), g.data(), m.data(), v.data(), {lr, b1, b2, eps, wd, t});
    for (int i = 0; i < n; ++i) {
      rp[i] *= 1 - lr * wd;
      rm[i] = b1 * rm[i] + (1 - b1) * g[i];
      rv[i] = b2 * rv[i] + (1 - b2) * g[i] * g[i];
      const double mhat = rm[i] / (1 - std::pow(b1, t)), vhat = rv[i] / (1 - std::pow(b2, t));
      rp[i] -= lr * mhat / (std::sqrt(vhat) + eps);  // the paper's form
      ASSERT_NEAR(p[i], rp[i], 1e-12) << "step " << t << " element " << i;
      ASSERT_NEAR(m[i], rm[i], 1e-15);
      ASSERT_NEAR(v[i], rv[i], 1e-15);
    }
  }
}

TEST(AdamWTest, RejectsBadArguments) {
  float x = 0;
  EXPECT_THROW(AdamWStep(DType::kF32, 1, &x, &x, &x, &x, {1e-3, 0.9, 0.999, 1e-8, 0, 0}), Error);
  int32_t i = 0;
  EXPECT_THROW(AdamWStep(DType::kI32, 1, &i, &i, &i, &i, {1e-3, 0.9, 0.999, 1e-8, 0, 1}), Error);
}

}  // namespace
}  // namespace ember::kernels::cpu
