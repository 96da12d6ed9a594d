// Strided copy with a cast, and fill: one table of cases on the CPU and on CUDA
// (kernels/cuda/internal/backends.h), against core/dtype.h's Convert applied element
// by element: every dtype pair on random layouts (permuted, padded, every other
// element, broadcast sources, empty and 0-d shapes) and on hand-picked ones (a
// transpose, whole 16-byte vectors along rows, rows too far apart for vectors), with
// values that round, saturate or are NaN when cast. The CUDA half skips, saying why,
// without a GPU; the host <-> device copies are kernels/cuda/memory_test.cc's.

#include "kernels/copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/internal/backends.h"

namespace ember::kernels {
namespace {

EMBER_BACKEND_TEST_SUITE(CopyTest);

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

template <typename B, typename S, typename D>
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
    // As bytes: std::vector<bool> has no data().
    const auto* src_bytes = reinterpret_cast<const unsigned char*>(src.get());
    const auto* dst_bytes = reinterpret_cast<const unsigned char*>(dst.get());
    const typename B::Buffer device_src(
        std::vector<unsigned char>(src_bytes, src_bytes + in.span * sizeof(S))),
        device_dst(std::vector<unsigned char>(dst_bytes, dst_bytes + out.span * sizeof(D)));
    B::CopyCast(shape, kDTypeOf<S>, device_src.data(), in.strides, kDTypeOf<D>, device_dst.data(),
                out.strides);
    const std::vector<unsigned char> got = device_dst.template ToHost<unsigned char>();
    const auto* want = reinterpret_cast<const unsigned char*>(expected.get());
    ASSERT_EQ(got, std::vector<unsigned char>(want, want + out.span * sizeof(D)))
        << DTypeName(kDTypeOf<S>) << " -> " << DTypeName(kDTypeOf<D>) << " shape "
        << ShapeToString(shape) << " src strides " << ShapeToString(in.strides) << " dst strides "
        << ShapeToString(out.strides);
  }
}

TYPED_TEST(CopyTest, CopyCastIsConvertOnEveryDTypePairAndRandomLayouts) {
  std::mt19937 rng(7);
  for (DType s : kAllDTypes) {
    for (DType d : kAllDTypes) {
      VisitDType(s, [&](auto stag) {
        VisitDType(d, [&](auto dtag) {
          CheckCopies<TypeParam, typename decltype(stag)::type, typename decltype(dtag)::type>(rng);
        });
      });
    }
  }
}

struct FixedLayout {
  Shape shape;
  Strides src_strides, dst_strides;
  int64_t src_span, dst_span;  // elements each buffer needs
};

const std::vector<FixedLayout> kLayouts = {
    {{1000}, {1}, {1}, 1000, 1000},               // contiguous
    {{3, 4}, {1, 3}, {4, 1}, 12, 12},             // transpose
    {{2, 1, 5}, {5, 7, 1}, {10, 99, 2}, 10, 20},  // size-1 dim, strided output
    {{}, {}, {}, 1, 1},                           // scalar
    {{4, 0}, {1, 1}, {1, 1}, 4, 4},               // empty
    {{7, 33}, {0, 1}, {33, 1}, 33, 231},          // a row broadcast
    {{2, 3, 4, 5}, {60, 1, 3, 12}, {60, 20, 5, 1}, 120, 120},
    // [B, heads, T, 16] heads of a [B, T, 2 * 3 * 16] projection, made contiguous and
    // back: whole vectors along rows, for every dtype's vector width (16 bytes)
    {{2, 3, 5, 16}, {480, 16, 96, 1}, {240, 80, 16, 1}, 960, 480},
    {{2, 3, 5, 16}, {240, 80, 16, 1}, {480, 16, 96, 1}, 480, 960},
    {{4, 8}, {9, 1}, {8, 1}, 36, 32},  // rows 9 apart: no vectors
};

// Bytes that hold every dtype's interesting values: random ones, plus floats that
// round, saturate or are NaN when cast, and f32 halfway between two bf16 (1 + 2^-8 rounds
// down to even, 1 + 3 2^-8 up).
std::vector<unsigned char> RandomBytes(int64_t n, DType dtype, std::mt19937& rng) {
  std::vector<unsigned char> bytes(n * ItemSize(dtype));
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::uniform_real_distribution<double> value(-70000, 70000);
    const double specials[] = {0.5,      -2.5,    1e10,      -1e10,      NAN,
                               INFINITY, 65519.0, 3.0000001, 1 + 0x1p-8, -(1 + 3 * 0x1p-8)};
    constexpr int64_t kSpecials = sizeof(specials) / sizeof(specials[0]);
    for (int64_t i = 0; i < n; ++i) {
      const double v = i < kSpecials ? specials[i] : (i % 3 ? value(rng) : value(rng) * 1e-6);
      const T t = Convert<T>(v);
      std::memcpy(&bytes[i * sizeof(T)], &t, sizeof(T));
    }
  });
  return bytes;
}

// dst with every element of the layout replaced by Convert<To>(src's).
std::vector<unsigned char> Expected(const FixedLayout& l, DType from,
                                    const std::vector<unsigned char>& src, DType to,
                                    std::vector<unsigned char> dst) {
  VisitDType(from, [&](auto from_tag) {
    using F = typename decltype(from_tag)::type;
    VisitDType(to, [&](auto to_tag) {
      using T = typename decltype(to_tag)::type;
      for (NdIndexIterator it(l.shape); !it.done(); it.Next()) {
        F f;
        std::memcpy(&f, &src[FlatIndex(it.index(), l.src_strides) * sizeof(F)], sizeof(F));
        const T t = Convert<T>(f);
        std::memcpy(&dst[FlatIndex(it.index(), l.dst_strides) * sizeof(T)], &t, sizeof(T));
      }
    });
  });
  return dst;
}

