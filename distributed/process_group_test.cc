// The collectives against hand-derived values, for whatever world runs the test: one
// process on its own, or every rank under mpirun (mpi_test.sh runs 2 and 3). Rank r
// contributes values built from r, so each result is a closed form in r and the size.

#include "distributed/process_group.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/tensor.h"

namespace ember::distributed {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// [r + 1, 2 (r + 1), ..., n (r + 1)] in `dtype`.
Tensor RankValues(int r, int64_t n, DType dtype) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i + 1) * (r + 1));
  return FromVector(v, {n}).To(dtype);
}

TEST(ProcessGroupTest, TheWorldKnowsItsSize) {
  ProcessGroup& world = World();
  EXPECT_GE(world.rank(), 0);
  EXPECT_LT(world.rank(), world.size());
  EXPECT_EQ(world.backend(), world.size() == 1 ? "single" : "mpi");
  world.Barrier();
}

TEST(ProcessGroupTest, AllReduceSumsAndAverages) {
  ProcessGroup& world = World();
  const int p = world.size();
  const double ranks_sum = p * (p + 1) / 2.0;  // sum over r of (r + 1)
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI32, DType::kI64}) {
    const Tensor t = RankValues(world.rank(), 5, dtype);
    world.AllReduce(t);
    const std::vector<double> got = t.To(DType::kF64).ToVector<double>();
    for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(got[i], (i + 1) * ranks_sum) << DTypeName(dtype);
  }
  const Tensor mean = RankValues(world.rank(), 3, DType::kF32);
  world.AllReduce(mean, ReduceOp::kMean);
  EXPECT_EQ(mean.ToVector<float>(),
            (std::vector<float>{float(ranks_sum / p), float(2 * ranks_sum / p),
                                float(3 * ranks_sum / p)}));
  EXPECT_DOUBLE_EQ(world.AllReduce(world.rank() + 0.5), p * p / 2.0);
  EXPECT_DOUBLE_EQ(world.AllReduce(2.0, ReduceOp::kMean), 2.0);
}

TEST(ProcessGroupTest, ReduceScatterGivesEachRankItsSlice) {
  ProcessGroup& world = World();
  const int p = world.size(), r = world.rank();
  const Tensor input = RankValues(r, 4 * p, DType::kF32);
  const Tensor output = Zeros({4});
  world.ReduceScatter(input, output, ReduceOp::kMean);
  const double mean_factor = (p + 1) / 2.0;  // mean over ranks of (r + 1)
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(output.at<float>({i}), (4 * r + i + 1) * mean_factor);
}

TEST(ProcessGroupTest, AllGatherConcatenatesInRankOrder) {
  ProcessGroup& world = World();
  const int p = world.size();
  for (DType dtype : {DType::kBF16, DType::kI64}) {
    const Tensor input = Full({3}, world.rank() * 10, dtype);
    const Tensor output = Zeros({p, 3}, dtype);
    world.AllGather(input, output);
    const std::vector<double> got = output.To(DType::kF64).ToVector<double>();
    for (int r = 0; r < p; ++r) {
      for (int i = 0; i < 3; ++i) EXPECT_EQ(got[r * 3 + i], r * 10) << DTypeName(dtype);
    }
  }
}

TEST(ProcessGroupTest, AllGatherInPlaceFromThisRanksSlice) {
  ProcessGroup& world = World();
  const int p = world.size(), r = world.rank();
  const Tensor output = Full({p * 2}, -1.0, DType::kF32);
  const Tensor own = output.Narrow(0, 2 * r, 2);
  own.Fill(r + 0.5);
  world.AllGather(own, output);
  for (int k = 0; k < p; ++k) EXPECT_EQ(output.at<float>({2 * k + 1}), k + 0.5f);
}

TEST(ProcessGroupTest, BroadcastCopiesTheRootsTensor) {
  ProcessGroup& world = World();
  const int root = world.size() - 1;
  const Tensor t = Full({2, 2}, world.rank() == root ? 7.5 : -1.0, DType::kF16);
  world.Broadcast(t, root);
  EXPECT_EQ(t.To(DType::kF32).ToVector<float>(), (std::vector<float>{7.5f, 7.5f, 7.5f, 7.5f}));
}

TEST(ProcessGroupTest, AsyncCollectivesCompleteInOrder) {
  ProcessGroup& world = World();
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Work>> works;
  for (int k = 0; k < 8; ++k) {
    tensors.push_back(Full({1000}, k + world.rank(), DType::kF32));
    works.push_back(world.AllReduceAsync(tensors.back(), ReduceOp::kMean));
  }
  for (int k = 7; k >= 0; --k) works[k]->Wait();  // any order of waiting
  for (int k = 0; k < 8; ++k) {
    EXPECT_FLOAT_EQ(tensors[k].at<float>({999}), k + (world.size() - 1) / 2.0f);
    EXPECT_TRUE(works[k]->done());
  }
}

TEST(ProcessGroupTest, BadArgumentsAreErrorsNamingThem) {
  ProcessGroup& world = World();
  const int p = world.size();
  EXPECT_THAT([&] { world.ReduceScatter(Zeros({3 * p + 1}), Zeros({3})); },
              ThrowsMessage<Error>(HasSubstr(absl::StrCat(
                  "the input has ", 3 * p + 1, " elements, which must be the world size ", p))));
  EXPECT_THAT([&] { world.AllGather(Zeros({2}), Zeros({2 * p}, DType::kF64)); },
              ThrowsMessage<Error>(HasSubstr("all-gather: the input is f32, the output f64")));
  EXPECT_THAT(
      [&] {
        world.AllReduce(Zeros({4, 4}).Transpose(0, 1));
      },
      ThrowsMessage<Error>(HasSubstr("all-reduce: tensors must be contiguous")));
  EXPECT_THAT([&] { world.AllReduce(Zeros({4}, DType::kI64), ReduceOp::kMean); },
              ThrowsMessage<Error>(HasSubstr("a mean needs a floating dtype, not i64")));
  EXPECT_THAT(
      [&] { world.Broadcast(Zeros({4}), p); },
      ThrowsMessage<Error>(HasSubstr(absl::StrCat("broadcast: root ", p, " is not a rank"))));
  if (p > 1) {  // MPI sums the dtypes MPI has; one process sums nothing
    EXPECT_THAT([&] { world.AllReduce(Zeros({4}, DType::kBF16)); },
                ThrowsMessage<Error>(
                    HasSubstr("MPI reductions take f32, f64, i32 or i64 tensors, not bf16")));
  }
}

}  // namespace
}  // namespace ember::distributed
