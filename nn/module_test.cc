// Module bookkeeping: names, counts, modes, gradients and state dicts.

#include "nn/module.h"

#include <cmath>
#include <memory>
#include <string>

#include "autograd/autograd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/safetensors.h"
#include "tensor/creation.h"
#include "tensor/cuda.h"
#include "tensor/ops/reduce.h"

namespace ember::nn {
namespace {

namespace ag = autograd;
using ::testing::HasSubstr;

std::shared_ptr<Sequential> SmallMlp(Generator& gen) {
  return std::make_shared<Sequential>(std::vector<std::shared_ptr<Module>>{
      std::make_shared<Linear>(4, 3, true, gen), std::make_shared<Relu>(),
      std::make_shared<Dropout>(0.5, gen), std::make_shared<Linear>(3, 2, false, gen)});
}

TEST(ModuleTest, NamesCountsAndRepr) {
  Generator gen(1);
  const auto mlp = SmallMlp(gen);
  std::vector<std::string> names;
  for (const auto& [name, p] : mlp->NamedParameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"0.weight", "0.bias", "3.weight"}));
  EXPECT_EQ(mlp->NumParameters(), 4 * 3 + 3 + 3 * 2);
  EXPECT_EQ(mlp->ToString(),
            "Sequential(\n  (0): Linear(in_features=4, out_features=3, bias=True)\n  (1): ReLU()\n"
            "  (2): Dropout(p=0.5)\n  (3): Linear(in_features=3, out_features=2, bias=False)\n)");
}

TEST(ModuleTest, TrainEvalReachesEverySubmodule) {
  Generator gen(2);
  const auto mlp = SmallMlp(gen);
  const Tensor x = Ones({64, 4});
  mlp->Eval();
  EXPECT_FALSE(mlp->Children()[2].second->is_training());
  EXPECT_EQ(mlp->Forward(x).ToVector<float>(), mlp->Forward(x).ToVector<float>());  // no dropout
  mlp->Train();
  EXPECT_TRUE(mlp->Children()[2].second->is_training());
}

TEST(ModuleTest, ZeroGradForgetsEveryGradient) {
  Generator gen(3);
  const auto mlp = SmallMlp(gen);
  ag::Backward(ag::Sum(mlp->Forward(Ones({2, 4}))));
  for (const Tensor& p : mlp->Parameters()) EXPECT_TRUE(ag::Grad(p).defined());
  mlp->ZeroGrad();
  for (const Tensor& p : mlp->Parameters()) EXPECT_FALSE(ag::Grad(p).defined());
}

TEST(ModuleTest, ForwardHooksRunAroundForwardThroughTheCallOperator) {
  Generator gen(4);
  Linear linear(2, 2, false, gen);
  const Tensor x = Ones({1, 2});
  const std::vector<float> plain = linear(x).ToVector<float>();
  std::string calls;
  linear.SetForwardHooks(
      [&](const Tensor& in) {
        calls += "pre ";
        return ag::Mul(in, 2.0);
      },
      [&](const Tensor& out) {
        calls += "post";
        return ag::Add(out, 1.0);
      });
  const std::vector<float> hooked = linear(x).ToVector<float>();
  EXPECT_EQ(calls, "pre post");
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_FLOAT_EQ(hooked[i], 2 * plain[i] + 1);
  EXPECT_EQ(linear.Forward(x).ToVector<float>(), plain);  // Forward itself runs no hook
  linear.SetForwardHooks(nullptr, nullptr);
  EXPECT_EQ(linear(x).ToVector<float>(), plain);
}

// device() is the first parameter's, in NamedParameters' order: past children without
// parameters; the CPU when there is none.
TEST(ModuleTest, DeviceIsTheFirstParametersDevice) {
  Generator gen(5);
  Sequential none;
  none.Append(std::make_shared<Relu>());
  EXPECT_EQ(none.device(), Device::Cpu());
  Sequential net;
  net.Append(std::make_shared<Relu>());
  {
    const MetaDeviceGuard meta;
    net.Append(std::make_shared<Linear>(3, 2, true, gen));
  }
  net.Append(std::make_shared<Linear>(2, 2, true, gen));
  EXPECT_EQ(net.device(), Device::Meta());
}

