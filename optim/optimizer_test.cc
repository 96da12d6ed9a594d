// Each optimizer's 10-step trajectory against torch.optim (fixture written by
// tools/reference/optim_trajectories.py), exact resumption from checkpoint files, and
// gradient clipping.

#include "optim/optimizer.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nn/safetensors.h"
#include "tensor/creation.h"
#include "tensor/ops/testing.h"
#include "tensor/random.h"

namespace ember::optim {
namespace {

namespace ag = autograd;
using ::testing::HasSubstr;

// The problem of the fixture: loss = mean((X W + b - Y)^2), in f64.
struct Problem {
  Tensor x, y, w, b;

  Problem() {
    std::vector<double> xs, ys, ws;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) xs.push_back(std::sin(1.0 + i + 0.5 * j));
      for (int j = 0; j < 2; ++j) ys.push_back(std::cos(0.3 * i - 0.7 * j));
    }
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) ws.push_back(0.1 * (i - j) + 0.05);
    }
    x = FromVector(xs, {4, 3});
    y = FromVector(ys, {4, 2});
    w = ag::SetRequiresGrad(FromVector(ws, {3, 2}));
    b = ag::SetRequiresGrad(FromVector(std::vector<double>{0.2, -0.1}));
  }

  void Step(Optimizer& opt) {
    opt.ZeroGrad();
    ag::Backward(ag::Mean(ag::Square(ag::Matmul(x, w) + b - y)));
    opt.Step();
  }
};

using Factory = std::function<std::unique_ptr<Optimizer>(const Problem&)>;

std::vector<ParamGroup> One(const Problem& p, double lr, double weight_decay = 0) {
  return {{{p.w, p.b}, lr, weight_decay}};
}

const std::map<std::string, Factory>& Configs() {
  static const auto* configs = new std::map<std::string, Factory>{
      {"sgd", [](const Problem& p) { return Sgd(One(p, 0.1)); }},
      {"sgd_momentum",
       [](const Problem& p) {
         return Sgd(One(p, 0.1, 0.01), {.momentum = 0.9, .dampening = 0.1});
       }},
      {"sgd_nesterov",
       [](const Problem& p) {
         return Sgd(One(p, 0.1, 0.01), {.momentum = 0.9, .nesterov = true});
       }},
      {"rmsprop", [](const Problem& p) { return Rmsprop(One(p, 0.01)); }},
      {"rmsprop_centered",
       [](const Problem& p) {
         return Rmsprop(One(p, 0.01, 0.01),
                        {.alpha = 0.9, .eps = 1e-6, .momentum = 0.5, .centered = true});
       }},
      {"adam", [](const Problem& p) { return Adam(One(p, 0.05)); }},
      {"adam_decay",
       [](const Problem& p) {
         return Adam(One(p, 0.05, 0.1), {.beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6});
       }},
      {"adamw", [](const Problem& p) { return AdamW(One(p, 0.05, 0.1)); }},
      {"groups",
       [](const Problem& p) {
         return AdamW({{{p.w}, 0.05, 0.1}, {{p.b}, 0.02, 0.0}});
       }},
  };
  return *configs;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, const std::string& what) {
  const std::vector<double> values = got.ToVector<double>();
  ASSERT_EQ(values.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::fabs(values[i] - want[i]), 1e-6 * std::fabs(want[i]) + 1e-12)
        << what << " element " << i << ": " << values[i] << " vs " << want[i];
  }
}

TEST(OptimizerTest, TrajectoriesMatchTorchOptim) {
  const auto fixture = ops::testing::ReadFixture("optim/testdata/trajectories.txt");
  for (const auto& [name, make] : Configs()) {
    Problem p;
    std::unique_ptr<Optimizer> opt = make(p);
    for (int step = 1; step <= 10; ++step) {
      p.Step(*opt);
      const std::string key = name + "." + std::to_string(step);
      ExpectNear(p.w, fixture.at(key + ".W"), key + ".W");
      ExpectNear(p.b, fixture.at(key + ".b"), key + ".b");
    }
  }
}

