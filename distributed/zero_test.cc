// ZeRO-1 against the plain AdamW on the averaged gradients, steps and state: every rank
// computes the reference on its own. Runs as a world of one, and under mpirun
// (mpi_test.sh), where the 37 parameters split unevenly over 2 or 3 ranks.

#include "distributed/zero.h"

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/autograd.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/random.h"

namespace ember::distributed {
namespace {

namespace ag = autograd;
using ::testing::HasSubstr;

// Parameters in two groups (decay on the matrix), the same on every rank.
std::vector<optim::ParamGroup> Groups(std::vector<Tensor>& params) {
  Generator gen(3);
  params = {Randn({4, 7}, gen), Randn({4}, gen), Randn({5}, gen)};
  for (const Tensor& p : params) ag::SetRequiresGrad(p);
  return {{{params[0]}, 0.01, 0.1}, {{params[1], params[2]}, 0.01, 0.0}};
}

// Step k's gradients, the same on every rank: rank r's is the average plus (r - mean r)
// times a ramp, so that only their mean is the average.
void SetGradients(const std::vector<Tensor>& params, int step, int rank, int world) {
  for (size_t i = 0; i < params.size(); ++i) {
    Generator gen(100 * step + i);
    const Tensor g = Randn(params[i].shape(), gen);
    const double offset = rank - (world - 1) / 2.0;
    ag::ZeroGrad(params[i]);
    params[i].autograd_meta()->grad = ops::Add(g, ops::Mul(Ones(params[i].shape()), offset));
  }
}

void SetMeanGradients(const std::vector<Tensor>& params, int step) {
  for (size_t i = 0; i < params.size(); ++i) {
    Generator gen(100 * step + i);
    params[i].autograd_meta()->grad = Randn(params[i].shape(), gen);
  }
}

void ExpectNear(const Tensor& got, const Tensor& want, const std::string& what) {
  const std::vector<double> g = got.To(DType::kF64).ToVector<double>(),
                            w = want.To(DType::kF64).ToVector<double>();
  ASSERT_EQ(g.size(), w.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-6 + 1e-5 * std::abs(w[i])) << what << "[" << i << "]";
}

TEST(ZeroAdamWTest, StepsEqualThePlainOptimizerOnTheMeanGradient) {
  ProcessGroup& world = World();
  std::vector<Tensor> ref_params, params;
  std::unique_ptr<optim::Optimizer> plain = optim::AdamW(Groups(ref_params), {});
  ZeroAdamW zero(world, Groups(params), {});
  EXPECT_EQ(zero.state_elements(), 2 * ((37 + world.size() - 1) / world.size()));
  for (int step = 0; step < 3; ++step) {
    SetMeanGradients(ref_params, step);
    const double max_norm =
        step == 1 ? 0.5 : std::numeric_limits<double>::infinity();  // one clipped step
    const double ref_norm = optim::ClipGradNorm(ref_params, max_norm);
    plain->Step();
    SetGradients(params, step, world.rank(), world.size());
    EXPECT_NEAR(zero.Step(max_norm), ref_norm, 1e-5 * ref_norm);
    for (size_t i = 0; i < params.size(); ++i) ExpectNear(params[i], ref_params[i], "parameter");
  }
  // The gathered state is the plain optimizer's, key for key.
  const std::map<std::string, Tensor> want = plain->StateDict(), got = zero.StateDict();
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [key, value] : want) {
    ASSERT_TRUE(got.count(key)) << key;
    ExpectNear(got.at(key), value, key);
  }
}

TEST(ZeroAdamWTest, StateMovesBetweenWorldSizesThroughThePlainFormat) {
  ProcessGroup& world = World();
  // A plain optimizer's state after two steps, loaded into ZeRO: the next step agrees.
  std::vector<Tensor> ref_params, params;
  std::unique_ptr<optim::Optimizer> plain = optim::AdamW(Groups(ref_params), {});
  for (int step = 0; step < 2; ++step) {
    SetMeanGradients(ref_params, step);
    plain->Step();
  }
  ZeroAdamW zero(world, Groups(params), {});
  for (size_t i = 0; i < params.size(); ++i) params[i].CopyFrom(ref_params[i]);
  ASSERT_TRUE(zero.LoadStateDict(plain->StateDict()).ok());
  SetMeanGradients(ref_params, 2);
  plain->Step();
  SetGradients(params, 2, world.rank(), world.size());
  zero.Step(std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < params.size(); ++i) ExpectNear(params[i], ref_params[i], "parameter");

  // Mismatched state: a shape, and parameters at different steps.
  std::map<std::string, Tensor> bad = plain->StateDict();
  bad["0.exp_avg"] = Zeros({7, 4});
  EXPECT_THAT(zero.LoadStateDict(bad).message(), HasSubstr("0.exp_avg has shape [7, 4]"));
  bad = plain->StateDict();
  bad["2.step"] = Full({}, 9, DType::kI64);
  EXPECT_THAT(zero.LoadStateDict(bad).message(),
              HasSubstr("ZeRO-1 keeps one step for every parameter, but parameter 0 is at step 3 "
                        "and parameter 2 at 9"));
}

}  // namespace
}  // namespace ember::distributed
