#ifndef EMBER_KERNELS_CUDA_ALLOCATOR_H_
#define EMBER_KERNELS_CUDA_ALLOCATOR_H_

// Device memory for tensors: a caching allocator, as PyTorch's CUDA allocator.
//
// cudaMalloc and cudaFree are slow (cudaFree waits for the whole device), and a
// training step makes the same tensors every step; so a freed block is kept, and the
// next request of its size class gets it back without a CUDA call. Size classes:
// requests up to 1 MiB round up to a multiple of 512 bytes, larger ones to a multiple
// of 2 MiB (at most 2 MiB - 1 wasted on a block of 1 MiB or more).
//
// Stream order: ember queues every kernel and copy of a device on its default stream
// (runtime.h), so a block freed on the host while kernels that use it are still queued
// can be handed out at once: whatever the next owner queues runs after them. No event
// or synchronisation is needed, as in PyTorch for a block used on one stream.
//
// When cudaMalloc finds no memory, the cache of that device is given back
// (cudaFree) and the request tried once more; if it still fails, the error names the
// bytes asked for, those live and those cached. Thread-safe.

#include <cstdint>

namespace ember::kernels::cuda {

// The same counters as the CPU allocator's (tensor/storage.h), for one device.
struct MemoryStats {
  int64_t live_bytes = 0;              // handed out and not yet freed (as asked, unpadded)
  int64_t peak_bytes = 0;              // the most live_bytes since the start or ResetPeak
  int64_t cached_bytes = 0;            // freed blocks kept for reuse (padded)
  int64_t allocation_count = 0;        // Allocate calls that returned memory, ever
  int64_t fresh_allocation_count = 0;  // of those, the ones that had to call cudaMalloc
};

// nbytes of memory on cuda:`device`, aligned to 256 bytes (cudaMalloc's alignment);
// nullptr for nbytes == 0. Throws ember::Error when the device does not exist or the
// memory is not there.
void* Allocate(int device, int64_t nbytes);
// Gives back a block from Allocate(device, nbytes), with the same nbytes.
void Deallocate(int device, void* data, int64_t nbytes);

// A block of Allocate for the length of a scope, given back when the scope ends, also
// when an error unwinds it: a kernel call's temporaries. Stream order makes that safe
// while the kernels that use it are still queued (whatever gets the block next is
// queued after them).
class ScopedAllocation {
 public:
  ScopedAllocation(int device, int64_t nbytes)
      : device_(device), nbytes_(nbytes), data_(Allocate(device, nbytes)) {}
  ~ScopedAllocation() { Deallocate(device_, data_, nbytes_); }
  ScopedAllocation(const ScopedAllocation&) = delete;
  ScopedAllocation& operator=(const ScopedAllocation&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  int device_;
  int64_t nbytes_;
  void* data_;
};

// Frees every cached block of every device (torch.cuda.empty_cache()).
void EmptyCache();

MemoryStats GetMemoryStats(int device);
void ResetPeak(int device);

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_ALLOCATOR_H_