// Stopping after 5 steps, writing parameters and optimizer state to safetensors files,
// and continuing in fresh objects from those files gives the 10-step run bit for bit.
TEST(OptimizerTest, ResumingFromCheckpointFilesIsExact) {
  const std::string dir = std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp";
  for (const auto& [name, make] : Configs()) {
    Problem straight;
    std::unique_ptr<Optimizer> opt = make(straight);
    for (int step = 0; step < 10; ++step) straight.Step(*opt);

    Problem first;
    std::unique_ptr<Optimizer> before = make(first);
    for (int step = 0; step < 5; ++step) first.Step(*before);
    const std::string model_path = dir + "/" + name + ".model.safetensors";
    const std::string optim_path = dir + "/" + name + ".optim.safetensors";
    ASSERT_TRUE(nn::SaveSafetensors(model_path, {{"w", first.w}, {"b", first.b}}).ok());
    ASSERT_TRUE(nn::SaveSafetensors(optim_path, before->StateDict()).ok());

    Problem resumed;  // fresh parameters and optimizer, restored from the files
    absl::StatusOr<nn::Safetensors> model = nn::LoadSafetensors(model_path);
    absl::StatusOr<nn::Safetensors> state = nn::LoadSafetensors(optim_path);
    ASSERT_TRUE(model.ok() && state.ok()) << name;
    resumed.w.CopyFrom(model->tensors.at("w"));
    resumed.b.CopyFrom(model->tensors.at("b"));
    std::unique_ptr<Optimizer> after = make(resumed);
    ASSERT_TRUE(after->LoadStateDict(state->tensors).ok()) << name;
    for (int step = 0; step < 5; ++step) resumed.Step(*after);
    EXPECT_EQ(resumed.w.ToVector<double>(), straight.w.ToVector<double>()) << name;
    EXPECT_EQ(resumed.b.ToVector<double>(), straight.b.ToVector<double>()) << name;
  }
}

// As torch's state_dict(): the entries are the optimizer's buffers, not copies (a
// checkpoint of GPT-2 124M would otherwise hold its 1 GB of moments twice).
TEST(OptimizerTest, StateDictEntriesAreTheOptimizersBuffers) {
  Problem p;
  std::unique_ptr<Optimizer> opt = AdamW(One(p, 0.05, 0.1));
  p.Step(*opt);
  const std::map<std::string, Tensor> state = opt->StateDict();
  const std::vector<double> after_one = state.at("0.exp_avg").ToVector<double>();
  p.Step(*opt);
  const std::map<std::string, Tensor> now = opt->StateDict();
  EXPECT_EQ(state.at("0.exp_avg").raw_data(), now.at("0.exp_avg").raw_data());
  EXPECT_EQ(state.at("0.exp_avg").ToVector<double>(), now.at("0.exp_avg").ToVector<double>());
  EXPECT_NE(state.at("0.exp_avg").ToVector<double>(), after_one);
  // Loading copies: a state dict loaded into another optimizer does not tie the two.
  Problem q;
  std::unique_ptr<Optimizer> other = AdamW(One(q, 0.05, 0.1));
  ASSERT_TRUE(other->LoadStateDict(now).ok());
  EXPECT_NE(other->StateDict().at("0.exp_avg").raw_data(), now.at("0.exp_avg").raw_data());
}

TEST(OptimizerTest, ABadStateDictIsRejectedAndChangesNothing) {
  Problem p;
  std::unique_ptr<Optimizer> opt = AdamW(One(p, 0.05, 0.1));
  p.Step(*opt);
  std::map<std::string, Tensor> state = opt->StateDict();
  EXPECT_EQ(state.size(), 7u);  // group.0.lr, and step / exp_avg / exp_avg_sq for 2 params
  std::map<std::string, Tensor> bad = state;
  bad["0.exp_avg"] = Zeros({2, 3}, DType::kF64);
  EXPECT_THAT(opt->LoadStateDict(bad).message(),
              HasSubstr("0.exp_avg has shape [2, 3] and dtype f64, its parameter [3, 2] and f64"));
  bad = state;
  bad["7.step"] = Full({}, 1, DType::kI64);
  EXPECT_THAT(opt->LoadStateDict(bad).message(), HasSubstr("unexpected key 7.step"));
  bad = state;
  bad["1.step"] = Full({}, 0, DType::kI64);
  EXPECT_THAT(opt->LoadStateDict(bad).message(), HasSubstr("1.step must be a positive 0-d i64"));
  EXPECT_EQ(opt->StateDict().at("0.step").item<int64_t>(), 1);
}

TEST(OptimizerTest, GroupsAndParametersAreChecked) {
  EXPECT_THROW(Sgd({{{Zeros({2})}, 0.1}}), Error);  // not requiring gradients
  Problem p;
  EXPECT_THROW(Sgd(One(p, -1)), Error);
  EXPECT_THROW(Sgd(One(p, 0.1), {.momentum = 0, .nesterov = true}), Error);
  // A parameter without a gradient is left alone.
  std::unique_ptr<Optimizer> opt = Sgd(One(p, 0.1));
  const std::vector<double> w = p.w.ToVector<double>();
  opt->Step();
  EXPECT_EQ(p.w.ToVector<double>(), w);
}

TEST(OptimizerTest, ClipGradNormScalesToTheLimitAndReturnsTheNorm) {
  const Tensor a = ag::SetRequiresGrad(Zeros({2}, DType::kF64));
  const Tensor b = ag::SetRequiresGrad(Zeros({1}, DType::kF64));
  ag::Backward(ag::Sum(a * FromList({3.0, 0.0}, DType::kF64)) + ag::Sum(b * 4.0));
  EXPECT_DOUBLE_EQ(ClipGradNorm({a, b}, 10.0), 5.0);  // under the limit: unchanged
  EXPECT_EQ(ag::Grad(a).ToVector<double>(), (std::vector<double>{3, 0}));
  EXPECT_DOUBLE_EQ(ClipGradNorm({a, b}, 1.0), 5.0);
  EXPECT_NEAR(ag::Grad(a).at({0}), 3 / (5 + 1e-6), 1e-15);
  EXPECT_NEAR(ag::Grad(b).at({0}), 4 / (5 + 1e-6), 1e-15);
}

