// Megatron's split against the whole layer: an MLP y = W2 gelu(W1 x) with W1's rows and
// W2's columns split over the ranks (ToTensorParallel before, FromTensorParallel after)
// gives every rank the whole output, the whole input gradient, and the slices of the
// whole weights' gradients. Runs as a world of one (both functions the identity), and
// under mpirun on 2 and 3 ranks (mpi_test.sh).

#include "distributed/tensor_parallel.h"

#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/random.h"

namespace ember::distributed {
namespace {

namespace ag = autograd;

void ExpectNear(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const std::vector<float> g = got.ToVector<float>(), w = want.ToVector<float>();
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-6 + 1e-5 * std::abs(w[i])) << what << "[" << i << "]";
}

TEST(TensorParallelTest, SplitMlpEqualsTheWholeOne) {
  ProcessGroup& world = World();
  const int n = world.size(), r = world.rank();
  const int64_t hidden = 6 * n;  // divides over any world
  Generator gen(9);
  const Tensor x = Randn({3, 5}, gen), w1 = Randn({hidden, 5}, gen), w2 = Randn({4, hidden}, gen);
  const Tensor g = Randn({3, 4}, gen);  // the output's gradient
  auto Leaf = [](const Tensor& t) { return ag::SetRequiresGrad(t.Contiguous().Clone()); };

  const Tensor xw = Leaf(x), w1w = Leaf(w1), w2w = Leaf(w2);
  const Tensor whole = ag::Linear(ag::GeluTanh(ag::Linear(xw, w1w, Tensor())), w2w, Tensor());
  ag::Backward(whole, g);

  const int64_t share = hidden / n;
  const Tensor xs = Leaf(x), w1s = Leaf(w1.Narrow(0, r * share, share)),
               w2s = Leaf(w2.Narrow(1, r * share, share));
  const Tensor in = ToTensorParallel(xs, world);
  const Tensor split = FromTensorParallel(
      ag::Linear(ag::GeluTanh(ag::Linear(in, w1s, Tensor())), w2s, Tensor()), world);
  ag::Backward(split, g);

  ExpectNear(ag::Detach(split), ag::Detach(whole), "output");
  ExpectNear(ag::Grad(xs), ag::Grad(xw), "input gradient");
  ExpectNear(ag::Grad(w1s), ag::Grad(w1w).Narrow(0, r * share, share).Contiguous(), "W1 rows");
  ExpectNear(ag::Grad(w2s), ag::Grad(w2w).Narrow(1, r * share, share).Contiguous(), "W2 columns");
}

// Autocast's bf16 activations: the sum over ranks is taken in f32 and rounded once.
TEST(TensorParallelTest, Bf16SumsInF32) {
  ProcessGroup& world = World();
  const Tensor x = Full({4}, 1.5, DType::kBF16);
  const Tensor sum = FromTensorParallel(x, world);
  EXPECT_EQ(sum.dtype(), DType::kBF16);
  EXPECT_FLOAT_EQ(sum.To(DType::kF32).ToVector<float>()[0], static_cast<float>(world.size() * 1.5));
}

}  // namespace
}  // namespace ember::distributed
