#ifndef EMBER_TENSOR_CUDA_H_
#define EMBER_TENSOR_CUDA_H_

// ember::cuda, as torch.cuda: the GPUs this process sees, waiting for their work, and
// their memory. The same calls exist in a build without CUDA, which sees 0 devices.
//
//   if (ember::cuda::IsAvailable()) x = x.To(Device::Cuda());
//   ...
//   ember::cuda::Synchronize();  // before reading a clock
//   const ember::cuda::MemoryStats stats = ember::cuda::GetMemoryStats(0);

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/device.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/runtime.h"

namespace ember::cuda {

using kernels::cuda::DeviceCount;  // 0 without a GPU, a driver or CUDA support
inline bool IsAvailable() { return DeviceCount() > 0; }
using kernels::cuda::DeviceName;   // "NVIDIA H200", as torch.cuda.get_device_name
using kernels::cuda::Synchronize;  // Synchronize(index = 0)
// The calling thread's current device (torch.cuda.set_device); CheckDevice says why one
// is not there.
using kernels::cuda::CheckDevice;
using kernels::cuda::UseDevice;

// torch.backends.cuda.matmul.allow_tf32: f32 matmuls on TF32 tensor cores (off by
// default; runtime.h says what it trades).
using kernels::cuda::AllowTf32;
using kernels::cuda::SetAllowTf32;

// The caching allocator's counters of one device (live, peak, cached bytes,
// allocations and those that needed cudaMalloc), as torch.cuda.memory_stats.
using kernels::cuda::GetMemoryStats;
using kernels::cuda::MemoryStats;
using kernels::cuda::ResetPeak;
// Frees every cached, unused block (torch.cuda.empty_cache()).
using kernels::cuda::EmptyCache;

// The device a binary's --device flag names: "cpu", "cuda", "cuda:N", or "auto" (cuda:0
// when there is a GPU, else the CPU). A CUDA device that is not there is an error that
// says why (no GPU, no driver, or a build without CUDA).
absl::StatusOr<Device> DeviceFromFlag(absl::string_view text);

}  // namespace ember::cuda

#endif  // EMBER_TENSOR_CUDA_H_
