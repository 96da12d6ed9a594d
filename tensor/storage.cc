#include "tensor/storage.h"

#include <cstdlib>
#include <memory>
#include <vector>

#include "base/error.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/runtime.h"

namespace ember {
namespace {

// aligned_alloc wants a multiple of the alignment; the cache is keyed by it too.
int64_t Padded(int64_t nbytes) {
  return (nbytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
}

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

namespace {

// Device memory of cuda:index, from kernels/cuda's caching allocator.
class CudaAllocator final : public Allocator {
 public:
  explicit CudaAllocator(int index) : index_(index) {}
  void* Allocate(int64_t nbytes) override { return kernels::cuda::Allocate(index_, nbytes); }
  void Deallocate(void* data, int64_t nbytes) override {
    kernels::cuda::Deallocate(index_, data, nbytes);
  }
  Device device() const override { return Device::Cuda(index_); }

 private:
  int index_;
};

// The meta device's: sizes without memory.
class MetaAllocator final : public Allocator {
 public:
  void* Allocate(int64_t) override { return nullptr; }
  void Deallocate(void*, int64_t) override {}
  Device device() const override { return Device::Meta(); }
};

}  // namespace

// The one switch on the device type below the tensor ops.
Allocator& GetAllocator(Device device) {
  switch (device.type) {
    case DeviceType::kCpu:
      return GetCpuAllocator();
    case DeviceType::kCuda: {
      // Throws for a device that is not there (or a build without CUDA), naming it.
      kernels::cuda::CheckDevice(device.index);
      static const auto* const allocators = [] {
        auto* made = new std::vector<std::unique_ptr<CudaAllocator>>();  // never destroyed
        for (int i = 0; i < kernels::cuda::DeviceCount(); ++i) {
          made->push_back(std::make_unique<CudaAllocator>(i));
        }
        return made;
      }();
      return *(*allocators)[device.index];
    }
    case DeviceType::kMeta: {
      static MetaAllocator* const meta = new MetaAllocator();
      return *meta;
    }
  }
  EMBER_THROW("no allocator for device ", device.ToString());
}

Storage::Impl::Impl(int64_t nbytes, Allocator& allocator)
    : data(allocator.Allocate(nbytes)),
      nbytes(nbytes),
      allocator(&allocator),
      device(allocator.device()) {}

Storage::Impl::Impl(void* data, int64_t nbytes, Device device, std::shared_ptr<void> owner)
    : data(data), nbytes(nbytes), allocator(nullptr), device(device), owner(std::move(owner)) {}

Storage::Impl::~Impl() {
  if (allocator != nullptr) allocator->Deallocate(data, nbytes);
}

Storage::Storage(int64_t nbytes, Allocator& allocator)
    : impl_(std::make_shared<Impl>(nbytes, allocator)) {}

Storage Storage::Allocate(int64_t nbytes, Device device) {
  return Storage(nbytes, GetAllocator(device));
}

void Storage::Release() const {
  EMBER_CHECK(impl_ != nullptr && impl_->allocator != nullptr,
              "Storage::Release: only an allocator's storage can be released");
  impl_->allocator->Deallocate(impl_->data, impl_->nbytes);
  impl_->data = nullptr;
}

void Storage::Restore() const {
  EMBER_CHECK(impl_ != nullptr && impl_->allocator != nullptr,
              "Storage::Restore: only an allocator's storage can be restored");
  if (impl_->data == nullptr) impl_->data = impl_->allocator->Allocate(impl_->nbytes);
}

Storage Storage::Borrow(void* data, int64_t nbytes, Device device, std::shared_ptr<void> owner) {
  EMBER_CHECK(nbytes >= 0 && (data != nullptr || nbytes == 0), "Storage::Borrow: ", nbytes,
              data == nullptr ? " bytes at a null pointer" : " bytes");
  Storage s;
  s.impl_ = std::make_shared<Impl>(data, nbytes, device, std::move(owner));
  return s;
}

}  // namespace ember
