#include "kernels/embedding.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"

namespace ember::kernels::cpu {
namespace {

TEST(EmbeddingTest, GathersRows) {
  const std::vector<float> weight = {0, 1, 10, 11, 20, 21};  // [3, 2]
  const std::vector<int64_t> ids = {2, 0, 2};
  std::vector<float> out(6);
  EmbeddingForward(DType::kF32, 3, 2, weight.data(), ids.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{20, 21, 0, 1, 20, 21}));
  const std::vector<uint16_t> half = {1, 2, 3, 4};  // any dtype: bf16 bits
  std::vector<uint16_t> half_out(2);
  const int64_t one = 1;
  EmbeddingForward(DType::kBF16, 1, 2, half.data(), &one, half_out.data());
  EXPECT_EQ(half_out, (std::vector<uint16_t>{3, 4}));
}

TEST(EmbeddingTest, BackwardScatterAddsRepeatedIds) {
  const std::vector<int64_t> ids = {2, 0, 2, 2};
  const std::vector<double> dout = {1, 2, 3, 4, 5, 6, 7, 8};  // [4, 2]
  std::vector<double> dweight(6, 0.5);                        // accumulated into
  EmbeddingBackward(DType::kF64, 4, 2, ids.data(), dout.data(), dweight.data());
  EXPECT_EQ(dweight, (std::vector<double>{3.5, 4.5, 0.5, 0.5, 13.5, 16.5}));
}

TEST(EmbeddingTest, BackwardDoesNotDependOnTheThreadCount) {
  const int64_t n = 512, dim = 768, vocab = 50;
  std::mt19937 rng(5);
  std::vector<int64_t> ids(n);
  for (int64_t& id : ids) id = rng() % vocab;
  std::vector<float> dout(n * dim);
  for (float& v : dout) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::vector<float> one(vocab * dim, 0), three(vocab * dim, 0);
  const int threads = NumThreads();
  SetNumThreads(1);
  EmbeddingBackward(DType::kF32, n, dim, ids.data(), dout.data(), one.data());
  SetNumThreads(3);
  EmbeddingBackward(DType::kF32, n, dim, ids.data(), dout.data(), three.data());
  SetNumThreads(threads);
  EXPECT_EQ(one, three);
  EXPECT_THROW(EmbeddingBackward(DType::kI32, 1, 1, ids.data(), dout.data(), one.data()), Error);
}

}  // namespace
}  // namespace ember::kernels::cpu
