// GPT-2 as parameter specs: gpt2-xl counted on the meta device without memory, a meta
// model materialised equal to one made at once, and a model sharded along "mlp" whose
// shards are the whole model's slices; the head over the padded vocabulary; weights
// packed for inference.

#include "models/gpt2/model.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "distributed/mesh.h"
#include "distributed/sharding.h"
#include "gtest/gtest.h"
#include "nn/module.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/cat.h"
#include "tensor/ops/packed_linear.h"
#include "tensor/random.h"
#include "tensor/storage.h"

namespace ember::models::gpt2 {
namespace {

std::vector<float> Values(const Tensor& t) { return t.Contiguous().ToVector<float>(); }

TEST(GptSpecsTest, Gpt2XlIsCountedWithoutMemory) {
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes();
  nn::MetaDeviceGuard meta;
  Generator gen(0);
  const GPT model(GPTConfig::Preset("gpt2-xl").value(), gen);
  // V C + T C + L (12 C^2 + 13 C) + 2 C with V = 50257, T = 1024, C = 1600, L = 48.
  EXPECT_EQ(nn::CountParameters(model).parameters, 1'557'611'200);
  EXPECT_EQ(nn::CountParameters(model).bytes, 4 * 1'557'611'200LL);
  EXPECT_EQ(model.NumParameters(), 1'557'611'200);
  EXPECT_EQ(cpu.live_bytes(), live);
  EXPECT_EQ(model.device(), Device::Meta());
  const auto specs = model.NamedParameterSpecs();
  EXPECT_EQ(specs[0].first + " " + specs[0].second.ToString(),
            "wte.weight [50257, 1600] f32 (vocab, embed) normal(0, 0.02)");
  EXPECT_EQ(specs[6].first + " " + specs[6].second.ToString(),
            "h.0.attn.c_proj.weight [1600, 1600] f32 (embed, heads) normal(0, 0.00204124)");
}

// GPT-2's rules over its axes: Megatron's split of the blocks on "model" (c_attn by its
// q, k and v outputs, c_proj by its input), and FSDP's "embed" on "data" besides.
TEST(GptSpecsTest, ShardingRulesSplitTheBlocksAsMegatronAndFsdpDo) {
  nn::MetaDeviceGuard meta;
  const GPT model(GPTConfig::Preset("gpt2").value());
  const distributed::Mesh mesh = *distributed::Mesh::Layout("data:2,model:4", 8);
  EXPECT_EQ(Gpt2ShardingRules(false).ToString(), "qkv=model,heads=model,mlp=model");
  EXPECT_EQ(Gpt2ShardingRules(true).ToString(), "qkv=model,heads=model,mlp=model,embed=data");
  auto local_shapes = [&](bool fsdp) {
    const std::vector<distributed::ParamSharding> shardings =
        *distributed::Shardings(model, mesh, Gpt2ShardingRules(fsdp));
    std::map<std::string, Shape> shapes;
    for (const distributed::ParamSharding& p : shardings) shapes[p.name] = p.local_shape;
    return shapes;
  };
  std::map<std::string, Shape> tp = local_shapes(false), both = local_shapes(true);
  EXPECT_EQ(tp["h.0.attn.c_attn.weight"], (Shape{576, 768}));  // 3 x 768 / 4 rows
  EXPECT_EQ(tp["h.0.attn.c_proj.weight"], (Shape{768, 192}));
  EXPECT_EQ(tp["h.0.mlp.c_fc.weight"], (Shape{768, 768}));
  EXPECT_EQ(tp["h.0.mlp.c_proj.weight"], (Shape{768, 768}));
  EXPECT_EQ(tp["wte.weight"], (Shape{50257, 768}));  // replicated
  EXPECT_EQ(both["h.0.attn.c_attn.weight"], (Shape{576, 384}));
  EXPECT_EQ(both["wte.weight"], (Shape{50257, 384}));
  EXPECT_EQ(both["h.0.ln_1.weight"], (Shape{384}));
}

TEST(GptSpecsTest, AMetaModelMaterialisesToTheSameNumbers) {
  const GPTConfig config = GPTConfig::Preset("tiny").value();
  Generator eager_gen(5), meta_gen(5);
  const GPT eager(config, eager_gen);
  std::unique_ptr<GPT> meta;
  {
    nn::MetaDeviceGuard guard;
    meta = std::make_unique<GPT>(config, meta_gen);
  }
  nn::Materialize(*meta, Device::Cpu(), meta_gen);
  const auto want = eager.NamedParameters(), got = meta->NamedParameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(Values(got[i].second), Values(want[i].second)) << want[i].first;
  EXPECT_EQ(meta_gen.offset(), eager_gen.offset());  // dropout then draws the same
}

TEST(GptSpecsTest, ShardsAlongMlpAreTheWholeModelsSlices) {
  const GPTConfig config = GPTConfig::Preset("tiny").value();
  Generator whole_gen(8);
  const GPT whole(config, whole_gen);
  std::vector<std::vector<Tensor>> shards;
  for (int rank = 0; rank < 2; ++rank) {
    Generator gen(8);
    nn::MetaDeviceGuard guard;
    GPT model(config, gen);
    const nn::Sharding sharding{"mlp", rank, 2};
    nn::Materialize(model, Device::Cpu(), gen, &sharding);
    shards.emplace_back();
    for (const auto& [name, p] : model.NamedParameters()) shards.back().push_back(p);
  }
  const auto params = whole.NamedParameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].first;
    const bool fc = name.find("mlp.c_fc") != std::string::npos,
               proj = name.find("mlp.c_proj.weight") != std::string::npos;
    if (!fc && !proj) {
      EXPECT_EQ(Values(shards[0][i]), Values(params[i].second)) << name;
      continue;
    }
    const int dim = proj ? 1 : 0;  // c_fc [4C, C] by rows, c_proj [C, 4C] by columns
    EXPECT_EQ(shards[0][i].size(dim), 2 * config.n_embd) << name;
    EXPECT_EQ(Values(ops::Cat({shards[0][i], shards[1][i]}, dim)), Values(params[i].second))
        << name;
  }
}

// The head over the padded vocabulary: Loss multiplies by a [Vp, C] table whose first
// V rows are wte.weight, the loss and every gradient those of the unpadded head, the
// padding zero after training; with wte's memory replaced, Loss falls back to V columns
// until PadVocabulary lays it out again.
TEST(GptVocabularyTest, TheHeadRunsOverThePaddedVocabularyWithTheSameNumbers) {
  const GPTConfig config = GPTConfig::Preset("tiny").value();
  const int64_t v = config.vocab_size, vp = config.padded_vocab_size(), c = config.n_embd;
  ASSERT_EQ(vp, 50304);
  Generator gen(11);
  GPT gpt(config, gen);
  const Tensor wte = gpt.NamedParameters()[0].second;
  ASSERT_EQ(wte.shape(), (Shape{v, c}));
  EXPECT_EQ(wte.storage().nbytes(), vp * c * 4);  // the table behind it
  const Tensor ids = RandInt(0, v, {2, 16}, gen), targets = RandInt(0, v, {2, 16}, gen);
  auto grads = [&](bool padded_head) {
    gpt.ZeroGrad();
    const Tensor loss = padded_head ? gpt.Loss(ids, targets)
                                    : autograd::CrossEntropy(autograd::Reshape(gpt(ids), {-1, v}),
                                                             targets.Reshape({-1}));
    if (padded_head) {
      const std::string dot = autograd::ToDot(loss);
      EXPECT_NE(dot.find("pad_vocabulary"), std::string::npos);
      EXPECT_NE(dot.find("[2, 16, 50304]"), std::string::npos);
    }
    autograd::Backward(loss);
    std::vector<std::vector<float>> out = {{loss.item<float>()}};
    for (const Tensor& p : gpt.Parameters()) out.push_back(Values(autograd::Grad(p)));
    return out;
  };
  const auto padded = grads(true), plain = grads(false);
  ASSERT_EQ(padded.size(), plain.size());
  for (size_t i = 0; i < padded.size(); ++i) {
    for (size_t j = 0; j < padded[i].size(); ++j) {
      ASSERT_NEAR(padded[i][j], plain[i][j], 1e-6 + 1e-5 * std::fabs(plain[i][j]))
          << i << ", " << j;
    }
  }
  // Training leaves the padding zero (its logits have no gradient; AdamW steps [V, C]).
  {
    const autograd::NoGradGuard no_grad;
    for (const Tensor& p : gpt.Parameters()) {
      p.CopyFrom(ops::Sub(p, ops::Mul(autograd::Grad(p), 0.1)));
    }
  }
  const Tensor table(wte.storage(), 0, {vp, c}, {c, 1}, DType::kF32);
  for (const float x : Values(table.Narrow(0, v, vp - v))) ASSERT_EQ(x, 0.0f);
  EXPECT_EQ(gpt.StateDict().at("wte.weight").shape(), (Shape{v, c}));
  // wte's memory replaced (as To(device) does): V columns, then padded again.
  wte.SetData(wte.Clone());
  EXPECT_EQ(autograd::ToDot(gpt.Loss(ids, targets)).find("pad_vocabulary"), std::string::npos);
  const std::vector<float> before = Values(wte);
  gpt.PadVocabulary();
  EXPECT_EQ(wte.storage().nbytes(), vp * c * 4);
  EXPECT_EQ(Values(wte), before);
  EXPECT_NE(autograd::ToDot(gpt.Loss(ids, targets)).find("pad_vocabulary"), std::string::npos);
}

// Weights packed for inference: the same logits as the parameters (f32 to rounding,
// bf16 and int8 to their precision), with a cache too, and in Loss; never while
// recording gradients, and never once a parameter has changed.
TEST(GptPackedTest, DecodesWithPackedWeightsWhileTheyAreCurrent) {
  const GPTConfig config = GPTConfig::Preset("tiny").value();
  Generator gen(3);
  GPT gpt(config, gen);
  gpt.Eval();
  const Tensor ids = RandInt(0, config.vocab_size, {2, 8}, gen);
  const Tensor targets = RandInt(0, config.vocab_size, {2, 8}, gen);
  const autograd::NoGradGuard no_grad;
  const std::vector<float> want = Values(gpt(ids));
  const float want_loss = gpt.Loss(ids, targets).item<float>();
  const int64_t f32_bytes = gpt.DecodeWeightBytes();
  const std::pair<ops::PackedFormat, double> formats[] = {{ops::PackedFormat::kF32, 1e-5},
                                                          {ops::PackedFormat::kBF16, 2e-2},
                                                          {ops::PackedFormat::kI8, 2e-2}};
  for (const auto& [format, tol] : formats) {
    gpt.PackForInference(format);
    const std::vector<float> got = Values(gpt(ids));
    double err = 0, scale = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
      scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
    }
    EXPECT_LE(err, tol * scale) << kernels::cpu::PackedFormatName(format);
    EXPECT_NEAR(gpt.Loss(ids, targets).item<float>(), want_loss, tol * want_loss);
    // One token at a time through a cache: the same last logits as the whole window.
    KVCache cache = gpt.NewCache();
    const Tensor row = ids.Narrow(0, 0, 1);
    gpt.Forward(row.Narrow(1, 0, 7), &cache);
    const std::vector<float> last = Values(gpt.Forward(row.Narrow(1, 7, 1), &cache));
    const std::vector<float> whole = Values(gpt(row).Narrow(1, 7, 1));
    for (size_t i = 0; i < last.size(); ++i) ASSERT_NEAR(last[i], whole[i], 1e-4) << i;
  }
  // int8: about a quarter of f32's bytes a token.
  EXPECT_LT(gpt.DecodeWeightBytes(), f32_bytes * 3 / 10);
  EXPECT_NE(Values(gpt(ids)), want);
  {  // recording gradients: the parameters themselves
    autograd::SetGradModeEnabled(true);
    EXPECT_EQ(Values(gpt(ids)), want);
    autograd::SetGradModeEnabled(false);
  }
  // A parameter written in place (a training step): its packed copy is stale, unused.
  gpt.PackForInference(ops::PackedFormat::kF32);
  Tensor w = gpt.NamedParameters()[2].second;  // h.0's first matrix
  w.CopyFrom(ops::Mul(w, 0.5));
  const std::vector<float> changed = Values(gpt(ids));
  gpt.PackForInference(ops::PackedFormat::kF32);  // packed again: the same numbers
  const std::vector<float> repacked = Values(gpt(ids));
  for (size_t i = 0; i < changed.size(); ++i) ASSERT_NEAR(repacked[i], changed[i], 1e-4) << i;
  EXPECT_NE(changed, want);
}

}  // namespace
}  // namespace ember::models::gpt2
