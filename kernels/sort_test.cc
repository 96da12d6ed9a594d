// Sorting rows: one table of cases on both backends (kernels/cuda/internal/backends.h),
// against hand-derived orders and an insertion sort; the CUDA half skips, saying why,
// without a GPU.

#include "kernels/sort.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/testing.h"

namespace ember::kernels {
namespace {

EMBER_BACKEND_TEST_SUITE(SortTest);

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TYPED_TEST(SortTest, NaNLastZerosEqualTiesInOrder) {
  using B = TypeParam;
  const std::vector<double> x = {3, kNaN, -0.0, 1, 0.0, 1, -kInf};
  const typename B::Buffer gx(x), values(7 * sizeof(double)), indices(7 * sizeof(int64_t));
  B::SortRows(DType::kF64, 1, 7, false, gx.data(), values.data(), indices.template as<int64_t>());
  EXPECT_EQ(indices.template ToHost<int64_t>(), (std::vector<int64_t>{6, 2, 4, 3, 5, 0, 1}));
  std::vector<double> got = values.template ToHost<double>();
  EXPECT_EQ(got[0], -kInf);
  EXPECT_TRUE(std::signbit(got[1]) && !std::signbit(got[2]));  // -0 and +0 kept as they were
  EXPECT_TRUE(std::isnan(got[6]));
  B::SortRows(DType::kF64, 1, 7, true, gx.data(), values.data(), indices.template as<int64_t>());
  EXPECT_EQ(indices.template ToHost<int64_t>(), (std::vector<int64_t>{1, 0, 3, 5, 2, 4, 6}));
  got = values.template ToHost<double>();
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], 3);
  // int64 beyond 2^53, and negative.
  const std::vector<int64_t> i = {(int64_t{1} << 60) + 1, -5, int64_t{1} << 60,
                                  std::numeric_limits<int64_t>::min()};
  const typename B::Buffer gi(i), ivalues(4 * sizeof(int64_t)), iindices(4 * sizeof(int64_t));
  B::SortRows(DType::kI64, 1, 4, false, gi.data(), ivalues.data(), iindices.template as<int64_t>());
  EXPECT_EQ(iindices.template ToHost<int64_t>(), (std::vector<int64_t>{3, 1, 2, 0}));
  EXPECT_EQ(ivalues.template ToHost<int64_t>()[3], (int64_t{1} << 60) + 1);
}

// Ascending order: NaN above every number.
template <typename T>
bool Less(T a, T b) {
  if (std::isnan(static_cast<double>(a))) return false;
  if (std::isnan(static_cast<double>(b))) return true;
  return a < b;
}

TYPED_TEST(SortTest, MatchesAnInsertionSort) {
  using B = TypeParam;
  const struct {
    int64_t rows, n;
  } cases[] = {{1, 1}, {3, 2}, {5, 37}, {2, 1000}, {1, 4000}, {64, 50}, {0, 5}, {3, 0}};
  std::mt19937 rng(11);
  auto check = [&](auto type) {
    using T = decltype(type);
    for (const auto& c : cases) {
      for (bool descending : {false, true}) {
        SCOPED_TRACE(std::string(DTypeName(DTypeOf<T>::value)) + " rows " + std::to_string(c.rows) +
                     " n " + std::to_string(c.n) + (descending ? " descending" : " ascending"));
        std::vector<T> x(c.rows * c.n);
        // Few distinct values, so that ties are common; some NaN.
        for (T& v : x) v = static_cast<T>(static_cast<int>(rng() % 23) - 11) / T(4);
        for (size_t k = 0; k < x.size(); k += 17) x[k] = std::numeric_limits<T>::quiet_NaN();
        const typename B::Buffer gx(x), values(x.size() * sizeof(T)),
            indices(x.size() * sizeof(int64_t));
        B::SortRows(DTypeOf<T>::value, c.rows, c.n, descending, gx.data(), values.data(),
                    indices.template as<int64_t>());
        const std::vector<T> got = values.template ToHost<T>();
        const std::vector<int64_t> got_indices = indices.template ToHost<int64_t>();
        for (int64_t r = 0; r < c.rows; ++r) {
          const T* row = x.data() + r * c.n;
          std::vector<int64_t> order;  // insertion sort, stable: a new entry goes after ties
          for (int64_t j = 0; j < c.n; ++j) {
            auto before = [&](int64_t a, int64_t b) {
              return descending ? Less(row[b], row[a]) : Less(row[a], row[b]);
            };
            size_t at = order.size();
            while (at > 0 && before(j, order[at - 1])) --at;
            order.insert(order.begin() + at, j);
          }
          for (int64_t j = 0; j < c.n; ++j) {
            ASSERT_EQ(got_indices[r * c.n + j], order[j]) << r << "," << j;
            const T want = row[order[j]];
            ASSERT_EQ(std::memcmp(&got[r * c.n + j], &want, sizeof(T)), 0) << r << "," << j;
          }
        }
      }
    }
  };
  check(float());
  check(double());
}

TEST(SortCpuTest, RefusesOtherDTypes) {
  const std::vector<int32_t> x = {1};
  std::vector<int32_t> values(1);
  int64_t index = 0;
  EXPECT_THROW(cpu::SortRows(DType::kI32, 1, 1, false, x.data(), values.data(), &index), Error);
}

}  // namespace
}  // namespace ember::kernels
