// GPT-2 against PyTorch 1.13 (tools/reference/gpt2_parity.py): a 2-layer, 4-head,
// 64-wide model with GPT-2's full vocabulary, weights from a shared formula; the loss,
// the logits, every parameter's gradient and one AdamW step agree within a relative
// 1e-4, on the CPU and, where there is one, on a GPU (f32, TF32 off: the default); under
// bf16 autocast the loss within 1% of PyTorch's autocast loss on the same weights.

#include <cmath>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "models/gpt2/model.h"
#include "optim/optimizer.h"
#include "tensor/creation.h"
#include "tensor/cuda.h"
#include "tensor/ops/testing.h"

namespace ember::models::gpt2 {
namespace {

namespace ag = autograd;

constexpr int64_t kV = 50257, kT = 16, kB = 2;

// The script's Weight(): a sin(0.7 i + s) + c in float64, rounded to float32.
Tensor Weight(const std::string& name, const Shape& shape) {
  int64_t n = 1;
  for (const int64_t d : shape) n *= d;
  int s = 0;
  for (const char ch : name) s += static_cast<unsigned char>(ch);
  s %= 97;
  double a = 0.02, c = 0;
  if (name.size() >= 5 && name.substr(name.size() - 5) == ".bias") {
    a = 0.01;
  } else if (shape.size() == 1) {
    a = 0.1, c = 1;
  }
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    w[i] = static_cast<float>(a * std::sin(0.7 * static_cast<double>(i) + s) + c);
  return FromVector(w, shape);
}

std::vector<int64_t> Samples(int64_t n) {
  std::vector<int64_t> at;
  for (int64_t k = 0; k < 32; ++k) at.push_back((k * 7919 + 13) % n);
  return at;
}

// max |got - want| <= 1e-4 max |want| (and 1e-12 absolute, for all-zero references).
void ExpectClose(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0, error = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    error = std::max(error, std::fabs(got[i] - want[i]));
  }
  EXPECT_LE(error, 1e-4 * scale + 1e-12)
      << what << ": max error " << error << ", max |torch| " << scale;
}

std::vector<double> At(const std::vector<double>& v, const std::vector<int64_t>& at) {
  std::vector<double> out;
  for (const int64_t i : at) out.push_back(v[i]);
  return out;
}

// The device the case runs on: the CPU, or cuda:0 (skipped, saying why, without one).
class Gpt2ParityTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !cuda::IsAvailable()) GTEST_SKIP() << "no CUDA device here";
  }
  Device device() const { return GetParam() ? Device::Cuda(0) : Device::Cpu(); }
};

INSTANTIATE_TEST_SUITE_P(Devices, Gpt2ParityTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Cuda" : "Cpu";
                         });

