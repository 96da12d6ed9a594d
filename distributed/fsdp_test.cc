// Fully sharded gradients against one process's: every rank also computes the whole
// batch's gradient of the whole model on its own (the reference), then its rows'
// through FSDP, in two micro-batches, whose shard gradients must be the reference's
// shards. Checks too that a unit's weights are freed outside its forward and backward,
// and that the root is gathered again after the shards change. Runs as a world of one,
// and under mpirun on 2 and 3 ranks (mpi_test.sh).

#include "distributed/fsdp.h"

#include <memory>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "nn/layers.h"
#include "nn/param_spec.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::distributed {
namespace {

namespace ag = autograd;

// Three layers: the first in the root, the other two units of their own, called
// through their forward hooks.
class Net : public nn::Module {
 public:
  explicit Net(Generator& gen)
      : l0_(RegisterModule("l0", std::make_shared<nn::Linear>(12, 12, true, gen))),
        l1_(RegisterModule("l1", std::make_shared<nn::Linear>(12, 12, true, gen))),
        l2_(RegisterModule("l2", std::make_shared<nn::Linear>(12, 4, true, gen))) {}
  Tensor Forward(const Tensor& x) override {
    return (*l2_)(ag::Tanh((*l1_)(ag::Tanh(l0_->Forward(x)))));
  }
  std::string ToString() const override { return "Net"; }
  std::shared_ptr<nn::Linear> l0_, l1_, l2_;
};

Tensor Loss(Net& net, const Tensor& x) { return ag::Mean(ag::Sum(ag::Square(net(x)), {1})); }

void ExpectNear(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> g = got.ToVector<float>(), w = want.ToVector<float>();
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-6 + 1e-5 * std::abs(w[i])) << what << "[" << i << "]";
}

// Rank r's shard of a weight [out, 12]: its columns (inputs) [r 12 / n, (r + 1) 12 / n).
Tensor ShardOf(const Tensor& t, int n, int r) {
  const ag::NoGradGuard values;
  return nn::ShardViews(t, 1, 1, n, r).front().Clone();  // memory of its own
}

TEST(FsdpTest, ShardGradientsAreTheWholeBatchGradientsShards) {
  ProcessGroup& world = World();
  const int n = world.size(), r = world.rank();
  Generator ref_gen(3), gen(3), data_gen(5);
  Net ref(ref_gen), net(gen);
  const int64_t rows = 2;  // per rank and micro-batch
  const Tensor x = Randn({2 * n * rows, 12}, data_gen);
  ag::Backward(Loss(ref, x));

  // Weights sharded by their inputs, biases whole; the units' weights freed until used.
  const std::vector<std::pair<std::string, Tensor>> params = net.NamedParameters();
  std::vector<std::vector<FullyShardedData::Param>> units(3);
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i].second;
    const size_t unit = i / 2;  // l0's two parameters, l1's, l2's
    if (p.dim() == 1) {
      units[unit].push_back({p, -1, 1, Tensor()});
      continue;
    }
    const Tensor shard = ag::SetRequiresGrad(ShardOf(p, n, r));
    if (unit > 0) p.storage().Release();
    units[unit].push_back({p, 1, 1, shard});
  }
  FullyShardedData fsdp(world, units, {net.l1_.get(), net.l2_.get()});
  fsdp.ZeroGrad();
  for (int m = 0; m < 2; ++m) {
    fsdp.BeginForward();
    const Tensor loss = ag::Div(Loss(net, x.Narrow(0, (m * n + r) * rows, rows)), 2.0);
    EXPECT_TRUE(net.l1_->weight().storage().released()) << "freed after its forward";
    EXPECT_FALSE(net.l0_->weight().storage().released()) << "the root stays";
    EXPECT_NE(ag::ToDot(loss).find("FSDPGatherForBackward"), std::string::npos);
    ag::Backward(loss);
    fsdp.EndBackward();
    EXPECT_TRUE(net.l2_->weight().storage().released()) << "freed after its backward";
    EXPECT_FALSE(ag::Grad(net.l1_->weight()).defined()) << "whole gradients freed";
  }
  const auto want = ref.NamedParameters();
  for (size_t u = 0; u < units.size(); ++u) {
    for (size_t k = 0; k < units[u].size(); ++k) {
      const std::string& name = want[2 * u + k].first;
      const Tensor whole = ag::Grad(want[2 * u + k].second);
      if (units[u][k].dim < 0) {
        ExpectNear(ag::Grad(units[u][k].param), whole, name);
      } else {
        ExpectNear(ag::Grad(units[u][k].shard), ShardOf(whole, n, r), name);
      }
    }
  }
  EXPECT_GT(fsdp.reduced_bytes(), 0);

  // The shards change (an optimizer step): the next forward gathers the root again.
  {
    const ag::NoGradGuard no_grad;
    units[0][0].shard.Fill(0.5);
  }
  fsdp.ShardsUpdated();
  fsdp.BeginForward();
  for (const float v : ag::Detach(net.l0_->weight()).ToVector<float>()) ASSERT_EQ(v, 0.5f);
}

}  // namespace
}  // namespace ember::distributed
