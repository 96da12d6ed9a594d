// The GPU's memory: host <-> device copies (small, and large through the pinned
// chunks) and the caching allocator's counters and errors. Skips, saying why, without a
// GPU.

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/copy.h"
#include "kernels/cuda/internal/backends.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {
namespace {

using internal::BackendTest;
using internal::CudaBackend;

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
