#ifndef EMBER_KERNELS_CPU_INTERNAL_SCRATCH_H_
#define EMBER_KERNELS_CPU_INTERNAL_SCRATCH_H_

// Per-thread scratch buffers that grow when needed and are then reused, so that a
// steady stream of kernel calls allocates nothing and touches no fresh pages (a new
// 8 MB buffer per call costs its page faults and zeroing every time). Aligned to 64
// bytes. The contents are whatever the buffer's last user left.

#include <cstddef>
#include <cstdint>

#include "hwy/aligned_allocator.h"

namespace ember::kernels::cpu::internal {

// One buffer per (slot, element type, thread). A kernel that calls another kernel on
// the same thread uses other slots than the callee's.
enum class Scratch { kGemmPackedB, kGemmPackedA, kCount };

template <typename T>
T* ScratchBuffer(Scratch slot, int64_t items) {
  struct Slot {
    hwy::AlignedFreeUniquePtr<T[]> data;
    int64_t capacity = 0;
  };
  thread_local Slot slots[static_cast<int>(Scratch::kCount)];
  Slot& s = slots[static_cast<int>(slot)];
  if (s.capacity < items) {
    s.data = hwy::AllocateAligned<T>(static_cast<size_t>(items));
    s.capacity = items;
  }
  return s.data.get();
}

}  // namespace ember::kernels::cpu::internal

#endif  // EMBER_KERNELS_CPU_INTERNAL_SCRATCH_H_
