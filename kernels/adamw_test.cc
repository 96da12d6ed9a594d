// The fused AdamW step: one table of cases on every CPU SIMD target this machine has and
// on CUDA (kernels/cuda/internal/backends.h). f32 against torch.optim.AdamW's own
// trajectory (kernels/testdata/adamw_reference.txt, written by
// tools/reference/adamw_steps.py); f32 with the gradient scaled (clipping's factor) and
// f64 against the update computed in double. The CUDA half skips, saying why, without a
// GPU.

#include "kernels/adamw.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

double Gradient(int64_t i, int64_t t) {
  return i % 11 == 0 ? 0.0 : std::cos(0.5 * i + t) * (1 + i % 3);
}

// The parameters after each of torch.optim.AdamW's steps, one line per step.
std::vector<std::vector<double>> Trajectory() {
  std::ifstream file("kernels/testdata/adamw_reference.txt");
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

// AdamW in double: p *= 1 - lr wd; m, v the moving averages of g and g^2;
// p -= lr m_hat / (sqrt(v_hat) + eps), with m_hat, v_hat bias-corrected.
struct ReferenceAdamW {
  double lr, beta1, beta2, eps, weight_decay;
  std::vector<double> p, m, v;

  void Step(int64_t t, const std::vector<double>& g) {
    for (size_t i = 0; i < p.size(); ++i) {
      p[i] *= 1 - lr * weight_decay;
      m[i] = beta1 * m[i] + (1 - beta1) * g[i];
      v[i] = beta2 * v[i] + (1 - beta2) * g[i] * g[i];
      const double m_hat = m[i] / (1 - std::pow(beta1, t)), v_hat = v[i] / (1 - std::pow(beta2, t));
      p[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
};

// One tensor's step: a table of one.
template <typename B>
void StepOne(DType dtype, int64_t n, void* p, const void* g, void* m, void* v,
             const AdamWHyper& hyper) {
  const AdamWTensor tensor{n, p, g, m, v, hyper};
  B::AdamWStep(dtype, 1, &tensor);
}

EMBER_BACKEND_TEST_SUITE(AdamWTest);

TYPED_TEST(AdamWTest, FollowsPyTorchsTrajectory) {
  using B = TypeParam;
  const std::vector<std::vector<double>> want = Trajectory();
  constexpr int64_t kN = 37, kSteps = 10;
  ASSERT_EQ(want.size(), static_cast<size_t>(kSteps));
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    std::vector<float> p(kN), g(kN);
    for (int64_t i = 0; i < kN; ++i) p[i] = static_cast<float>(std::sin(i));
    const typename B::Buffer dp(p), dm(std::vector<float>(kN, 0)), dv(std::vector<float>(kN, 0));
    for (int64_t t = 1; t <= kSteps; ++t) {
      for (int64_t i = 0; i < kN; ++i) g[i] = static_cast<float>(Gradient(i, t));
      const typename B::Buffer dg(g);
      StepOne<B>(DType::kF32, kN, dp.data(), dg.data(), dm.data(), dv.data(),
                 {1e-2, 0.9, 0.95, 1e-8, 0.1, t});
      const std::vector<float> got = dp.template ToHost<float>();
      for (int64_t i = 0; i < kN; ++i) {
        ASSERT_NEAR(got[i], want[t - 1][i], 1e-6 * std::fabs(want[t - 1][i]) + 1e-7)
            << path << " step " << t << " element " << i;
      }
    }
  });
}

// Five steps in f32, odd ones reading the gradient scaled as clipping would scale it.
TYPED_TEST(AdamWTest, ScaledGradientsFollowTheUpdateInDouble) {
  using B = TypeParam;
  std::mt19937 rng(8);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{100003}}) {
      const std::vector<float> p = RandomVector<float>(n, -1, 1, rng);
      ReferenceAdamW want{1e-2, 0.9, 0.95, 1e-8, 0.1, {p.begin(), p.end()}, {}, {}};
      want.m.assign(n, 0);
      want.v.assign(n, 0);
      const typename B::Buffer dp(p), dm(std::vector<float>(n, 0)), dv(std::vector<float>(n, 0));
      for (int64_t step = 1; step <= 5; ++step) {
        const std::vector<float> g = RandomVector<float>(n, -1, 1, rng);
        const typename B::Buffer dg(g);
        const double scale = step % 2 == 1 ? 0.375 : 1.0;
        StepOne<B>(DType::kF32, n, dp.data(), dg.data(), dm.data(), dv.data(),
                   {want.lr, want.beta1, want.beta2, want.eps, want.weight_decay, step, scale});
        std::vector<double> scaled(n);
        for (int64_t i = 0; i < n; ++i) scaled[i] = scale * g[i];
        want.Step(step, scaled);
      }
      const std::vector<float> got_p = dp.template ToHost<float>();
      const std::vector<float> got_m = dm.template ToHost<float>();
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_NEAR(got_p[i], want.p[i], 2e-6 + 1e-5 * std::fabs(want.p[i]))
            << path << ", n=" << n << " p[" << i << "]";
        ASSERT_NEAR(got_m[i], want.m[i], 1e-6 * std::fabs(want.m[i]) + 1e-7)
            << path << ", n=" << n << " m[" << i << "]";
      }
    }
  });
}

