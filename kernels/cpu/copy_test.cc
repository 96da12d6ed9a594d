#include "kernels/copy.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"

namespace ember::kernels::cpu {
namespace {

// A random layout over a buffer: a random shape, then strides of a random
// permutation of a padded row-major layout, with some dimensions broadcast.
struct Layout {
  Shape shape;
  Strides strides;
  int64_t span = 0;  // elements the buffer needs
};

Layout RandomLayout(std::mt19937& rng, const Shape& shape, bool allow_broadcast) {
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const size_t n = shape.size();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  Layout layout{shape, Strides(n)};
  int64_t stride = uniform(1, 2);  // 2: every other element
  for (size_t i = n; i-- > 0;) {
    const size_t d = order[i];
    layout.strides[d] = allow_broadcast && uniform(0, 4) == 0 ? 0 : stride;
    stride *= shape[d] + uniform(0, 1);  // sometimes padded
  }
  layout.span = SpanElements(shape, layout.strides);
  return layout;
}

// A plain array (std::vector<bool> has no data()).
template <typename T>
std::unique_ptr<T[]> RandomValues(std::mt19937& rng, int64_t n) {
  std::unique_ptr<T[]> values(new T[n]);
  std::uniform_real_distribution<double> dist(-300.0, 300.0);
  for (int64_t i = 0; i < n; ++i) values[i] = Convert<T>(dist(rng));
  return values;
}

template <typename S, typename D>
void CheckCopies(std::mt19937& rng) {
  for (int trial = 0; trial < 200; ++trial) {
    Shape shape(std::uniform_int_distribution<int>(0, 4)(rng));
    for (int64_t& s : shape)
      s = std::uniform_int_distribution<int>(0, 9)(rng) == 0
              ? 0
              : std::uniform_int_distribution<int>(1, 7)(rng);
    const Layout in = RandomLayout(rng, shape, /*allow_broadcast=*/true);
    const Layout out = RandomLayout(rng, shape, /*allow_broadcast=*/false);
    const std::unique_ptr<S[]> src = RandomValues<S>(rng, in.span);
    std::unique_ptr<D[]> dst = RandomValues<D>(rng, out.span), expected(new D[out.span]);
    std::copy(dst.get(), dst.get() + out.span, expected.get());
    for (NdIndexIterator it(shape); !it.done(); it.Next()) {
      expected[FlatIndex(it.index(), out.strides)] =
          Convert<D>(src[FlatIndex(it.index(), in.strides)]);
    }
    CopyCast(shape, kDTypeOf<S>, src.get(), in.strides, kDTypeOf<D>, dst.get(), out.strides);
    ASSERT_EQ(0, std::memcmp(dst.get(), expected.get(), out.span * sizeof(D)))
        << DTypeName(kDTypeOf<S>) << " -> " << DTypeName(kDTypeOf<D>) << " shape "
        << ShapeToString(shape) << " src strides " << ShapeToString(in.strides) << " dst strides "
        << ShapeToString(out.strides);
  }
}

TEST(CopyCastTest, EveryDTypePairOnRandomLayoutsMatchesElementwiseConvert) {
  std::mt19937 rng(7);
  for (DType s : kAllDTypes) {
    for (DType d : kAllDTypes) {
      VisitDType(s, [&](auto stag) {
        VisitDType(d, [&](auto dtag) {
          CheckCopies<typename decltype(stag)::type, typename decltype(dtag)::type>(rng);
        });
      });
    }
  }
}

TEST(CopyCastTest, ContiguousSameDTypeIsAByteCopy) {
  std::vector<float> src = {1.5f, -0.0f, 3e38f, 7.0f, 8.0f, 9.0f};
  std::vector<float> dst(6);
  const Shape shape = {2, 3};
  CopyCast(shape, DType::kF32, src.data(), ContiguousStrides(shape), DType::kF32, dst.data(),
           ContiguousStrides(shape));
  EXPECT_EQ(0, std::memcmp(src.data(), dst.data(), sizeof(float) * 6));
}

// Copies big enough to be split across threads (the pool's grain is 32768 elements):
// by rows, within one merged row, from a broadcast row, into a strided view, with and
// without a conversion; on 3 threads so that chunks end mid-row and mid-buffer.
TEST(CopyCastTest, CopiesSplitAcrossThreadsMatchTheElementwiseCopy) {
  const int threads = NumThreads();
  SetNumThreads(3);
  std::mt19937 rng(11);
  const int64_t rows = 257, cols = 1031;
  const std::unique_ptr<float[]> src = RandomValues<float>(rng, rows * cols * 2);
  struct Case {
    const char* name;
    Shape shape;
    Strides src_strides, dst_strides;
  };
  const Case cases[] = {
      {"contiguous (one merged row)", {rows, cols}, {cols, 1}, {cols, 1}},
      {"every other source column", {rows, cols}, {2 * cols, 2}, {cols, 1}},
      {"a broadcast row (a bias)", {rows, cols}, {0, 1}, {cols, 1}},
      {"transposed", {cols, rows}, {1, cols}, {rows, 1}},
      {"into every other element", {rows * cols}, {1}, {2}},
  };
  for (const Case& c : cases) {
    const int64_t span = SpanElements(c.shape, c.dst_strides);
    std::vector<float> dst(span, -1.0f), expected(span, -1.0f);
    std::vector<double> converted(span, -1.0);
    for (NdIndexIterator it(c.shape); !it.done(); it.Next()) {
      const float v = src[FlatIndex(it.index(), c.src_strides)];
      expected[FlatIndex(it.index(), c.dst_strides)] = v;
      converted[FlatIndex(it.index(), c.dst_strides)] = v;
    }
    CopyCast(c.shape, DType::kF32, src.get(), c.src_strides, DType::kF32, dst.data(),
             c.dst_strides);
    EXPECT_EQ(dst, expected) << c.name;
    std::vector<double> wide(span, -1.0);
    CopyCast(c.shape, DType::kF32, src.get(), c.src_strides, DType::kF64, wide.data(),
             c.dst_strides);
    EXPECT_EQ(wide, converted) << c.name << ", to f64";
    std::vector<float> filled(span, -1.0f), filled_expected(span, -1.0f);
    for (NdIndexIterator it(c.shape); !it.done(); it.Next()) {
      filled_expected[FlatIndex(it.index(), c.dst_strides)] = 2.5f;
    }
    Fill(c.shape, DType::kF32, filled.data(), c.dst_strides, 2.5);
    EXPECT_EQ(filled, filled_expected) << c.name << ", filled";
  }
  SetNumThreads(threads);
}

TEST(FillTest, WritesOnlyTheViewsElements) {
  std::vector<int32_t> buffer(12, -1);
  // Shape [2, 2] with strides [6, 2]: elements 0, 2, 6, 8.
  Fill({2, 2}, DType::kI32, buffer.data(), {6, 2}, 7.9);
  EXPECT_EQ(buffer, (std::vector<int32_t>{7, -1, 7, -1, -1, -1, 7, -1, 7, -1, -1, -1}));
  std::vector<uint16_t> half(3);
  Fill({3}, DType::kBF16, half.data(), {1}, 1.0);
  EXPECT_EQ(half, (std::vector<uint16_t>{0x3f80, 0x3f80, 0x3f80}));
  Fill({}, DType::kBF16, half.data(), {}, 2.0);  // a scalar: one element
  EXPECT_EQ(half[0], 0x4000);
}

}  // namespace
}  // namespace ember::kernels::cpu