TEST_P(Gpt2ParityTest, LossLogitsGradientsAndAdamWMatchPyTorch) {
  const std::map<std::string, std::vector<double>> ref =
      ops::testing::ReadFixture("models/gpt2/testdata/parity.txt");
  GPTConfig config;
  config.vocab_size = kV, config.block_size = kT, config.n_layer = 2, config.n_head = 4,
  config.n_embd = 64;
  GPT model(config);
  std::map<std::string, Tensor> state;
  std::vector<std::string> names;
  for (const auto& [name, p] : model.NamedParameters()) {
    state[name] = Weight(name, p.shape());
    names.push_back(name);
  }
  ASSERT_TRUE(model.LoadStateDict(state).ok());
  model.To(device());  // parameters moved in place (what the optimizer below holds)
  // GPT-2's names, in nanoGPT's order.
  EXPECT_EQ(names.front(), "wte.weight");
  EXPECT_EQ(names[2], "h.0.ln_1.weight");
  EXPECT_EQ(names[4], "h.0.attn.c_attn.weight");
  EXPECT_EQ(names.back(), "ln_f.bias");
  EXPECT_EQ(names.size(), 2u + 12 * 2 + 2);

  std::vector<int64_t> ids, targets;
  for (int64_t b = 0; b < kB; ++b) {
    for (int64_t t = 0; t < kT; ++t) {
      ids.push_back((b * 7919 + t * 104729 + 3) % kV);
      targets.push_back((b * 31 + t * 50021 + 17) % kV);
    }
  }
  const Tensor x = FromVector(ids, {kB, kT}).To(device()),
               y = FromVector(targets, {kB, kT}).To(device());
  const Tensor logits = model(x);
  ASSERT_EQ(logits.shape(), (Shape{kB, kT, kV}));
  const std::vector<double> flat = logits.ToVector<double>();
  double sum = 0, sumsq = 0;
  for (const double v : flat) sum += v, sumsq += v * v;
  ExpectClose({sumsq}, ref.at("logits.sumsq"), "sum of squared logits");
  ExpectClose(At(flat, Samples(static_cast<int64_t>(flat.size()))), ref.at("logits.samples"),
              "logits");
  // The logits' plain sum cancels to ~10 out of ~1.6M terms of size ~0.3: compared
  // against their magnitude instead.
  EXPECT_NEAR(sum, ref.at("logits.sum")[0], 1e-4 * std::sqrt(sumsq));

  {
    // The same forward under bf16 autocast against PyTorch's: the loss within 1%, each
    // logit within two bf16 roundings (|logit| < 1 here: 2^-8 each).
    ag::NoGradGuard no_grad;
    const ag::AutocastGuard autocast(DType::kBF16);
    const Tensor logits16 = model(x);
    EXPECT_EQ(logits16.dtype(), DType::kBF16);
    const std::vector<double> flat16 = logits16.ToVector<double>();
    const std::vector<double> got = At(flat16, Samples(static_cast<int64_t>(flat16.size())));
    const std::vector<double>& want = ref.at("bf16.logits.samples");
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 2 * 0x1p-8) << "bf16 logit sample " << i;
    }
    const double loss16 = model.Loss(x, y).item<double>();
    EXPECT_NEAR(loss16, ref.at("bf16.loss")[0], 0.01 * ref.at("bf16.loss")[0]);
    std::cout << "bf16 autocast loss " << loss16 << ", PyTorch's " << ref.at("bf16.loss")[0] << " ("
              << 100 * std::fabs(loss16 / ref.at("bf16.loss")[0] - 1) << "% apart)\n";
    // bf16's rounding shows: not f32's logits.
    EXPECT_NE(got, At(flat, Samples(static_cast<int64_t>(flat.size()))));
  }

  const Tensor loss = model.Loss(x, y);
  ExpectClose({loss.item<double>()}, ref.at("loss"), "loss");
  ag::Backward(loss);
  std::map<std::string, Tensor> before;
  std::map<std::string, std::vector<double>> grads;
  for (const auto& [name, p] : model.NamedParameters()) {
    const std::vector<double> g = ag::Grad(p).ToVector<double>();
    grads[name] = g;
    double gsum = 0, probe = 0;
    for (size_t i = 0; i < g.size(); ++i)
      gsum += g[i], probe += g[i] * std::sin(1.3 * static_cast<double>(i));
    // Sums over many cancelling terms: compared to the gradient's scale.
    double scale = 0;
    for (const double v : g) scale = std::max(scale, std::fabs(v));
    EXPECT_NEAR(gsum, ref.at("grad.sum." + name)[0],
                1e-4 * scale * std::sqrt(static_cast<double>(g.size())))
        << name;
    EXPECT_NEAR(probe, ref.at("grad.probe." + name)[0],
                1e-4 * scale * std::sqrt(static_cast<double>(g.size())))
        << name;
    ExpectClose(At(g, Samples(static_cast<int64_t>(g.size()))), ref.at("grad.samples." + name),
                "grad " + name);
    before[name] = p.Clone();
  }

  // nanoGPT's groups: decay on the matrices and embeddings only.
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : model.Parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  optim::AdamOptions adam;
  adam.beta2 = 0.95;
  auto opt = optim::AdamW({{decay, 1e-3, 0.1}, {no_decay, 1e-3, 0.0}}, adam);
  opt->Step();
  // The first step moves a weight by lr g / (|g| + eps) (plus the decay). Where the
  // gradient is rounding noise (the key biases: softmax ignores them, so their exact
  // gradient is 0 and both sides hold ~1e-10), that ratio is noise too: those entries
  // are left out.
  for (const auto& [name, p] : model.NamedParameters()) {
    const std::vector<double> now = p.ToVector<double>(), was = before[name].ToVector<double>();
    const std::vector<double>& g = grads[name];
    double gmax = 0;
    for (const double v : g) gmax = std::max(gmax, std::fabs(v));
    std::vector<double> delta, want;
    const std::vector<int64_t> at = Samples(static_cast<int64_t>(now.size()));
    for (size_t k = 0; k < at.size(); ++k) {
      if (g[at[k]] != 0 && std::fabs(g[at[k]]) < 1e-6 * gmax) continue;
      delta.push_back(now[at[k]] - was[at[k]]);
      want.push_back(ref.at("adamw.delta." + name)[k]);
    }
    ExpectClose(delta, want, "AdamW step of " + name);
  }
}

TEST(Gpt2ConfigTest, PresetsAndValidation) {
  const GPTConfig gpt2 = *GPTConfig::Preset("gpt2");
  EXPECT_EQ(gpt2.n_layer, 12);
  EXPECT_EQ(gpt2.n_embd, 768);
  EXPECT_EQ(GPTConfig::Preset("gpt2-xl")->n_head, 25);
  EXPECT_EQ(std::string(GPTConfig::Preset("gpt3").status().message()),
            "unknown model preset \"gpt3\"; known: gpt2, gpt2-medium, gpt2-large, gpt2-xl, small, "
            "demo, tiny");
  GPTConfig bad = gpt2;
  bad.n_head = 5;
  EXPECT_EQ(std::string(bad.Validate().message()),
            "GPTConfig.n_embd = 768 is not divisible by n_head = 5");
  // V C + T C + L (12 C^2 + 13 C) + 2 C with the head tied: 124,439,808 for gpt2
  // (OpenAI's 124M), and for the demo model as built.
  auto count = [](const GPTConfig& c) {
    return c.vocab_size * c.n_embd + c.block_size * c.n_embd +
           c.n_layer * (12 * c.n_embd * c.n_embd + 13 * c.n_embd) + 2 * c.n_embd;
  };
  EXPECT_EQ(count(gpt2), 124439808);
  const GPTConfig demo = *GPTConfig::Preset("demo");
  EXPECT_EQ(GPT(demo).NumParameters(), count(demo));
}

}  // namespace
}  // namespace ember::models::gpt2