// Step(ClipFactor(GradNorm)) is ClipGradNorm then Step() to the bit, for every optimizer
// (AdamW scaling the gradient in its kernel, the others before their update), and leaves
// the gradients unscaled. The limit clips most of the ten steps.
TEST(OptimizerTest, AScaledStepIsClippingThenStepping) {
  constexpr double kMaxNorm = 0.05;
  for (const auto& [name, make] : Configs()) {
    Problem clipped, scaled;
    std::unique_ptr<Optimizer> clipping = make(clipped), scaling = make(scaled);
    int clips = 0;
    for (int step = 0; step < 10; ++step) {
      for (Problem* p : {&clipped, &scaled}) {
        (p == &clipped ? clipping : scaling)->ZeroGrad();
        ag::Backward(ag::Mean(ag::Square(ag::Matmul(p->x, p->w) + p->b - p->y)));
      }
      const double norm = ClipGradNorm({clipped.w, clipped.b}, kMaxNorm);
      clipping->Step();
      const std::vector<double> grad = ag::Grad(scaled.w).ToVector<double>();
      ASSERT_EQ(GradNorm({scaled.w, scaled.b}), norm) << name;
      clips += ClipFactor(norm, kMaxNorm) < 1;
      scaling->Step(ClipFactor(norm, kMaxNorm));
      EXPECT_EQ(ag::Grad(scaled.w).ToVector<double>(), grad) << name;
      ASSERT_EQ(scaled.w.ToVector<double>(), clipped.w.ToVector<double>())
          << name << " step " << step;
      ASSERT_EQ(scaled.b.ToVector<double>(), clipped.b.ToVector<double>())
          << name << " step " << step;
    }
    EXPECT_GE(clips, 5) << name;
  }
  EXPECT_EQ(ClipFactor(5.0, 10.0), 1.0);
  EXPECT_EQ(ClipFactor(5.0, 1.0), 1.0 / (5.0 + 1e-6));
  EXPECT_EQ(ClipFactor(5.0, std::numeric_limits<double>::infinity()), 1.0);
}

std::vector<uint16_t> Bits(const Tensor& t) {
  std::vector<uint16_t> bits;
  for (BFloat16 b : t.Contiguous().ToVector<BFloat16>()) bits.push_back(b.bits);
  return bits;
}

// Under autocast, AdamW writes the parameter's bf16 copy (autograd/autocast.h's
// CastCopy) in its own pass: the copy is the new parameter's cast to the bit, the next
// forward reads it without casting, and the parameters follow a run whose copy a live
// graph kept from the fused pass (stepping unfused, cast again by each forward) to the
// bit.
TEST(OptimizerTest, AdamWWritesAutocastsCopyOfEachParameter) {
  Generator gen(2);
  const Tensor x = Randn({16, 40}, gen), w0 = ag::Mul(Randn({40, 24}, gen), 0.2);
  const Tensor fused = ag::SetRequiresGrad(w0.Clone()), unfused = ag::SetRequiresGrad(w0.Clone());
  std::unique_ptr<Optimizer> fused_opt = AdamW({{{fused}, 0.05, 0.1}});
  std::unique_ptr<Optimizer> unfused_opt = AdamW({{{unfused}, 0.05, 0.1}});
  Tensor copy;
  for (int step = 0; step < 4; ++step) {
    Tensor y, held;
    {
      ag::AutocastGuard autocast(DType::kBF16);
      y = ag::Matmul(x, fused);
      held = ag::Matmul(x, unfused);
    }
    ag::Backward(ag::Sum(ag::Square(y)));
    ag::BackwardOptions retain;
    retain.retain_graph = true;
    ag::Backward(ag::Sum(ag::Square(held)), Tensor(), retain);
    y = Tensor();
    const Tensor now = ag::CastCopy(fused);
    ASSERT_TRUE(now.defined());
    if (step > 0) EXPECT_TRUE(now.is_same(copy)) << "cast again at step " << step;
    copy = now;
    EXPECT_FALSE(ag::CastCopy(unfused).defined()) << "held's graph reads it";
    fused_opt->Step();
    unfused_opt->Step();
    EXPECT_TRUE(ag::CastCopy(fused).is_same(copy));
    EXPECT_EQ(Bits(copy), Bits(ag::Detach(fused).To(DType::kBF16))) << "step " << step;
    ASSERT_EQ(fused.ToVector<float>(), unfused.ToVector<float>()) << "step " << step;
    fused_opt->ZeroGrad();
    unfused_opt->ZeroGrad();
  }
}

}  // namespace
}  // namespace ember::optim