TYPED_TEST(AdamWTest, DoubleFollowsTheUpdateInDouble) {
  using B = TypeParam;
  const int64_t n = 1000;  // splits across threads
  std::vector<double> p(n), g(n);
  for (int64_t i = 0; i < n; ++i) p[i] = std::sin(i);
  ReferenceAdamW want{
      3e-4, 0.8, 0.99, 1e-6, 0.01, p, std::vector<double>(n, 0), std::vector<double>(n, 0)};
  const typename B::Buffer dp(p), dm(std::vector<double>(n, 0)), dv(std::vector<double>(n, 0));
  for (int64_t t = 1; t <= 5; ++t) {
    for (int64_t i = 0; i < n; ++i) g[i] = Gradient(i, t);
    const typename B::Buffer dg(g);
    StepOne<B>(DType::kF64, n, dp.data(), dg.data(), dm.data(), dv.data(),
               {want.lr, want.beta1, want.beta2, want.eps, want.weight_decay, t});
    want.Step(t, g);
    const std::vector<double> got_p = dp.template ToHost<double>(),
                              got_m = dm.template ToHost<double>(),
                              got_v = dv.template ToHost<double>();
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(got_p[i], want.p[i], 1e-12) << "step " << t << " element " << i;
      ASSERT_NEAR(got_m[i], want.m[i], 1e-15);
      ASSERT_NEAR(got_v[i], want.v[i], 1e-15);
    }
  }
}

// A step over many tensors in one call (empty ones, sizes across chunk and thread
// boundaries, each with its own lr, weight decay, step and scale) leaves every element
// exactly as a step over its tensor alone.
TYPED_TEST(AdamWTest, ManyTensorsInOneCallMatchEachAlone) {
  using B = TypeParam;
  std::mt19937 rng(21);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    const std::vector<int64_t> sizes = {0, 1, 7, 2048, 2049, 0, 100003, 5, 4095};
    struct Arrays {
      std::vector<float> p, g, m, v;
    };
    std::vector<Arrays> arrays;
    std::vector<AdamWHyper> hypers;
    for (size_t t = 0; t < sizes.size(); ++t) {
      const int64_t n = sizes[t];
      arrays.push_back({RandomVector<float>(n, -1, 1, rng), RandomVector<float>(n, -1, 1, rng),
                        RandomVector<float>(n, -0.1, 0.1, rng),
                        RandomVector<float>(n, 0, 0.01, rng)});
      hypers.push_back({1e-3 * (t + 1), 0.9, 0.95, 1e-8, t % 2 == 0 ? 0.1 : 0.0,
                        static_cast<int64_t>(t + 1), t % 3 == 0 ? 0.5 : 1.0});
    }
    // Together: one table.
    std::vector<std::unique_ptr<typename B::Buffer>> buffers;
    std::vector<AdamWTensor> table;
    for (size_t t = 0; t < sizes.size(); ++t) {
      for (const std::vector<float>* a : {&arrays[t].p, &arrays[t].g, &arrays[t].m, &arrays[t].v}) {
        buffers.push_back(std::make_unique<typename B::Buffer>(*a));
      }
      const size_t b = 4 * t;
      table.push_back({sizes[t], buffers[b]->data(), buffers[b + 1]->data(), buffers[b + 2]->data(),
                       buffers[b + 3]->data(), hypers[t]});
    }
    B::AdamWStep(DType::kF32, static_cast<int64_t>(table.size()), table.data());
    // Alone: one call each.
    for (size_t t = 0; t < sizes.size(); ++t) {
      const typename B::Buffer p(arrays[t].p), g(arrays[t].g), m(arrays[t].m), v(arrays[t].v);
      StepOne<B>(DType::kF32, sizes[t], p.data(), g.data(), m.data(), v.data(), hypers[t]);
      const std::string where = path + ", tensor " + std::to_string(t);
      EXPECT_EQ(buffers[4 * t]->template ToHost<float>(), p.template ToHost<float>()) << where;
      EXPECT_EQ(buffers[4 * t + 2]->template ToHost<float>(), m.template ToHost<float>()) << where;
      EXPECT_EQ(buffers[4 * t + 3]->template ToHost<float>(), v.template ToHost<float>()) << where;
      if (sizes[t] > 0) {  // and it moved
        EXPECT_NE(p.template ToHost<float>(), arrays[t].p) << where;
      }
    }
  });
}

