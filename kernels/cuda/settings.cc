// runtime.h's process-wide settings, the same in builds with and without CUDA.

#include <atomic>

#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {
namespace {

std::atomic<bool> allow_tf32{false};

}  // namespace

void SetAllowTf32(bool allow) { allow_tf32.store(allow, std::memory_order_relaxed); }
bool AllowTf32() { return allow_tf32.load(std::memory_order_relaxed); }

}  // namespace ember::kernels::cuda
