// A model with no sharding code of its own, spread over the world by ShardedModel, against
// one process: every rank also trains the whole model on the whole batch (the
// reference), then, through ShardedModel, on its rows only; after three clipped AdamW
// steps the gathered parameters and the gradient norms must be the reference's. FSDP
// (with units and FSDP2's Shard(0) choice of dimension), plain data parallel, a meta
// model's draws, and state dicts. Runs as a world of one, and under mpirun on 2 and 3
// ranks (mpi_test.sh), where the 3-way split leaves some dimensions whole.

#include "distributed/sharded_model.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "nn/layers.h"
#include "optim/optimizer.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::distributed {
namespace {

namespace ag = autograd;

// Three layers: l2's weight [4, 12] splits 3 ways only along its inputs, and its bias
// [4] not at all.
class Net : public nn::Module {
 public:
  explicit Net(Generator& gen)
      : l0_(RegisterModule("l0", std::make_shared<nn::Linear>(12, 12, true, gen))),
        l1_(RegisterModule("l1", std::make_shared<nn::Linear>(12, 12, true, gen))),
        l2_(RegisterModule("l2", std::make_shared<nn::Linear>(12, 4, true, gen))) {}
  Tensor Forward(const Tensor& x) override { return (*l2_)(ag::Tanh((*l1_)(ag::Tanh((*l0_)(x))))); }
  std::string ToString() const override { return "Net"; }
  std::shared_ptr<nn::Linear> l0_, l1_, l2_;
};

Tensor Loss(nn::Module& net, const Tensor& x) { return ag::Mean(ag::Sum(ag::Square(net(x)), {1})); }

void ExpectNear(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> g = got.ToVector<float>(), w = want.ToVector<float>();
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-6 + 1e-5 * std::abs(w[i])) << what << "[" << i << "]";
}

// The value of a StatusOr that must be ok (value() throws, failing the test, otherwise).
template <class T>
T Must(absl::StatusOr<T> s) {
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

ShardOptions Fsdp(bool fsdp) {
  ShardOptions options;
  options.fsdp = fsdp;
  return options;
}

std::unique_ptr<optim::Optimizer> Adam(const std::vector<Tensor>& params) {
  return optim::AdamW({{params, 1e-2, 0.1}});
}

// Three steps of the whole model on the whole batch, and of `options`' ShardedModel on
// this rank's rows, compared step by step (the norms) and at the end (the parameters).
void ExpectStepsOfOneProcess(const ShardOptions& options, bool meta) {
  ProcessGroup& world = World();
  const int n = world.size(), r = world.rank();
  const Mesh mesh = Must(Mesh::Create("", world));
  Generator ref_gen(3), gen(3), data_gen(5);
  Net ref(ref_gen);
  std::shared_ptr<Net> net;
  if (meta) {
    const nn::MetaDeviceGuard guard;
    net = std::make_shared<Net>(gen);
  } else {
    net = std::make_shared<Net>(gen);
  }
  std::unique_ptr<ShardedModel> sharded =
      Must(ShardedModel::Create(net, mesh, {{}, ChildUnits(*net), nullptr}, options, gen));
  EXPECT_EQ(sharded->fsdp() != nullptr, options.fsdp && n > 1);
  EXPECT_EQ(sharded->averager() != nullptr, !options.fsdp && n > 1);
  EXPECT_EQ(sharded->split(), options.fsdp && n > 1);
  const std::unique_ptr<optim::Optimizer> ref_adam = Adam(ref.Parameters());
  const std::unique_ptr<optim::Optimizer> adam = Adam(sharded->parameters());
  const double max_norm = 0.5;  // clips: the first steps' norms are about 1
  const int64_t rows = 2;       // per rank
  for (int step = 0; step < 3; ++step) {
    const Tensor x = Randn({n * rows, 12}, data_gen);
    ref.ZeroGrad();
    ag::Backward(Loss(ref, x));
    const double want = optim::GradNorm(ref.Parameters());
    ref_adam->Step(optim::ClipFactor(want, max_norm));

    sharded->ZeroGrad();
    sharded->BeginForward();
    const Tensor loss = Loss(*net, x.Narrow(0, r * rows, rows));
    sharded->BeginBackward(/*last_micro_batch=*/true);
    ag::Backward(loss);
    sharded->EndBackward();
    sharded->FinishGradients();
    const double got = sharded->GradNorm();
    EXPECT_NEAR(got, want, 1e-5 * want) << "step " << step;
    adam->Step(optim::ClipFactor(got, max_norm));
    sharded->ParametersUpdated();
  }
  const auto want = ref.NamedParameters();
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(sharded->shardings()[i].name, want[i].first);
    ExpectNear(sharded->Gather(i, sharded->parameters()[i]), ag::Detach(want[i].second),
               want[i].first);
  }
}

