#include "tensor/storage.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/error.h"
#include "gtest/gtest.h"
#include "kernels/cuda/runtime.h"

namespace ember {
namespace {

TEST(StorageTest, AlignedAndCounted) {
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes(), count = cpu.allocation_count();
  {
    Storage a = Storage::Allocate(100);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % kStorageAlignment, 0u);
    EXPECT_EQ(a.nbytes(), 100);
    EXPECT_EQ(a.device(), Device::Cpu());
    std::memset(a.data(), 0xab, 100);  // the whole buffer is usable
    EXPECT_EQ(cpu.live_bytes(), live + 100);
    Storage b = Storage::Allocate(28);
    EXPECT_EQ(cpu.live_bytes(), live + 128);
    EXPECT_GE(cpu.peak_bytes(), live + 128);
    EXPECT_EQ(cpu.allocation_count(), count + 2);
  }
  EXPECT_EQ(cpu.live_bytes(), live);
}

TEST(StorageTest, CopiesShareAndTheLastOneFrees) {
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes();
  Storage a = Storage::Allocate(64);
  Storage b = a;
  EXPECT_TRUE(a.is_same(b));
  EXPECT_EQ(a.data(), b.data());
  EXPECT_EQ(a.use_count(), 2);
  a = Storage();
  EXPECT_FALSE(a.defined());
  EXPECT_EQ(cpu.live_bytes(), live + 64);  // b still holds it
  b = Storage();
  EXPECT_EQ(cpu.live_bytes(), live);
}

TEST(StorageTest, BorrowedMemoryIsHeldUntilTheLastCopyGoes) {
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes();
  std::vector<float> values = {1, 2, 3};
  bool released = false;
  std::shared_ptr<void> owner(nullptr, [&](void*) { released = true; });
  Storage a = Storage::Borrow(values.data(), 12, Device::Cpu(), std::move(owner));
  Storage b = a;
  EXPECT_EQ(a.data(), values.data());
  EXPECT_EQ(b.nbytes(), 12);
  EXPECT_EQ(b.device(), Device::Cpu());
  EXPECT_EQ(cpu.live_bytes(), live);  // not the allocator's
  a = Storage();
  EXPECT_FALSE(released);
  b = Storage();
  EXPECT_TRUE(released);
  EXPECT_EQ(values[2], 3);  // nothing freed or written
}

TEST(StorageTest, PeakResets) {
  CpuAllocator& cpu = GetCpuAllocator();
  { Storage big = Storage::Allocate(1 << 20); }
  EXPECT_GE(cpu.peak_bytes(), cpu.live_bytes() + (1 << 20));
  cpu.ResetPeak();
  EXPECT_EQ(cpu.peak_bytes(), cpu.live_bytes());
}

TEST(StorageTest, ZeroBytesAllocatesNothing) {
  const int64_t count = GetCpuAllocator().allocation_count();
  Storage empty = Storage::Allocate(0);
  EXPECT_TRUE(empty.defined());
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(GetCpuAllocator().allocation_count(), count);
}

TEST(StorageTest, CountersAreThreadSafe) {
  CpuAllocator& cpu = GetCpuAllocator();
  const int64_t live = cpu.live_bytes();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 2000; ++i) Storage s = Storage::Allocate(1 + i % 100);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(cpu.live_bytes(), live);
}

TEST(StorageTest, ErrorsNameTheProblem) {
  // A device that is not there: without CUDA support, without a GPU, or past the last.
  const int missing = kernels::cuda::DeviceCount();
  try {
    Storage::Allocate(8, Device::Cuda(missing));
    FAIL();
  } catch (const Error& e) {
#ifndef EMBER_CUDA
    EXPECT_STREQ(e.what(),
                 "cuda:0: this build of ember has no CUDA support (build with --config=cuda)");
#else
    EXPECT_EQ(std::string(e.what()).rfind(absl::StrCat("cuda:", missing), 0), 0) << e.what();
#endif
  }
  EXPECT_THROW(Storage::Allocate(-1), Error);
  EXPECT_THROW(Storage::Allocate(int64_t{1} << 62), Error);  // out of memory, not a crash
}

TEST(StorageTest, FreedBlocksAreReusedNotReturned) {
  if (CpuAllocator::kCacheMaxBytes == 0) GTEST_SKIP() << "no cache under AddressSanitizer";
  CpuAllocator& cpu = GetCpuAllocator();
  cpu.EmptyCache();
  const int64_t big = (int64_t{3} << 20) + 10, count = cpu.allocation_count();
  const int64_t fresh = cpu.fresh_allocation_count();
  void* first = nullptr;
  {
    const Storage a = Storage::Allocate(big);
    first = a.data();
    static_cast<char*>(a.data())[big - 1] = 7;
  }
  EXPECT_EQ(cpu.cached_bytes(),
            (big + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment);
  {
    const Storage b = Storage::Allocate(big);  // the same size: the same block
    EXPECT_EQ(b.data(), first);
    EXPECT_EQ(cpu.cached_bytes(), 0);
    const Storage c = Storage::Allocate(big + 4096);  // another size: a new block
    EXPECT_NE(c.data(), first);
  }
  EXPECT_EQ(cpu.allocation_count(), count + 3);
  EXPECT_EQ(cpu.fresh_allocation_count(), fresh + 2);  // b reused a's block
  {
    const Storage small = Storage::Allocate(1000);  // small blocks are cached too
  }
  {
    const Storage again = Storage::Allocate(1000);
    EXPECT_EQ(cpu.fresh_allocation_count(), fresh + 3);
  }
  EXPECT_EQ(
      cpu.cached_bytes(),
      2 * ((big + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment) + 4096 + 1024);
  // A request the system cannot meet first gives the cache back, then fails.
  EXPECT_THROW(Storage::Allocate(int64_t{1} << 50), Error);
  EXPECT_EQ(cpu.cached_bytes(), 0);
}

}  // namespace
}  // namespace ember