TYPED_TEST(CopyTest, CopyCastIsConvertOnEveryDTypePairAndHandPickedLayout) {
  using B = TypeParam;
  std::mt19937 rng(5);
  // On every SIMD target: contiguous f32 <-> bf16 runs in vectors.
  cuda::internal::ForEachPath<B>([&](const std::string& path) {
    for (DType from : kAllDTypes) {
      for (DType to : kAllDTypes) {
        for (const FixedLayout& l : kLayouts) {
          const std::vector<unsigned char> src = RandomBytes(l.src_span, from, rng);
          const std::vector<unsigned char> before(l.dst_span * ItemSize(to), 0x5a);
          const typename B::Buffer device_src(src), device_dst(before);
          B::CopyCast(l.shape, from, device_src.data(), l.src_strides, to, device_dst.data(),
                      l.dst_strides);
          EXPECT_EQ(device_dst.template ToHost<unsigned char>(), Expected(l, from, src, to, before))
              << DTypeName(from) << " -> " << DTypeName(to) << " " << ShapeToString(l.shape)
              << " on " << path;
        }
      }
    }
  });
}

TYPED_TEST(CopyTest, FillWritesTheConvertedValueOnEveryDTypeAndLayout) {
  using B = TypeParam;
  for (DType dtype : kAllDTypes) {
    for (const FixedLayout& l : kLayouts) {
      for (const Scalar& value : {Scalar(2.75), Scalar(int64_t{-3}), Scalar(true)}) {
        std::vector<unsigned char> expected(l.dst_span * ItemSize(dtype), 0x5a);
        VisitDType(dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T t = value.to<T>();
          for (NdIndexIterator it(l.shape); !it.done(); it.Next()) {
            std::memcpy(&expected[FlatIndex(it.index(), l.dst_strides) * sizeof(T)], &t, sizeof(T));
          }
        });
        const typename B::Buffer device(std::vector<unsigned char>(expected.size(), 0x5a));
        B::Fill(l.shape, dtype, device.data(), l.dst_strides, value);
        EXPECT_EQ(device.template ToHost<unsigned char>(), expected)
            << DTypeName(dtype) << " " << ShapeToString(l.shape);
      }
    }
  }
}

TEST(CopyCpuTest, ContiguousSameDTypeIsAByteCopy) {
  std::vector<float> src = {1.5f, -0.0f, 3e38f, 7.0f, 8.0f, 9.0f};
  std::vector<float> dst(6);
  const Shape shape = {2, 3};
  cpu::CopyCast(shape, DType::kF32, src.data(), ContiguousStrides(shape), DType::kF32, dst.data(),
                ContiguousStrides(shape));
  EXPECT_EQ(0, std::memcmp(src.data(), dst.data(), sizeof(float) * 6));
}

// Copies big enough to be split across threads (the pool's grain is 32768 elements):
// by rows, within one merged row, from a broadcast row, into a strided view, with and
// without a conversion; on 3 threads so that chunks end mid-row and mid-buffer.
TEST(CopyCpuTest, CopiesSplitAcrossThreadsMatchTheElementwiseCopy) {
  const int threads = cpu::NumThreads();
  cpu::SetNumThreads(3);
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
    cpu::CopyCast(c.shape, DType::kF32, src.get(), c.src_strides, DType::kF32, dst.data(),
                  c.dst_strides);
    EXPECT_EQ(dst, expected) << c.name;
    std::vector<double> wide(span, -1.0);
    cpu::CopyCast(c.shape, DType::kF32, src.get(), c.src_strides, DType::kF64, wide.data(),
                  c.dst_strides);
    EXPECT_EQ(wide, converted) << c.name << ", to f64";
    std::vector<float> filled(span, -1.0f), filled_expected(span, -1.0f);
    for (NdIndexIterator it(c.shape); !it.done(); it.Next()) {
      filled_expected[FlatIndex(it.index(), c.dst_strides)] = 2.5f;
    }
    cpu::Fill(c.shape, DType::kF32, filled.data(), c.dst_strides, 2.5);
    EXPECT_EQ(filled, filled_expected) << c.name << ", filled";
  }
  cpu::SetNumThreads(threads);
}

TEST(CopyCpuTest, FillWritesOnlyTheViewsElements) {
  std::vector<int32_t> buffer(12, -1);
  // Shape [2, 2] with strides [6, 2]: elements 0, 2, 6, 8.
  cpu::Fill({2, 2}, DType::kI32, buffer.data(), {6, 2}, 7.9);
  EXPECT_EQ(buffer, (std::vector<int32_t>{7, -1, 7, -1, -1, -1, 7, -1, 7, -1, -1, -1}));
  std::vector<uint16_t> half(3);
  cpu::Fill({3}, DType::kBF16, half.data(), {1}, 1.0);
  EXPECT_EQ(half, (std::vector<uint16_t>{0x3f80, 0x3f80, 0x3f80}));
  cpu::Fill({}, DType::kBF16, half.data(), {}, 2.0);  // a scalar: one element
  EXPECT_EQ(half[0], 0x4000);
}

}  // namespace
}  // namespace ember::kernels
