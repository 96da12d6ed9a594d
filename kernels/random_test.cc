// The uniform fill: one table of cases on the CPU and on CUDA
// (kernels/cuda/internal/backends.h), against Philox's stream read one word after
// another (the way tensor/random.h's Generator reads it), for every floating dtype,
// from offsets inside a block, and across the 2^32-block boundary of the counter's
// low word. The CUDA half skips, saying why, without a GPU.

#include "kernels/random.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/philox.h"

namespace ember::kernels {
namespace {

EMBER_BACKEND_TEST_SUITE(RandomTest);

// The stream of `seed` from word `offset`, read sequentially, block by block.
class Stream {
 public:
  Stream(uint64_t seed, uint64_t offset) : seed_(seed), next_(offset) {}
  uint32_t Next() {
    const uint64_t block = next_ / 4;
    const PhiloxBlock words =
        Philox({{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}},
               static_cast<uint32_t>(seed_), static_cast<uint32_t>(seed_ >> 32));
    return words.word[next_++ % 4];
  }

 private:
  uint64_t seed_, next_;
};

TYPED_TEST(RandomTest, UniformFillIsTheStreamReadInOrder) {
  using B = TypeParam;
  const int64_t n = 1001;
  for (uint64_t seed : {uint64_t{0}, uint64_t{2026}, ~uint64_t{0} - 12345}) {
    for (uint64_t offset : {uint64_t{0}, uint64_t{3}, uint64_t{5}, (uint64_t{1} << 34) - 7}) {
      for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
        const int bits = dtype == DType::kF64   ? 53
                         : dtype == DType::kF32 ? 24
                         : dtype == DType::kF16 ? 11
                                                : 8;
        Stream stream(seed, offset);
        std::vector<unsigned char> expected(n * ItemSize(dtype));
        VisitDType(dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          for (int64_t i = 0; i < n; ++i) {
            uint64_t word = stream.Next();
            if (bits > 32) word = (word << 32) | stream.Next();  // high word first
            const double u = static_cast<double>(word >> ((bits > 32 ? 64 : 32) - bits)) /
                             static_cast<double>(uint64_t{1} << bits);
            const T t = Convert<T>(u);
            std::memcpy(&expected[i * sizeof(T)], &t, sizeof(T));
          }
        });
        const typename B::Buffer out(expected.size());
        B::UniformFill(dtype, n, seed, offset, out.data());
        EXPECT_EQ(out.template ToHost<unsigned char>(), expected)
            << DTypeName(dtype) << " seed " << seed << " offset " << offset;
      }
    }
  }
}

TYPED_TEST(RandomTest, IntegerDTypesAreRefused) {
  using B = TypeParam;
  EXPECT_THROW(B::UniformFill(DType::kI64, 4, 0, 0, nullptr), Error);
}

}  // namespace
}  // namespace ember::kernels