TEST(ShardedModelTest, FsdpTakesOneProcesssSteps) { ExpectStepsOfOneProcess(Fsdp(true), false); }

TEST(ShardedModelTest, FsdpOfAMetaModelDrawsOneProcesssValues) {
  ExpectStepsOfOneProcess(Fsdp(true), true);
}

TEST(ShardedModelTest, DataParallelTakesOneProcesssSteps) {
  ExpectStepsOfOneProcess(Fsdp(false), false);
}

TEST(ShardedModelTest, FsdpSplitsAlongTheFirstDimensionThatDivides) {
  ProcessGroup& world = World();
  const int n = world.size();
  const Mesh mesh = Must(Mesh::Create("", world));
  Generator gen(3);
  const auto net = std::make_shared<Net>(gen);
  std::unique_ptr<ShardedModel> sharded =
      Must(ShardedModel::Create(net, mesh, {}, Fsdp(true), gen));
  const auto axes = [&](size_t i) { return sharded->shardings()[i].mesh_axes; };
  using Axes = std::vector<std::string>;
  const std::string data = n > 1 ? "data" : "";
  EXPECT_EQ(axes(0), (Axes{data, ""})) << "l0.weight [12, 12]: its outputs";
  EXPECT_EQ(axes(5), n == 2 ? Axes{data} : Axes{""}) << "l2.bias [4]: whole unless 4 divides";
  EXPECT_EQ(axes(4), n == 3 ? (Axes{"", data}) : (Axes{data, ""}))
      << "l2.weight [4, 12]: its inputs when 3 ranks do not split 4 rows";
  // The rules' "data" entries win over the first dimension.
  const ShardingRules in = Must(ShardingRules::Parse("in=data"));
  sharded = Must(ShardedModel::Create(std::make_shared<Net>(gen), mesh, {in}, Fsdp(true), gen));
  EXPECT_EQ(sharded->shardings()[0].mesh_axes, (Axes{"", data}));
  // Without FSDP they are ignored: the data axis replicates.
  sharded = Must(ShardedModel::Create(std::make_shared<Net>(gen), mesh, {in}, Fsdp(false), gen));
  EXPECT_FALSE(sharded->split());
}

TEST(ShardedModelTest, StateDictsGoInAndComeOutWhole) {
  const Mesh mesh = Must(Mesh::Create("", World()));
  Generator gen(3), other_gen(4);
  const auto net = std::make_shared<Net>(gen);
  std::unique_ptr<ShardedModel> sharded =
      Must(ShardedModel::Create(net, mesh, {{}, ChildUnits(*net), nullptr}, Fsdp(true), gen));
  Net other(other_gen);
  std::map<std::string, Tensor> state = other.StateDict();
  ASSERT_TRUE(sharded->LoadStateDict(state).ok());
  for (size_t i = 0; i < state.size(); ++i) {
    const std::string& name = sharded->shardings()[i].name;
    ExpectNear(sharded->Gather(i, sharded->parameters()[i]), state.at(name), name);
  }
  state["l1.weight"] = Zeros({12, 11});
  EXPECT_NE(sharded->LoadStateDict(state).message().find("l1.weight"), std::string::npos);
  state.erase("l1.weight");
  EXPECT_NE(sharded->LoadStateDict(state).message().find("l1.weight"), std::string::npos);
}

TEST(ShardedModelTest, AModelAxisNeedsTensorParallelLayers) {
  // A plan's layout on two ranks, from this one: refused before any group is used.
  const Mesh mesh = Must(Mesh::Layout("model:2", 2));
  Generator gen(3);
  const absl::StatusOr<std::unique_ptr<ShardedModel>> sharded =
      ShardedModel::Create(std::make_shared<Net>(gen), mesh, {}, {}, gen);
  EXPECT_EQ(sharded.status().message(),
            "mesh model:2: this model has no tensor-parallel layers for the 2 ranks of its "
            "model axis (shard it across the data axis, FSDP)");
}

}  // namespace
}  // namespace ember::distributed