// Module::To keeps the same tensor handles (a layer's members, an optimizer's list)
// and their requires_grad; moving to where they are is a no-op.
TEST(ModuleTest, ToMovesEveryParameterInPlace) {
  Generator gen(5);
  const auto mlp = SmallMlp(gen);
  const std::vector<Tensor> before = mlp->Parameters();
  const Storage storage = before[0].storage();
  mlp->To(Device::Cpu());
  EXPECT_TRUE(mlp->Parameters()[0].storage().is_same(storage));
  EXPECT_EQ(mlp->device(), Device::Cpu());
  if (!cuda::IsAvailable()) GTEST_SKIP() << "no CUDA device here for the rest";
  const std::vector<float> values = before[0].ToVector<float>();
  ag::Backward(ag::Sum(mlp->Forward(Ones({2, 4}))));
  mlp->To(Device::Cuda(0));
  EXPECT_EQ(mlp->device(), Device::Cuda(0));
  const std::vector<Tensor> after = mlp->Parameters();
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_TRUE(after[i].is_same(before[i]));       // the same handles...
    EXPECT_EQ(after[i].device(), Device::Cuda(0));  // ...now on the GPU
    EXPECT_TRUE(ag::RequiresGrad(after[i]));
    EXPECT_EQ(ag::Grad(after[i]).device(), Device::Cuda(0));
  }
  EXPECT_EQ(after[0].ToVector<float>(), values);
  const Tensor y = mlp->Forward(Ones({2, 4}).To(Device::Cuda(0)));
  EXPECT_EQ(y.device(), Device::Cuda(0));
  mlp->To(Device::Cpu());
  EXPECT_EQ(before[0].device(), Device::Cpu());
  EXPECT_EQ(before[0].ToVector<float>(), values);
}

// A module on the GPU writes its state as safetensors (each tensor copied to the host)
// and loads a file back into its GPU parameters, as train's checkpoints do.
TEST(ModuleTest, SafetensorsFromAndIntoTheGpu) {
  if (!cuda::IsAvailable()) GTEST_SKIP() << "no CUDA device here";
  Generator gen(6);
  const auto a = SmallMlp(gen), b = SmallMlp(gen);
  a->To(Device::Cuda(0));
  b->To(Device::Cuda(0));
  const std::string path = ::testing::TempDir() + "/module_test_gpu.safetensors";
  ASSERT_TRUE(SaveSafetensors(path, a->StateDict()).ok());
  const absl::StatusOr<Safetensors> file = LoadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE(b->LoadStateDict(file->tensors).ok());
  for (const auto& [name, p] : a->StateDict()) {
    EXPECT_EQ(b->StateDict().at(name).device(), Device::Cuda(0)) << name;
    EXPECT_EQ(p.ToVector<float>(), b->StateDict().at(name).ToVector<float>()) << name;
  }
}

TEST(ModuleTest, StateDictRoundTripsAndStrictLoadingNamesEveryProblem) {
  Generator gen(4);
  const auto a = SmallMlp(gen), b = SmallMlp(gen);
  ASSERT_TRUE(b->LoadStateDict(a->StateDict()).ok());
  for (const auto& [name, p] : a->StateDict()) {
    EXPECT_EQ(p.ToVector<float>(), b->StateDict().at(name).ToVector<float>()) << name;
  }
  std::map<std::string, Tensor> state = a->StateDict();
  state.erase("0.bias");
  state["4.weight"] = Zeros({1});
  state["3.weight"] = Zeros({3, 2});
  const absl::Status status = b->LoadStateDict(state);
  EXPECT_THAT(status.message(), HasSubstr("missing keys: 0.bias"));
  EXPECT_THAT(status.message(), HasSubstr("unexpected keys: 4.weight"));
  EXPECT_THAT(status.message(),
              HasSubstr("shape mismatches: 3.weight (checkpoint [3, 2], model [2, 3])"));
  state["3.weight"] = Zeros({2, 3});
  EXPECT_TRUE(b->LoadStateDict(state, /*strict=*/false).ok());
  EXPECT_EQ(ops::Sum(b->StateDict().at("3.weight")).item(), 0);
}

TEST(ModuleTest, LinearDefaultInitIsKaimingUniformWithASqrt5) {
  Generator gen(5);
  Linear linear(400, 300, true, gen);
  const double bound = 1 / std::sqrt(400.0);  // for both the weight and the bias
  const std::vector<float> w = linear.weight().ToVector<float>();
  double sum_squares = 0;
  for (float v : w) {
    ASSERT_LE(std::fabs(v), bound);
    sum_squares += v * v;
  }
  // U(-b, b) has variance b^2 / 3.
  EXPECT_NEAR(sum_squares / w.size(), bound * bound / 3, 0.02 * bound * bound / 3);
  for (float v : linear.bias().ToVector<float>()) ASSERT_LE(std::fabs(v), bound);
}

TEST(ModuleTest, InitialisersHaveTheirVariances) {
  Generator gen(6);
  const Tensor w = Empty({500, 200});
  auto variance = [&] {
    const Tensor sq = ops::Mean(ag::Square(w));
    return sq.item();
  };
  InitXavierUniform(w, 1, gen);
  EXPECT_NEAR(variance(), 2.0 / 700, 0.03 * 2.0 / 700);
  InitXavierNormal(w, 2, gen);
  EXPECT_NEAR(variance(), 4 * 2.0 / 700, 0.03 * 8.0 / 700);
  InitKaimingNormal(w, 0, FanMode::kFanIn, gen);
  EXPECT_NEAR(variance(), 2.0 / 200, 0.03 * 2.0 / 200);
  InitKaimingUniform(w, 0, FanMode::kFanOut, gen);
  EXPECT_NEAR(variance(), 2.0 / 500, 0.03 * 2.0 / 500);
  EXPECT_THROW(InitXavierUniform(Empty({5}), 1, gen), Error);
}

}  // namespace
}  // namespace ember::nn
