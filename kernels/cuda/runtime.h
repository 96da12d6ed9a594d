#ifndef EMBER_KERNELS_CUDA_RUNTIME_H_
#define EMBER_KERNELS_CUDA_RUNTIME_H_

// The CUDA devices of this process, as torch.cuda sees them: how many there are, which
// one kernels launch on, and waiting for queued work. A build without CUDA has the
// same functions: it sees 0 devices, and the rest refuse with an ember::Error.
//
// ember queues all CUDA work of a device on that device's default stream, in the
// order the host issues it; the host waits only where it must read a result (a copy
// to host memory, Synchronize).

#include <string>

namespace ember::kernels::cuda {

// CUDA devices visible to this process; 0 when there is no GPU or no driver (never
// throws).
int DeviceCount();

// Throws ember::Error unless cuda:`index` exists, saying how many devices there are
// (and, with none, why: no GPU, no driver, or a build without CUDA).
void CheckDevice(int index);

// Makes cuda:`index` the calling thread's current device, the one that kernels launch
// on and cudaMalloc allocates from (cudaSetDevice, skipped when it already is).
void UseDevice(int index);

// The device's name as the driver gives it ("NVIDIA H200"), as
// torch.cuda.get_device_name; throws ember::Error as CheckDevice.
std::string DeviceName(int index);

// Waits until all work queued on cuda:`index` has finished; throws ember::Error with
// CUDA's message if any of it failed.
void Synchronize(int index = 0);

// Whether f32 matmuls may run on tensor cores in TF32 (inputs rounded to a 10-bit
// mantissa, products accumulated in f32), as torch.backends.cuda.matmul.allow_tf32;
// so may causal attention's forward at head size 64 (its two products a tile). Off by
// default, as in PyTorch: f32 products then match the CPU's to f32 rounding. On an
// H100 or H200, TF32 runs the f32 GEMMs of a GPT-2 step several times faster; llm.c's
// f32 build and nanoGPT turn it on. A process-wide setting; a build without CUDA keeps
// it and has nothing to apply it to.
void SetAllowTf32(bool allow);
bool AllowTf32();

}  // namespace ember::kernels::cuda

#endif  // EMBER_KERNELS_CUDA_RUNTIME_H_
