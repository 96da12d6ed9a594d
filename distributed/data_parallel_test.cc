// Data-parallel gradients against one process's: every rank also computes the whole
// batch's gradient on its own (the reference), then its rows' gradient through the
// averager, which must equal it. Runs as a world of one, and under mpirun (mpi_test.sh).

#include "distributed/data_parallel.h"

#include <vector>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::distributed {
namespace {

namespace ag = autograd;

// A two-layer perceptron's parameters (and one that the loss never uses), the same on
// every rank.
std::vector<Tensor> Parameters() {
  Generator gen(7);
  std::vector<Tensor> params = {Randn({8, 3}, gen), Randn({8}, gen), Randn({2, 8}, gen),
                                Randn({5}, gen)};
  for (const Tensor& p : params) ag::SetRequiresGrad(p);
  return params;
}

// Mean over rows of |relu(x W1^T + b1) W2^T - y|^2.
Tensor Loss(const std::vector<Tensor>& p, const Tensor& x, const Tensor& y) {
  const Tensor h = ag::Relu(ag::Linear(x, p[0], p[1]));
  return ag::Mean(ag::Sum(ag::Square(ag::Sub(ag::Linear(h, p[2], Tensor()), y)), {1}));
}

struct Batch {
  Tensor x, y;
};
// The global batch: 4 rows per rank.
Batch GlobalBatch(int world) {
  Generator gen(11);
  return {Randn({4 * world, 3}, gen), Randn({4 * world, 2}, gen)};
}

void ExpectNear(const Tensor& got, const Tensor& want, const char* what) {
  ASSERT_TRUE(got.defined()) << what;
  const std::vector<float> g = got.ToVector<float>(), w = want.ToVector<float>();
  ASSERT_EQ(g.size(), w.size()) << what;
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-6 + 1e-5 * std::abs(w[i])) << what << "[" << i << "]";
}

TEST(GradientAveragerTest, RanksOfBatchBEqualOneProcessOfBatchNB) {
  ProcessGroup& world = World();
  const int n = world.size(), r = world.rank();
  const Batch batch = GlobalBatch(n);
  const std::vector<Tensor> reference = Parameters();
  ag::Backward(Loss(reference, batch.x, batch.y));

  const std::vector<Tensor> params = Parameters();
  // Small buckets: one parameter each, so that several are in flight during backward.
  GradientAverager averager(world, params, /*bucket_bytes=*/16);
  EXPECT_EQ(averager.stats().buckets, 4);
  for (int step = 0; step < 2; ++step) {  // the second step reuses the buckets
    for (const Tensor& p : params) ag::ZeroGrad(p);
    averager.Arm();
    ag::Backward(Loss(params, batch.x.Narrow(0, 4 * r, 4), batch.y.Narrow(0, 4 * r, 4)));
    averager.Finish();
    for (int i = 0; i < 3; ++i) ExpectNear(ag::Grad(params[i]), ag::Grad(reference[i]), "gradient");
    // The unused parameter: zeros from every rank.
    ExpectNear(ag::Grad(params[3]), Zeros({5}), "unused parameter");
  }
  EXPECT_EQ(averager.stats().bytes, (24 + 8 + 16 + 5) * 4);
}

TEST(GradientAveragerTest, MicroBatchesAccumulateLocallyAndAverageOnce) {
  ProcessGroup& world = World();
  const int n = world.size(), r = world.rank();
  const Batch batch = GlobalBatch(2 * n);  // two micro-batches of 4 rows per rank
  const std::vector<Tensor> reference = Parameters();
  ag::Backward(Loss(reference, batch.x, batch.y));

  const std::vector<Tensor> params = Parameters();
  GradientAverager averager(world, params);  // one bucket
  EXPECT_EQ(averager.stats().buckets, 1);
  // Global micro-batch m is rows [4 n m, 4 n (m + 1)); this rank's are 4 of them.
  for (int m = 0; m < 2; ++m) {
    if (m == 1) averager.Arm();
    const int64_t row = 4 * (n * m + r);
    ag::Backward(ag::Div(Loss(params, batch.x.Narrow(0, row, 4), batch.y.Narrow(0, row, 4)), 2.0));
  }
  averager.Finish();
  for (int i = 0; i < 3; ++i) ExpectNear(ag::Grad(params[i]), ag::Grad(reference[i]), "gradient");
  EXPECT_GE(averager.stats().comm_seconds, 0);
}

TEST(GradientAveragerTest, MixedParametersAreRefused) {
  const std::vector<Tensor> params = {ag::SetRequiresGrad(Zeros({2})),
                                      ag::SetRequiresGrad(Zeros({2}, DType::kF64))};
  EXPECT_THROW(GradientAverager(World(), params), Error);
}

}  // namespace
}  // namespace ember::distributed
