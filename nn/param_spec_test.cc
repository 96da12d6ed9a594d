// Parameter specs: a layer made at once equals the same layer declared on the meta
// device and materialised from the same seed; a sharded materialisation gives each rank
// exactly its slice of the whole tensor; specs count a model without memory.

#include "nn/param_spec.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/creation.h"
#include "tensor/ops/cat.h"
#include "tensor/storage.h"

namespace ember::nn {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Two layers with every kind of initializer: kaiming and uniform (Linear), normal
// (Embedding), constants (LayerNorm).
class Small : public Module {
 public:
  explicit Small(Generator& gen)
      : linear_(RegisterModule("linear", std::make_shared<Linear>(6, 4, true, gen))),
        embedding_(RegisterModule("embedding", std::make_shared<Embedding>(5, 6, gen))),
        norm_(RegisterModule("norm", std::make_shared<LayerNorm>(6))) {}
  Tensor Forward(const Tensor& x) override { return x; }
  std::string ToString() const override { return "Small"; }

 private:
  std::shared_ptr<Linear> linear_;
  std::shared_ptr<Embedding> embedding_;
  std::shared_ptr<LayerNorm> norm_;
};

std::vector<float> Values(const Tensor& t) { return t.Contiguous().ToVector<float>(); }

TEST(ParamSpecTest, LayersDeclareTheirSpecs) {
  Generator gen(1);
  Small model(gen);
  const auto specs = model.NamedParameterSpecs();
  ASSERT_EQ(specs.size(), 5u);
  EXPECT_EQ(specs[0].first, "linear.weight");
  EXPECT_EQ(specs[0].second.ToString(), "[4, 6] f32 (out, in) kaiming_uniform(a=2.23607)");
  EXPECT_EQ(specs[2].second.ToString(), "[5, 6] f32 (vocab, embed) normal(0, 1)");
  EXPECT_EQ(specs[3].second.ToString(), "[6] f32 (embed) ones");
  EXPECT_EQ(CountParameters(model).parameters, 4 * 6 + 4 + 5 * 6 + 6 + 6);
  EXPECT_EQ(CountParameters(model).bytes, 4 * CountParameters(model).parameters);
}

TEST(ParamSpecTest, MaterialisingAMetaModelGivesTheNumbersOfOneMadeAtOnce) {
  Generator eager_gen(42), meta_gen(42);
  Small eager(eager_gen);
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes();
  std::unique_ptr<Small> meta;
  {
    MetaDeviceGuard guard;
    meta = std::make_unique<Small>(meta_gen);
  }
  EXPECT_EQ(cpu.live_bytes(), live);  // no memory for the meta parameters
  EXPECT_EQ(meta->device(), Device::Meta());
  EXPECT_EQ(meta_gen.offset(), 0u);  // nothing drawn
  const Tensor handle = meta->NamedParameters()[0].second;
  Materialize(*meta, Device::Cpu(), meta_gen);
  EXPECT_TRUE(handle.device().is_cpu());  // in place: handles made before see the values
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(Values(meta->NamedParameters()[i].second), Values(eager.NamedParameters()[i].second))
        << eager.NamedParameters()[i].first;
  }
  EXPECT_EQ(meta_gen.offset(), eager_gen.offset());
}

// ToEmpty makes each parameter in place with its spec's shape and dtype, drawing
// nothing; a state dict then fills it with the eager model's values.
TEST(ParamSpecTest, ToEmptyMakesTheParametersWithoutDrawingForAStateDict) {
  Generator eager_gen(42), meta_gen(42);
  Small eager(eager_gen);
  std::unique_ptr<Small> empty;
  {
    MetaDeviceGuard guard;
    empty = std::make_unique<Small>(meta_gen);
  }
  const Tensor handle = empty->NamedParameters()[0].second;
  ToEmpty(*empty, Device::Cpu());
  EXPECT_EQ(meta_gen.offset(), 0u);
  EXPECT_TRUE(handle.device().is_cpu());
  const auto specs = empty->NamedParameterSpecs();
  const auto params = empty->NamedParameters();
  ASSERT_EQ(params.size(), specs.size());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(params[i].second.shape(), specs[i].second.shape) << params[i].first;
    EXPECT_EQ(params[i].second.dtype(), specs[i].second.dtype) << params[i].first;
  }
  ASSERT_TRUE(empty->LoadStateDict(eager.StateDict()).ok());
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(Values(params[i].second), Values(eager.NamedParameters()[i].second))
        << params[i].first;
  }
}

