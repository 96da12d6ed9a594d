// The mesh and the shardings: grids parsed and laid out row-major, from one process (a
// layout for planning) and under mpirun on 4 ranks (mpi_test), where each axis' group
// holds exactly the ranks its definition says (an all-reduce of the members' ranks);
// and each parameter's shard from its spec and a table of rules, with the errors that
// name a parameter.

#include "distributed/mesh.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "distributed/process_group.h"
#include "distributed/sharding.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::distributed {
namespace {

TEST(MeshTest, LayoutIsRowMajorWithTheLastAxisFastest) {
  const Mesh mesh = *Mesh::Layout("data:2,model:3", 6, /*rank=*/5);
  EXPECT_EQ(mesh.ToString(), "data:2,model:3");
  EXPECT_EQ(mesh.axes(), (std::vector<std::string>{"data", "model"}));
  EXPECT_EQ(mesh.coordinate("data"), 1);
  EXPECT_EQ(mesh.coordinate("model"), 2);
  EXPECT_EQ(Mesh::Layout("data:2,model:3", 6, 1)->coordinate("model"), 1);
  EXPECT_EQ(Mesh::Layout("data:2,model:3", 6, 3)->coordinate("data"), 1);
  // An axis the mesh lacks: size 1, coordinate 0 (rules name axes a mesh leaves out).
  EXPECT_FALSE(mesh.has("pipe"));
  EXPECT_EQ(mesh.size("pipe"), 1);
  EXPECT_EQ(Mesh::Layout("", 4)->ToString(), "data:4");
  EXPECT_EQ(Mesh::Layout("data:2,model:4", 0)->size("model"), 4);  // a plan for 8 ranks
  EXPECT_THROW(mesh.group("data"), Error);                         // a layout has no groups
}

TEST(MeshTest, BadSpecsAreNamed) {
  EXPECT_EQ(Mesh::Layout("data:2,model:2", 2).status().message(),
            "mesh data:2,model:2 has 4 ranks, but the world has 2 (mpirun -np 4)");
  for (const char* bad : {"data", "data:0", "Data:2", "data:2,", "data:x", ":2", "0dp:2"}) {
    EXPECT_EQ(Mesh::Layout(bad, 2).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(Mesh::Layout("dim_0:2", 2)->size("dim_0"), 2);  // PyTorch's default names
  EXPECT_NE(Mesh::Layout("data:1,data:2", 2).status().message().find("appears twice"),
            std::string::npos);
}

// Each axis' group, on whatever world this runs in: its members are the ranks whose
// other coordinates equal this rank's, in the order of this axis' coordinate.
TEST(MeshTest, EachAxisGroupHoldsTheRanksAlongIt) {
  ProcessGroup& world = World();
  const std::string spec = world.size() == 4 ? "data:2,model:2" : "";
  const Mesh mesh = *Mesh::Create(spec, world);
  int stride = 1;
  const std::vector<std::string> axes = mesh.axes();
  for (auto axis = axes.rbegin(); axis != axes.rend(); ++axis) {
    ProcessGroup& group = mesh.group(*axis);
    ASSERT_EQ(group.size(), mesh.size(*axis)) << *axis;
    ASSERT_EQ(group.rank(), mesh.coordinate(*axis)) << *axis;
    // Member i is world rank base + i * stride: the sum of their world ranks, and of
    // their squares (which tells {0, 3} from {1, 2}).
    const int base = world.rank() - mesh.coordinate(*axis) * stride;
    double sum = 0, squares = 0;
    for (int i = 0; i < group.size(); ++i) {
      sum += base + i * stride;
      squares += (base + i * stride) * (base + i * stride);
    }
    EXPECT_EQ(group.AllReduce(static_cast<double>(world.rank())), sum) << *axis;
    EXPECT_EQ(group.AllReduce(static_cast<double>(world.rank() * world.rank())), squares) << *axis;
    Tensor t = Full({3}, world.rank() + 1.0);
    group.AllReduce(t, ReduceOp::kMean);
    EXPECT_DOUBLE_EQ(t.Select(0, 2).item<float>(), sum / group.size() + 1) << *axis;
    stride *= mesh.size(*axis);
  }
}

// A block with GPT-2's logical axes: c_fc [mlp, embed], c_proj [embed, mlp], a LayerNorm
// [embed], and an odd-sized head [vocab, embed].
class Block : public nn::Module {
 public:
  explicit Block(int64_t vocab) {
    RegisterModule("ln", std::make_shared<nn::LayerNorm>(8));
    RegisterModule("c_fc", std::make_shared<nn::Linear>(8, 32));
    RegisterModule("c_proj", std::make_shared<nn::Linear>(32, 8));
    RegisterModule("head", std::make_shared<nn::Linear>(8, vocab, /*bias=*/false));
    SetAxes("c_fc.weight", {"mlp", "embed"});
    SetAxes("c_fc.bias", {"mlp"});
    SetAxes("c_proj.weight", {"embed", "mlp"});
    SetAxes("c_proj.bias", {"embed"});
    SetAxes("head.weight", {"vocab", "embed"});
  }
  Tensor Forward(const Tensor& x) override { return x; }
  std::string ToString() const override { return "Block"; }
};

std::vector<Shape> LocalShapes(const std::vector<ParamSharding>& shardings) {
  std::vector<Shape> shapes;
  for (const ParamSharding& p : shardings) shapes.push_back(p.local_shape);
  return shapes;
}

TEST(ShardingTest, TheRulesSplitEveryDimensionWhoseAxisTheyMapOntoTheMesh) {
  const nn::MetaDeviceGuard meta;  // specs only: no memory
  const Block block(50);
  const Mesh mesh = *Mesh::Layout("data:2,model:4", 8);
  // Order: ln.weight, ln.bias, c_fc.weight, c_fc.bias, c_proj.weight, c_proj.bias, head.
  EXPECT_EQ(LocalShapes(*Shardings(block, mesh, ShardingRules())),
            (std::vector<Shape>{{8}, {8}, {32, 8}, {32}, {8, 32}, {8}, {50, 8}}));
  // Megatron's tensor parallelism (GPT-2's table, models/gpt2/block.h), then with FSDP.
  const ShardingRules tp = *ShardingRules::Parse("qkv=model,heads=model,mlp=model");
  const std::vector<ParamSharding> megatron = *Shardings(block, mesh, tp);
  EXPECT_EQ(LocalShapes(megatron),
            (std::vector<Shape>{{8}, {8}, {8, 8}, {8}, {8, 8}, {8}, {50, 8}}));
  EXPECT_EQ(megatron[2].mesh_axes, (std::vector<std::string>{"model", ""}));
  EXPECT_TRUE(megatron[4].sharded());
  EXPECT_FALSE(megatron[0].sharded());
  // FSDP and tensor parallel on a 2-D mesh: c_fc split both ways.
  const ShardingRules both = *ShardingRules::Parse("qkv=model,heads=model,mlp=model,embed=data");
  EXPECT_EQ(both.ToString(), "qkv=model,heads=model,mlp=model,embed=data");
  EXPECT_EQ(LocalShapes(*Shardings(block, mesh, both)),
            (std::vector<Shape>{{4}, {4}, {8, 4}, {8}, {4, 8}, {4}, {50, 4}}));
  // The same table on a mesh without "model" is FSDP alone; on one process, nothing.
  EXPECT_EQ(LocalShapes(*Shardings(block, *Mesh::Layout("data:2", 2), both))[2], (Shape{32, 4}));
  EXPECT_EQ(LocalShapes(*Shardings(block, *Mesh::Layout("", 1), both))[2], (Shape{32, 8}));
  const std::string table = ShardingsTable(*Shardings(block, mesh, both), mesh, both);
  EXPECT_NE(table.find("c_fc.weight    [32, 8] (mlp, embed)  -> [8, 4] (model, data)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("parameters per rank: "), std::string::npos);
}

TEST(ShardingTest, ErrorsNameTheParameter) {
  const nn::MetaDeviceGuard meta;
  const Block block(50);
  const Mesh mesh = *Mesh::Layout("data:2,model:4", 8);
  const auto vocab = Shardings(block, mesh, *ShardingRules::Parse("vocab=model"));
  EXPECT_NE(vocab.status().message().find(
                "head.weight [50, 8] f32 (vocab, embed) kaiming_uniform(a=2.23607): its vocab "
                "axis (50) does not split into 4 equal parts along mesh axis model"),
            std::string::npos)
      << vocab.status();
  const auto twice = Shardings(block, mesh, *ShardingRules::Parse("mlp=data,embed=data"));
  EXPECT_NE(twice.status().message().find("both map to mesh axis data"), std::string::npos)
      << twice.status();
  EXPECT_EQ(ShardingRules::Parse("embed").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ShardingRules::Parse("embed=data,embed=model").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ShardingRules::Parse("embed=")->MeshAxis("embed"), "");  // replicated
}

// A fused projection (q, k and v side by side: 3 parts along "qkv") and an MLP weight.
class Fused : public nn::Module {
 public:
  explicit Fused(Generator& gen) {
    RegisterModule("c_attn", std::make_shared<nn::Linear>(8, 24, true, gen));
    RegisterModule("c_fc", std::make_shared<nn::Linear>(8, 16, false, gen));
    SetAxes("c_attn.weight", {"qkv", "embed"}, {3, 1});
    SetAxes("c_attn.bias", {"qkv"}, {3});
    SetAxes("c_fc.weight", {"mlp", "embed"});
    for (const auto& [name, spec] : NamedParameterSpecs())
      SetInitializer(name, nn::Initializer::Normal(0, 1));
  }
  Tensor Forward(const Tensor& x) override { return x; }
  std::string ToString() const override { return "Fused"; }
};

// On whatever world this runs in (a 2 x 2 mesh on 4 ranks): each rank's shard drawn
// from the spec is the whole tensor's slice (q, k and v each split by the model axis),
// and gathering the shards gives back the whole tensor, bit for bit.
TEST(ShardingTest, DrawSliceAndGatherAgreeWithTheWholeTensor) {
  ProcessGroup& world = World();
  const Mesh mesh = *Mesh::Create(world.size() == 4 ? "data:2,model:2" : "", world);
  Generator whole_gen(7), gen(7);
  std::shared_ptr<Fused> whole, meta;
  {
    const nn::MetaDeviceGuard guard;  // declared, then drawn from the specs
    whole = std::make_shared<Fused>(whole_gen);
    meta = std::make_shared<Fused>(gen);
  }
  nn::Materialize(*whole, Device::Cpu(), whole_gen);
  const std::vector<ParamSharding> shardings =
      *Shardings(*meta, mesh, *ShardingRules::Parse("qkv=model,heads=model,mlp=model,embed=data"));
  const auto params = whole->NamedParameters();
  for (size_t i = 0; i < shardings.size(); ++i) {
    const Tensor drawn = shardings[i].Draw(mesh, gen);
    const Tensor sliced = shardings[i].Slice(params[i].second, mesh);
    EXPECT_EQ(drawn.shape(), shardings[i].local_shape) << shardings[i].name;
    EXPECT_EQ(drawn.ToVector<float>(), sliced.ToVector<float>()) << shardings[i].name;
    EXPECT_EQ(shardings[i].Gather(drawn, mesh).ToVector<float>(),
              params[i].second.ToVector<float>())
        << shardings[i].name;
  }
  EXPECT_EQ(gen.offset(), whole_gen.offset());
  if (world.size() == 4) {
    // Rank (data 1, model 1) holds c_attn's rows 4-7 of q, of k and of v, columns 4-7.
    const Tensor w = autograd::Detach(params[0].second);
    const Tensor local = shardings[0].Slice(w, mesh);
    if (mesh.coordinate("model") == 1 && mesh.coordinate("data") == 1) {
      EXPECT_EQ(local.Narrow(0, 4, 4).ToVector<float>(),
                w.Narrow(0, 12, 4).Narrow(1, 4, 4).Contiguous().ToVector<float>());
    }
  }
}

}  // namespace
}  // namespace ember::distributed
