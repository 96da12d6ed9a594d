#include "kernels/cuda/allocator.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "base/error.h"
#include "kernels/cuda/internal/check.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {
namespace {

constexpr int64_t kSmallLimit = int64_t{1} << 20;  // up to here, 512-byte classes
constexpr int64_t kSmallRound = 512;
constexpr int64_t kLargeRound = int64_t{2} << 20;

int64_t SizeClass(int64_t nbytes) {
  const int64_t round = nbytes <= kSmallLimit ? kSmallRound : kLargeRound;
  return (nbytes + round - 1) / round * round;
}

// One device's cache and counters.
struct DeviceCache {
  std::mutex mutex;
  std::multimap<int64_t, void*> free_blocks;  // size class -> block
  MemoryStats stats;

  // Frees every cached block; the caller holds mutex and has made the device current.
  void Release() {
    for (const auto& [size, block] : free_blocks) cudaFree(block);
    free_blocks.clear();
    stats.cached_bytes = 0;
  }
};

// One cache per device, made on first use and never destroyed (tensors may outlive
// static destructors, and CUDA may be torn down before them).
DeviceCache& CacheOf(int device) {
  static std::mutex mutex;
  static auto* const caches = new std::vector<std::unique_ptr<DeviceCache>>();
  CheckDevice(device);
  std::lock_guard<std::mutex> lock(mutex);
  if (caches->size() <= static_cast<size_t>(device)) caches->resize(device + 1);
  auto& cache = (*caches)[device];
  if (cache == nullptr) cache = std::make_unique<DeviceCache>();
  return *cache;
}

}  // namespace

void* Allocate(int device, int64_t nbytes) {
  EMBER_CHECK(nbytes >= 0, "cuda allocate: negative size ", nbytes, " bytes");
  if (nbytes == 0) return nullptr;
  DeviceCache& cache = CacheOf(device);
  const int64_t size = SizeClass(nbytes);
  std::lock_guard<std::mutex> lock(cache.mutex);
  void* block = nullptr;
  if (auto it = cache.free_blocks.find(size); it != cache.free_blocks.end()) {
    block = it->second;
    cache.free_blocks.erase(it);
    cache.stats.cached_bytes -= size;
  } else {
    UseDevice(device);
    cudaError_t error = cudaMalloc(&block, size);
    if (error == cudaErrorMemoryAllocation && !cache.free_blocks.empty()) {
      cudaGetLastError();  // clear the sticky-until-read error before trying again
      cache.Release();     // the other size classes may be what is missing
      error = cudaMalloc(&block, size);
    }
    if (error != cudaSuccess) {
      cudaGetLastError();
      EMBER_THROW("cuda:", device, ": out of memory asking for ", nbytes, " bytes (",
                  cache.stats.live_bytes, " bytes live in tensors, ", cache.stats.cached_bytes,
                  " cached; CUDA error: ", cudaGetErrorString(error), ")");
    }
    ++cache.stats.fresh_allocation_count;
  }
  cache.stats.live_bytes += nbytes;
  cache.stats.peak_bytes = std::max(cache.stats.peak_bytes, cache.stats.live_bytes);
  ++cache.stats.allocation_count;
  return block;
}

void Deallocate(int device, void* data, int64_t nbytes) {
  if (data == nullptr) return;
  DeviceCache& cache = CacheOf(device);
  const int64_t size = SizeClass(nbytes);
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.stats.live_bytes -= nbytes;
  cache.free_blocks.emplace(size, data);
  cache.stats.cached_bytes += size;
}

void EmptyCache() {
  for (int device = 0; device < DeviceCount(); ++device) {
    DeviceCache& cache = CacheOf(device);
    std::lock_guard<std::mutex> lock(cache.mutex);
    UseDevice(device);
    cache.Release();
  }
}

MemoryStats GetMemoryStats(int device) {
  DeviceCache& cache = CacheOf(device);
  std::lock_guard<std::mutex> lock(cache.mutex);
  return cache.stats;
}

void ResetPeak(int device) {
  DeviceCache& cache = CacheOf(device);
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.stats.peak_bytes = cache.stats.live_bytes;
}

}  // namespace ember::kernels::cuda
