#include "kernels/cpu/internal/strided.h"

#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace ember::kernels::cpu::internal {
namespace {

TEST(ForEachRowTest, VisitsEveryElementOfAnyRowRange) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    Shape shape(std::uniform_int_distribution<int>(0, 4)(rng));
    for (int64_t& s : shape) s = std::uniform_int_distribution<int>(1, 4)(rng);
    // Operand 0: a transposed-ish layout; operand 1: broadcast in a random dim.
    Strides a(shape.size()), b(shape.size());
    int64_t stride = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      a[d] = stride;
      stride *= shape[d];
    }
    b = ContiguousStrides(shape);
    if (!shape.empty()) b[std::uniform_int_distribution<size_t>(0, shape.size() - 1)(rng)] = 0;
    const auto loop = Coalesce<2>(shape, {IntSpan(a), IntSpan(b)});
    std::vector<std::pair<int64_t, int64_t>> expected, seen;
    for (NdIndexIterator it(shape); !it.done(); it.Next()) {
      expected.push_back({FlatIndex(it.index(), a), FlatIndex(it.index(), b)});
    }
    // Visit the rows in two ranges, as two threads would.
    const int64_t split = std::uniform_int_distribution<int64_t>(0, loop.rows())(rng);
    for (auto [lo, hi] : {std::pair<int64_t, int64_t>{0, split}, {split, loop.rows()}}) {
      ForEachRow(loop, lo, hi, [&](const auto& offset, int64_t n, const auto& step) {
        for (int64_t i = 0; i < n; ++i)
          seen.push_back({offset[0] + i * step[0], offset[1] + i * step[1]});
      });
    }
    ASSERT_EQ(seen, expected) << ShapeToString(shape);
  }
}

}  // namespace
}  // namespace ember::kernels::cpu::internal