// With a bf16 copy (autocast's, of an f32 parameter), the step writes the updated
// parameter rounded to nearest even into it, element for element as BFloat16::FromFloat
// (across vector tails and the threads' cuts), and leaves p, m, v as a step without one.
// A NaN parameter stays NaN in the copy.
TYPED_TEST(AdamWTest, WritesTheBf16CopyOfTheUpdatedParameter) {
  using B = TypeParam;
  std::mt19937 rng(5);
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    const std::vector<int64_t> sizes = {1, 7, 2049, 100003};
    std::vector<std::unique_ptr<typename B::Buffer>> with, without;
    std::vector<AdamWTensor> table, plain;
    for (size_t t = 0; t < sizes.size(); ++t) {
      const int64_t n = sizes[t];
      std::vector<float> values = RandomVector<float>(n, -1, 1, rng);
      values[n / 2] = std::nanf("");
      const std::vector<float> p = values, g = RandomVector<float>(n, -1, 1, rng);
      for (auto* list : {&with, &without}) {
        for (const std::vector<float>* a : {&p, &g}) {
          list->push_back(std::make_unique<typename B::Buffer>(*a));
        }
        for (int i = 0; i < 2; ++i) {
          list->push_back(std::make_unique<typename B::Buffer>(std::vector<float>(n, 0)));
        }
      }
      with.push_back(std::make_unique<typename B::Buffer>(std::vector<BFloat16>(n)));
      const AdamWHyper hyper{1e-2, 0.9, 0.95, 1e-8, 0.1, static_cast<int64_t>(t + 1), 0.5};
      const size_t b = 5 * t, c = 4 * t;
      table.push_back({n, with[b]->data(), with[b + 1]->data(), with[b + 2]->data(),
                       with[b + 3]->data(), hyper, with[b + 4]->data()});
      plain.push_back({n, without[c]->data(), without[c + 1]->data(), without[c + 2]->data(),
                       without[c + 3]->data(), hyper});
    }
    B::AdamWStep(DType::kF32, static_cast<int64_t>(table.size()), table.data());
    B::AdamWStep(DType::kF32, static_cast<int64_t>(plain.size()), plain.data());
    for (size_t t = 0; t < sizes.size(); ++t) {
      const std::string where = path + ", n=" + std::to_string(sizes[t]);
      const std::vector<float> p = with[5 * t]->template ToHost<float>();
      for (int i : {0, 2, 3}) {  // p, m, v
        const std::vector<float> a = with[5 * t + i]->template ToHost<float>();
        const std::vector<float> b = without[4 * t + i]->template ToHost<float>();
        ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0) << where;
      }
      const std::vector<BFloat16> copy = with[5 * t + 4]->template ToHost<BFloat16>();
      for (int64_t i = 0; i < sizes[t]; ++i) {
        if (std::isnan(p[i])) {
          ASSERT_TRUE(std::isnan(copy[i].ToFloat())) << where << " element " << i;
          continue;
        }
        ASSERT_EQ(copy[i].bits, BFloat16::FromFloat(p[i]).bits) << where << " element " << i;
      }
    }
  });
}

TEST(AdamWCpuTest, RejectsBadArguments) {
  float x = 0;
  EXPECT_THROW(StepOne<cuda::internal::CpuBackend>(DType::kF32, 1, &x, &x, &x, &x,
                                                   {1e-3, 0.9, 0.999, 1e-8, 0, 0}),
               Error);
  int32_t i = 0;
  EXPECT_THROW(StepOne<cuda::internal::CpuBackend>(DType::kI32, 1, &i, &i, &i, &i,
                                                   {1e-3, 0.9, 0.999, 1e-8, 0, 1}),
               Error);
  // A bf16 copy of an f64 parameter.
  double d = 0;
  BFloat16 copy;
  const AdamWTensor f64{1, &d, &d, &d, &d, {1e-3, 0.9, 0.999, 1e-8, 0, 1}, &copy};
  EXPECT_THROW(cpu::AdamWStep(DType::kF64, 1, &f64), Error);
}

}  // namespace
}  // namespace ember::kernels
