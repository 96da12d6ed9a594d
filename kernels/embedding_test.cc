// The embedding's lookup and scatter-add: one table of cases on both backends
// (kernels/cuda/internal/backends.h), against hand-derived values and the plain loops;
// the CUDA half skips, saying why, without a GPU.

#include "kernels/embedding.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

EMBER_BACKEND_TEST_SUITE(EmbeddingTest);

TYPED_TEST(EmbeddingTest, GathersRowsOfAnyDType) {
  using B = TypeParam;
  const std::vector<float> weight = {0, 1, 10, 11, 20, 21};  // [3, 2]
  const std::vector<int64_t> ids = {2, 0, 2};
  const typename B::Buffer gweight(weight), gids(ids), out(6 * sizeof(float));
  B::EmbeddingForward(DType::kF32, 3, 2, 3, gweight.data(), gids.template as<int64_t>(),
                      out.data());
  EXPECT_EQ(out.template ToHost<float>(), (std::vector<float>{20, 21, 0, 1, 20, 21}));
  const std::vector<uint16_t> half = {1, 2, 3, 4};  // bf16 bits: copied as they are
  const std::vector<int64_t> one = {1};
  const typename B::Buffer ghalf(half), gone(one), half_out(2 * sizeof(uint16_t));
  B::EmbeddingForward(DType::kBF16, 1, 2, 2, ghalf.data(), gone.template as<int64_t>(),
                      half_out.data());
  EXPECT_EQ(half_out.template ToHost<uint16_t>(), (std::vector<uint16_t>{3, 4}));
}

TYPED_TEST(EmbeddingTest, BackwardScatterAddsRepeatedIdsInOrder) {
  using B = TypeParam;
  {  // By hand: dweight starts at 0.5 and is accumulated into.
    const std::vector<int64_t> ids = {2, 0, 2, 2};
    const std::vector<double> dout = {1, 2, 3, 4, 5, 6, 7, 8};  // [4, 2]
    const typename B::Buffer gids(ids), gdout(dout), dweight(std::vector<double>(6, 0.5));
    B::EmbeddingBackward(DType::kF64, 4, 2, 3, gids.template as<int64_t>(), gdout.data(),
                         dweight.data());
    EXPECT_EQ(dweight.template ToHost<double>(),
              (std::vector<double>{3.5, 4.5, 0.5, 0.5, 13.5, 16.5}));
  }
  const int64_t vocab = 50, dim = 300, n = 400;
  std::mt19937 rng(1);
  const std::vector<double> weight = RandomVector<double>(vocab * dim, -1, 1, rng);
  const std::vector<double> dout = RandomVector<double>(n * dim, -1, 1, rng);
  std::vector<int64_t> ids(n);
  for (int64_t& id : ids) id = rng() % 7 == 0 ? 3 : rng() % vocab;  // id 3 repeats often
  std::vector<double> dweight_init(vocab * dim, 0.5);
  const typename B::Buffer dw(weight), dids(ids), ddout(dout), out(n * dim * sizeof(double)),
      dweight(dweight_init);
  B::EmbeddingForward(DType::kF64, n, dim, vocab, dw.data(), dids.template as<int64_t>(),
                      out.data());
  B::EmbeddingBackward(DType::kF64, n, dim, vocab, dids.template as<int64_t>(), ddout.data(),
                       dweight.data());
  const std::vector<double> got = out.template ToHost<double>(),
                            got_dw = dweight.template ToHost<double>();
  std::vector<double> want_dw = dweight_init;  // accumulated into, in the order of i
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < dim; ++j) {
      ASSERT_EQ(got[i * dim + j], weight[ids[i] * dim + j]) << i << "," << j;
      want_dw[ids[i] * dim + j] += dout[i * dim + j];
    }
  }
  EXPECT_EQ(got_dw, want_dw);
}

// An id outside [0, vocab) reads and writes nothing of the table: its row is NaN (in
// the weight's dtype, as Convert stores NaN: 0 for integers) and its gradient is dropped.
TYPED_TEST(EmbeddingTest, IdsOutOfRangeGiveNaNRowsAndAddNothing) {
  using B = TypeParam;
  const std::vector<float> weight = {0, 1, 10, 11, 20, 21, 30, 31};  // [4, 2], vocab 3 of them
  const std::vector<int64_t> ids = {1, 3, -1, 2};
  const typename B::Buffer gweight(weight), gids(ids), out(8 * sizeof(float));
  B::EmbeddingForward(DType::kF32, 4, 2, 3, gweight.data(), gids.template as<int64_t>(),
                      out.data());
  const std::vector<float> got = out.template ToHost<float>();
  EXPECT_EQ(got[0], 10);
  EXPECT_EQ(got[1], 11);
  for (int j = 2; j < 6; ++j) EXPECT_TRUE(std::isnan(got[j])) << j;
  EXPECT_EQ(got[6], 20);
  EXPECT_EQ(got[7], 21);
  const std::vector<int32_t> iweight = {5, 6, 7, 8};  // [2, 2] i32
  const typename B::Buffer giweight(iweight), iout(4 * sizeof(int32_t));
  B::EmbeddingForward(DType::kI32, 2, 2, 2, giweight.data(), gids.template as<int64_t>(),
                      iout.data());
  EXPECT_EQ(iout.template ToHost<int32_t>(), (std::vector<int32_t>{7, 8, 0, 0}));
  const std::vector<double> dout = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<int64_t> back_ids = {3, 0, -5, 0};
  const typename B::Buffer gback(back_ids), gdout(dout), dweight(std::vector<double>(8, 0));
  B::EmbeddingBackward(DType::kF64, 4, 2, 3, gback.template as<int64_t>(), gdout.data(),
                       dweight.data());
  EXPECT_EQ(dweight.template ToHost<double>(), (std::vector<double>{10, 12, 0, 0, 0, 0, 0, 0}));
}

TEST(EmbeddingCpuTest, BackwardDoesNotDependOnTheThreadCount) {
  const int64_t n = 512, dim = 768, vocab = 50;
  std::mt19937 rng(5);
  std::vector<int64_t> ids(n);
  for (int64_t& id : ids) id = rng() % vocab;
  std::vector<float> dout(n * dim);
  for (float& v : dout) v = std::uniform_real_distribution<float>(-1, 1)(rng);
  std::vector<float> one(vocab * dim, 0), three(vocab * dim, 0);
  const int threads = cpu::NumThreads();
  cpu::SetNumThreads(1);
  cpu::EmbeddingBackward(DType::kF32, n, dim, vocab, ids.data(), dout.data(), one.data());
  cpu::SetNumThreads(3);
  cpu::EmbeddingBackward(DType::kF32, n, dim, vocab, ids.data(), dout.data(), three.data());
  cpu::SetNumThreads(threads);
  EXPECT_EQ(one, three);
  EXPECT_THROW(
      cpu::EmbeddingBackward(DType::kI32, 1, 1, vocab, ids.data(), dout.data(), one.data()), Error);
}

}  // namespace
}  // namespace ember::kernels