TEST(ParamSpecTest, ShardsAreTheWholeTensorsSlices) {
  Generator whole_gen(3);
  Small whole(whole_gen);
  // Along "embed": the embedding's columns (runs of 3 in each of 5 rows) and the norm's
  // halves; the linear layer has no "embed" axis and is made whole on every rank.
  for (const char* axis : {"embed", "out"}) {
    std::vector<std::vector<Tensor>> shards(5);
    for (int rank = 0; rank < 2; ++rank) {
      Generator gen(3);
      MetaDeviceGuard guard;
      Small model(gen);
      const Sharding sharding{axis, rank, 2};
      Materialize(model, Device::Cpu(), gen, &sharding);
      EXPECT_EQ(gen.offset(), whole_gen.offset());
      for (size_t i = 0; i < 5; ++i) shards[i].push_back(model.NamedParameters()[i].second);
    }
    const auto specs = whole.NamedParameterSpecs();
    for (size_t i = 0; i < 5; ++i) {
      const Tensor want = whole.NamedParameters()[i].second;
      int dim = -1;
      for (size_t d = 0; d < specs[i].second.axes.size(); ++d) {
        if (specs[i].second.axes[d] == axis) dim = static_cast<int>(d);
      }
      if (dim < 0) {
        EXPECT_EQ(Values(shards[i][0]), Values(want)) << axis << " " << specs[i].first;
        EXPECT_EQ(Values(shards[i][1]), Values(want)) << axis << " " << specs[i].first;
      } else {
        EXPECT_EQ(shards[i][0].size(dim) * 2, want.size(dim));
        EXPECT_EQ(Values(ops::Cat({shards[i][0], shards[i][1]}, dim)), Values(want))
            << axis << " " << specs[i].first;
      }
    }
  }
}

// A fused projection's shards (3 parts along dimension 0, as c_attn's q, k and v) split
// along both dimensions at once: shard (i, j) holds the i-th half of each part's rows
// and the j-th third of the columns, with the whole tensor's numbers.
TEST(ParamSpecTest, ShardsOfPartsAlongTwoDimensions) {
  ParamSpec spec{{12, 6}, DType::kF32, Initializer::Normal(0, 1), {"qkv", "embed"}, {3, 1}};
  EXPECT_EQ(spec.ToString(), "[12, 6] f32 (qkv*3, embed) normal(0, 1)");
  Generator whole_gen(5);
  const Tensor whole = DrawShard(spec, {1, 1}, {0, 0}, whole_gen);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      Generator gen(5);
      const Tensor shard = DrawShard(spec, {2, 3}, {i, j}, gen);
      EXPECT_EQ(gen.offset(), whole_gen.offset());
      ASSERT_EQ(shard.shape(), (Shape{6, 2}));
      std::vector<Tensor> rows;
      for (int64_t part = 0; part < 3; ++part)
        rows.push_back(whole.Narrow(0, part * 4 + i * 2, 2).Narrow(1, j * 2, 2));
      EXPECT_EQ(Values(shard), Values(ops::Cat(rows, 0))) << i << ", " << j;
      const std::vector<Tensor> views = ShardViews(whole, 0, 3, 2, i);
      ASSERT_EQ(views.size(), 3u);
      EXPECT_EQ(Values(views[2].Contiguous()), Values(whole.Narrow(0, 8 + i * 2, 2).Contiguous()));
    }
  }
  EXPECT_THAT(
      [&] {
        DrawShard(spec, {3, 1}, {0, 0}, whole_gen);
      },
      ThrowsMessage<Error>(HasSubstr("is not 3 part(s) that split into 3 equal shards")));
}

TEST(ParamSpecTest, MistakesAreErrorsNamingTheParameter) {
  Generator gen(0);
  MetaDeviceGuard guard;
  Small model(gen);
  const Sharding four{"embed", 0, 4};
  EXPECT_THAT([&] { Materialize(model, Device::Cpu(), gen, &four); },
              ThrowsMessage<Error>(HasSubstr(
                  "embedding.weight's axis embed has 6 rows, which do not split into 4")));
  EXPECT_THAT(
      [&] { model.SetAxes("linear.weight", {"out"}); },
      ThrowsMessage<Error>(HasSubstr("parameter linear.weight: 1 axis names for 2 dimensions")));
  EXPECT_THAT([&] { model.SetInitializer("linear.gain", Initializer::Ones()); },
              ThrowsMessage<Error>(HasSubstr("no parameter named gain")));
  // Nothing was made: the model is still on the meta device.
  EXPECT_THAT([&] { model.NamedParameters()[0].second.Fill(0); },
              ThrowsMessage<Error>(HasSubstr("a meta tensor has a shape but no data")));
}

}  // namespace
}  // namespace ember::nn
