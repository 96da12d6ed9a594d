#include "core/shape.h"

#include <string>
#include <vector>

#include "base/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember {
namespace {

using ::testing::ThrowsMessage;

TEST(ShapeTest, NumElementsAndStrings) {
  EXPECT_EQ(NumElements({}), 1);
  EXPECT_EQ(NumElements({2, 3, 4}), 24);
  EXPECT_EQ(NumElements({2, 0, 4}), 0);
  EXPECT_EQ(ShapeToString({2, 3}), "[2, 3]");
  EXPECT_EQ(ShapeToString({}), "[]");
  EXPECT_THAT(
      [] {
        NumElements({2, -1}, "zeros");
      },
      ThrowsMessage<Error>("zeros: negative size -1 in shape [2, -1]"));
  EXPECT_THAT(
      [] {
        NumElements({1LL << 40, 1LL << 40});
      },
      ThrowsMessage<Error>(
          "shape: shape [1099511627776, 1099511627776] has more elements than int64 can count"));
}

TEST(ShapeTest, ContiguousStridesAndContiguity) {
  EXPECT_EQ(ContiguousStrides({2, 3, 4}), (Strides{12, 4, 1}));
  EXPECT_EQ(ContiguousStrides({}), Strides{});
  EXPECT_EQ(ContiguousStrides({2, 0, 3}), (Strides{3, 3, 1}));
  EXPECT_TRUE(IsContiguous({2, 3, 4}, {12, 4, 1}));
  EXPECT_FALSE(IsContiguous({2, 3}, {1, 2}));        // transposed
  EXPECT_TRUE(IsContiguous({2, 1, 3}, {3, 99, 1}));  // size-1 strides do not matter
  EXPECT_TRUE(IsContiguous({2, 0, 3}, {7, 7, 7}));   // empty
  EXPECT_FALSE(IsContiguous({2, 3}, {0, 1}));        // broadcast
  EXPECT_FALSE(IsContiguous({2, 3}, {4, 1}));        // padded rows
}

TEST(ShapeTest, SpanElements) {
  EXPECT_EQ(SpanElements({2, 3}, {3, 1}), 6);
  EXPECT_EQ(SpanElements({2, 3}, {1, 2}), 6);   // transposed
  EXPECT_EQ(SpanElements({2, 3}, {8, 2}), 13);  // strided rows: 1 + 8 + 4
  EXPECT_EQ(SpanElements({4, 3}, {0, 1}), 3);   // broadcast
  EXPECT_EQ(SpanElements({}, {}), 1);
  EXPECT_EQ(SpanElements({5, 0}, {1, 1}), 0);
}

TEST(ShapeTest, FlatIndexAndNormalizeDim) {
  EXPECT_EQ(FlatIndex({1, 2, 3}, {12, 4, 1}), 23);
  EXPECT_EQ(FlatIndex({1, 2}, {0, 5}), 10);
  EXPECT_EQ(NormalizeDim(-1, 3, "sum"), 2);
  EXPECT_EQ(NormalizeDim(0, 0, "sum"), 0);  // a scalar accepts 0 and -1, as PyTorch
  EXPECT_EQ(NormalizeDim(-1, 0, "sum"), 0);
  EXPECT_THAT(
      [] { NormalizeDim(3, 3, "sum"); },
      ThrowsMessage<Error>("sum: dimension 3 is out of range for a 3-d tensor (expected -3 to 2)"));
  EXPECT_THAT([] { NormalizeDim(-4, 3, "sum"); },
              ThrowsMessage<Error>(
                  "sum: dimension -4 is out of range for a 3-d tensor (expected -3 to 2)"));
}

TEST(ShapeTest, BroadcastFollowsNumpyRules) {
  EXPECT_EQ(BroadcastShapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(BroadcastShapes({}, {5}), (Shape{5}));
  EXPECT_EQ(BroadcastShapes({0, 1}, {1, 3}), (Shape{0, 3}));
  EXPECT_EQ(BroadcastShapes({1}, {0}), (Shape{0}));
  EXPECT_EQ(BroadcastShapes(std::vector<Shape>{{8, 1, 6, 1}, {7, 1, 5}, {1, 1}}),
            (Shape{8, 7, 6, 5}));
  EXPECT_THAT(
      [] {
        BroadcastShapes({2, 3}, {4}, "add");
      },
      ThrowsMessage<Error>(
          "add: shapes [2, 3] and [4] cannot be broadcast (dimension -1: 3 vs 4)"));
  EXPECT_THAT(
      [] {
        BroadcastShapes(std::vector<Shape>{{2, 3}, {1}, {5, 1}}, "where");
      },
      ThrowsMessage<Error>(
          "where: shapes [2, 3], [1] and [5, 1] cannot be broadcast (dimension -2: 2 vs 5)"));
}

TEST(ShapeTest, BroadcastMatchesABruteForceRule) {
  // For every pair of shapes with sizes in {0, 1, 2, 3} and up to 3 dims: broadcast
  // succeeds exactly when each aligned pair is equal or has a 1, and the result
  // takes the non-1 size.
  std::vector<Shape> shapes = {{}};
  for (int ndim = 1; ndim <= 3; ++ndim) {
    for (int code = 0; code < (1 << (2 * ndim)); ++code) {
      Shape s;
      for (int d = 0; d < ndim; ++d) s.push_back((code >> (2 * d)) & 3);
      shapes.push_back(s);
    }
  }
  for (const Shape& a : shapes) {
    for (const Shape& b : shapes) {
      bool ok = true;
      Shape expected(std::max(a.size(), b.size()));
      for (size_t i = 0; i < expected.size(); ++i) {
        const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
        const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
        ok = ok && (x == y || x == 1 || y == 1);
        expected[expected.size() - 1 - i] = x == 1 ? y : x;
      }
      if (ok) {
        EXPECT_EQ(BroadcastShapes(a, b), expected);
      } else {
        EXPECT_THROW(BroadcastShapes(a, b), Error);
      }
    }
  }
}

TEST(NdIndexIteratorTest, VisitsRowMajor) {
  std::vector<Shape> seen;
  for (NdIndexIterator it({2, 3}); !it.done(); it.Next()) seen.push_back(it.index());
  EXPECT_EQ(seen, (std::vector<Shape>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}));
  int count = 0;
  for (NdIndexIterator it({}); !it.done(); it.Next()) ++count;
  EXPECT_EQ(count, 1);  // a scalar has one (empty) index
  for (NdIndexIterator it({3, 0, 2}); !it.done(); it.Next()) ++count;
  EXPECT_EQ(count, 1);  // an empty shape has none
  int64_t visited = 0;
  for (NdIndexIterator it({4, 1, 5, 2}); !it.done(); it.Next()) {
    EXPECT_EQ(FlatIndex(it.index(), ContiguousStrides({4, 1, 5, 2})), visited++);
  }
  EXPECT_EQ(visited, 40);
}

}  // namespace
}  // namespace ember
