// GPT-2 as parameter specs: gpt2-xl counted on the meta device without memory, a meta
// model materialised equal to one made at once, and a model sharded along "mlp" whose
// shards are the whole model's slices.

#include "models/gpt2/model.h"

#include <vector>

#include "gtest/gtest.h"
#include "nn/module.h"
#include "tensor/ops/cat.h"
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

}  // namespace
}  // namespace ember::models::gpt2
