#include "tensor/storage.h"

#include <cstdlib>

#include "base/error.h"

namespace ember {
namespace {

// aligned_alloc wants a multiple of the alignment; the cache is keyed by it too.
int64_t Padded(int64_t nbytes) { return (nbytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment; }

}  // namespace

void* CpuAllocator::Allocate(int64_t nbytes) {
  EMBER_CHECK(nbytes >= 0, "allocate: negative size ", nbytes, " bytes");
  if (nbytes == 0) return nullptr;
  const int64_t padded = Padded(nbytes);
  void* data = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = cache_.find(padded); it != cache_.end()) {
      data = it->second;
      cache_.erase(it);
      cached_bytes_ -= padded;
    }
  }
  if (data == nullptr) {
    data = std::aligned_alloc(kStorageAlignment, padded);
    if (data == nullptr && cached_bytes() > 0) {  // the cache's other sizes may be what is missing
      EmptyCache();
      data = std::aligned_alloc(kStorageAlignment, padded);
    }
    EMBER_CHECK(data != nullptr, "allocate: out of memory asking for ", nbytes, " bytes (",
                live_bytes(), " bytes already live)");
    fresh_allocation_count_.fetch_add(1, std::memory_order_relaxed);
  }
  const int64_t live = live_bytes_.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (live > peak && !peak_bytes_.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  allocation_count_.fetch_add(1, std::memory_order_relaxed);
  return data;
}

void CpuAllocator::Deallocate(void* data, int64_t nbytes) {
  if (data == nullptr) return;
  live_bytes_.fetch_sub(nbytes, std::memory_order_relaxed);
  const int64_t padded = Padded(nbytes);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_bytes_ + padded <= kCacheMaxBytes) {
      cache_.emplace(padded, data);
      cached_bytes_ += padded;
      return;
    }
  }
  std::free(data);
}

int64_t CpuAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cached_bytes_;
}

void CpuAllocator::EmptyCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [size, data] : cache_) std::free(data);
  cache_.clear();
  cached_bytes_ = 0;
}

CpuAllocator& GetCpuAllocator() {
  static CpuAllocator* const allocator = new CpuAllocator();  // never destroyed
  return *allocator;
}

Allocator& GetAllocator(Device device) {
#ifdef EMBER_CUDA
  EMBER_CHECK(device.is_cpu(), "no allocator for device ", device.ToString(),
              ": ember's CUDA backend cannot hold tensors yet");
#else
  EMBER_CHECK(device.is_cpu(), "no allocator for device ", device.ToString(),
              ": this build of ember has no CUDA support (build with --config=cuda)");
#endif
  return GetCpuAllocator();
}

Storage::Impl::Impl(int64_t nbytes, Allocator& allocator)
    : data(allocator.Allocate(nbytes)), nbytes(nbytes), allocator(&allocator) {}

Storage::Impl::~Impl() { allocator->Deallocate(data, nbytes); }

Storage::Storage(int64_t nbytes, Allocator& allocator)
    : impl_(std::make_shared<Impl>(nbytes, allocator)) {}

Storage Storage::Allocate(int64_t nbytes, Device device) {
  return Storage(nbytes, GetAllocator(device));
}

}  // namespace ember
