// Strided copy with a cast, and fill, on both backends against tensor/dtype.h's
// Convert applied element by element (every dtype pair, strided and broadcast
// sources); and, on the GPU alone, the host <-> device copies (small, and large
// through the pinned chunks) and the caching allocator's counters. The CUDA cases
// skip, saying why, without a GPU.

#include "kernels/cuda/copy.h"

#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {
namespace {

using internal::BackendTest;
using internal::CudaBackend;

EMBER_BACKEND_TEST_SUITE(CopyTest);

struct Layout {
  Shape shape;
  Strides src_strides, dst_strides;
  int64_t src_span, dst_span;  // elements each buffer needs
};

const std::vector<Layout> kLayouts = {
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
// round, saturate or are NaN when cast.
std::vector<unsigned char> RandomBytes(int64_t n, DType dtype, std::mt19937& rng) {
  std::vector<unsigned char> bytes(n * ItemSize(dtype));
  VisitDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::uniform_real_distribution<double> value(-70000, 70000);
    const double specials[] = {0.5, -2.5, 1e10, -1e10, NAN, INFINITY, 65519.0, 3.0000001};
    for (int64_t i = 0; i < n; ++i) {
      const double v = i < 8 ? specials[i] : (i % 3 ? value(rng) : value(rng) * 1e-6);
      const T t = Convert<T>(v);
      std::memcpy(&bytes[i * sizeof(T)], &t, sizeof(T));
    }
  });
  return bytes;
}

// dst with every element of the layout replaced by Convert<To>(src's).
std::vector<unsigned char> Expected(const Layout& l, DType from,
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

TYPED_TEST(CopyTest, CopyCastIsConvertOnEveryDTypePairAndLayout) {
  using B = TypeParam;
  std::mt19937 rng(5);
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      for (const Layout& l : kLayouts) {
        const std::vector<unsigned char> src = RandomBytes(l.src_span, from, rng);
        const std::vector<unsigned char> before(l.dst_span * ItemSize(to), 0x5a);
        const typename B::Buffer device_src(src), device_dst(before);
        B::CopyCast(l.shape, from, device_src.data(), l.src_strides, to, device_dst.data(),
                    l.dst_strides);
        EXPECT_EQ(device_dst.template ToHost<unsigned char>(), Expected(l, from, src, to, before))
            << DTypeName(from) << " -> " << DTypeName(to) << " " << ShapeToString(l.shape);
      }
    }
  }
}

TYPED_TEST(CopyTest, FillWritesTheConvertedValueOnEveryDTypeAndLayout) {
  using B = TypeParam;
  for (DType dtype : kAllDTypes) {
    for (const Layout& l : kLayouts) {
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

// ---- The GPU alone ----

class CudaMemoryTest : public BackendTest<CudaBackend> {};

TEST_F(CudaMemoryTest, BytesMakeTheRoundTripAtEverySize) {
  // Below the staging threshold, one chunk, and several chunks with a ragged end.
  for (int64_t n : {int64_t{1}, int64_t{4097}, int64_t{3} << 20, (int64_t{20} << 20) + 3}) {
    std::vector<unsigned char> host(n);
    std::iota(host.begin(), host.end(), static_cast<unsigned char>(n));
    const CudaBackend::Buffer a(host), b(n);
    CopyBytes(b.data(), 0, a.data(), 0, n);  // device to device
    EXPECT_EQ(b.ToHost<unsigned char>(), host) << n << " bytes";
  }
}

TEST_F(CudaMemoryTest, TheAllocatorReusesFreedBlocksAndCountsThem) {
  EmptyCache();
  const MemoryStats before = GetMemoryStats(0);
  void* first = Allocate(0, 3 << 20);
  const MemoryStats during = GetMemoryStats(0);
  EXPECT_EQ(during.live_bytes - before.live_bytes, 3 << 20);
  EXPECT_GE(during.peak_bytes, during.live_bytes);
  EXPECT_EQ(during.fresh_allocation_count - before.fresh_allocation_count, 1);
  Deallocate(0, first, 3 << 20);
  EXPECT_EQ(GetMemoryStats(0).cached_bytes, 4 << 20);  // rounded to 2 MiB
  // A request of the same size class takes the cached block, without cudaMalloc.
  void* second = Allocate(0, (3 << 20) + 1000);
  EXPECT_EQ(second, first);
  const MemoryStats reused = GetMemoryStats(0);
  EXPECT_EQ(reused.fresh_allocation_count, during.fresh_allocation_count);
  EXPECT_EQ(reused.allocation_count, during.allocation_count + 1);
  EXPECT_EQ(reused.cached_bytes, 0);
  Deallocate(0, second, (3 << 20) + 1000);
  EmptyCache();
  EXPECT_EQ(GetMemoryStats(0).cached_bytes, 0);
  EXPECT_EQ(GetMemoryStats(0).live_bytes, before.live_bytes);
}

TEST_F(CudaMemoryTest, OutOfMemoryAndMissingDevicesAreErrors) {
  try {
    Allocate(0, int64_t{1} << 50);
    FAIL() << "a petabyte was allocated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory asking for 1125899906842624 bytes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Allocate(DeviceCount(), 8), Error);
  EXPECT_THROW(CheckDevice(-1), Error);
}

}  // namespace
}  // namespace ember::kernels::cuda
