#ifndef EMBER_TENSOR_STORAGE_H_
#define EMBER_TENSOR_STORAGE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "core/device.h"

namespace ember {

// Every buffer is aligned to this many bytes (a cache line; enough for any SIMD
// load, including AVX-512).
inline constexpr int64_t kStorageAlignment = 64;

// Hands out raw device memory. Storage calls Deallocate with the same size it asked
// Allocate for, so an allocator can keep exact byte counts.
class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns kStorageAlignment-aligned memory, or nullptr for nbytes == 0. Throws
  // ember::Error when the memory is not available.
  virtual void* Allocate(int64_t nbytes) = 0;
  virtual void Deallocate(void* data, int64_t nbytes) = 0;
  virtual Device device() const = 0;
};

// Host memory, with counters of what it has handed out, so that memory use can be
// reported and tested (a steady-state training step should allocate nothing new).
// Thread-safe.
//
// Freed buffers are cached and handed out again for a request of the same padded
// size, as PyTorch's CUDA allocator does: a training step makes the same tensors
// every time, so after the first steps it takes all its memory from the cache (a
// fresh large block would come from the kernel as untouched pages, one page fault and
// one zeroing per 4 kB, every step; a small one costs a trip through malloc). The
// cache holds at most kCacheMaxBytes (a block that does not fit is freed);
// EmptyCache() gives it all back (as torch.cuda.empty_cache()), as does an allocation
// that finds no memory, before it tries again.
class CpuAllocator final : public Allocator {
 public:
#if defined(__SANITIZE_ADDRESS__)
  static constexpr int64_t kCacheMaxBytes = 0;  // AddressSanitizer must see every free
#else
  static constexpr int64_t kCacheMaxBytes = int64_t{4} << 30;
#endif

  ~CpuAllocator() override { EmptyCache(); }
  void* Allocate(int64_t nbytes) override;
  void Deallocate(void* data, int64_t nbytes) override;
  Device device() const override { return Device::Cpu(); }

  // Bytes held in the cache, not handed out.
  int64_t cached_bytes() const;
  void EmptyCache();

  // Bytes allocated and not yet freed.
  int64_t live_bytes() const { return live_bytes_.load(std::memory_order_relaxed); }
  // The largest live_bytes() seen since the start or the last ResetPeak().
  int64_t peak_bytes() const { return peak_bytes_.load(std::memory_order_relaxed); }
  // How many Allocate calls returned memory (nbytes > 0), ever.
  int64_t allocation_count() const { return allocation_count_.load(std::memory_order_relaxed); }
  // How many of them took new memory from the system rather than a cached block: a
  // steady-state training step adds none.
  int64_t fresh_allocation_count() const {
    return fresh_allocation_count_.load(std::memory_order_relaxed);
  }
  void ResetPeak() { peak_bytes_.store(live_bytes(), std::memory_order_relaxed); }

 private:
  mutable std::mutex mutex_;             // guards the cache
  std::multimap<int64_t, void*> cache_;  // padded size -> free block
  int64_t cached_bytes_ = 0;
  std::atomic<int64_t> live_bytes_{0};
  std::atomic<int64_t> peak_bytes_{0};
  std::atomic<int64_t> allocation_count_{0};
  std::atomic<int64_t> fresh_allocation_count_{0};
};

// The process's CPU allocator.
CpuAllocator& GetCpuAllocator();

// The allocator for `device`. Throws ember::Error for a device this build has no
// backend for.
Allocator& GetAllocator(Device device);

// A reference-counted buffer of bytes on one device. Copies share the buffer; the
// last copy to go frees it through the allocator that made it.
class Storage {
 public:
  Storage() = default;  // holds nothing
  Storage(int64_t nbytes, Allocator& allocator);
  // Allocates nbytes on `device`.
  static Storage Allocate(int64_t nbytes, Device device = Device::Cpu());
  // nbytes at `data` that ember did not allocate (a NumPy array's, for Python's
  // ember.from_numpy): they stay valid while `owner` lives, and the last copy of this
  // storage lets go of `owner`. No allocator counts them.
  static Storage Borrow(void* data, int64_t nbytes, Device device, std::shared_ptr<void> owner);

  bool defined() const { return impl_ != nullptr; }
  void* data() const { return impl_ ? impl_->data : nullptr; }
  int64_t nbytes() const { return impl_ ? impl_->nbytes : 0; }
  Device device() const { return impl_ ? impl_->device : Device::Cpu(); }
  // Number of Storage handles sharing this buffer.
  long use_count() const { return impl_.use_count(); }

  // Frees the buffer but keeps the storage, its size and every tensor on it, as
  // PyTorch's storage.resize_(0): fully sharded training frees a layer's gathered weights
  // while the graph still holds views of them, and Restore() allocates the same number
  // of bytes again (contents undefined) before it gathers them back, so those views read
  // the gathered weights in backward. A tensor on a released storage throws when its
  // data is asked for. Only for storage an allocator made.
  void Release() const;
  void Restore() const;
  bool released() const { return impl_ != nullptr && impl_->data == nullptr && impl_->nbytes > 0; }
  bool is_same(const Storage& other) const { return impl_ == other.impl_; }

  // How many in-place writes the buffer has had (Tensor::Fill and CopyFrom count one
  // each), PyTorch's version counter: autograd keeps the count a tensor it saved had,
  // and a backward that finds it changed refuses to compute a wrong gradient.
  uint64_t version() const { return impl_ ? impl_->version.load(std::memory_order_relaxed) : 0; }
  void BumpVersion() const {
    if (impl_) impl_->version.fetch_add(1, std::memory_order_relaxed);
  }
  // Sets the count back, for a buffer refilled with the values it had (fully sharded
  // training gathers a released layer's weights again for backward): not a change.
  void set_version(uint64_t version) const {
    if (impl_) impl_->version.store(version, std::memory_order_relaxed);
  }

 private:
  struct Impl {
    Impl(int64_t nbytes, Allocator& allocator);
    Impl(void* data, int64_t nbytes, Device device, std::shared_ptr<void> owner);
    ~Impl();
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    void* data;
    int64_t nbytes;
    Allocator* allocator;  // null for borrowed memory
    Device device;
    std::shared_ptr<void> owner;  // what keeps borrowed memory alive
    std::atomic<uint64_t> version{0};
  };
  std::shared_ptr<Impl> impl_;
};

}  // namespace ember

#endif  // EMBER_TENSOR_STORAGE_H_
