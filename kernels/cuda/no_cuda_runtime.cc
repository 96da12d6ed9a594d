// runtime.h and allocator.h in a build without CUDA: no devices, nothing cached, and
// every use of a device refused with the message that says how to get CUDA support.

#include "absl/strings/str_cat.h"
#include "kernels/cuda/allocator.h"
#include "kernels/cuda/internal/unavailable.h"
#include "kernels/cuda/runtime.h"

namespace ember::kernels::cuda {

int DeviceCount() { return 0; }
void CheckDevice(int index) { internal::Unavailable(absl::StrCat("cuda:", index).c_str()); }
void UseDevice(int index) { CheckDevice(index); }
std::string DeviceName(int index) { internal::Unavailable(absl::StrCat("cuda:", index).c_str()); }
void Synchronize(int index) { internal::Unavailable("cuda::Synchronize"); }

void* Allocate(int device, int64_t nbytes) { internal::Unavailable("cuda allocate"); }
void Deallocate(int device, void* data, int64_t nbytes) {}
void EmptyCache() {}
MemoryStats GetMemoryStats(int device) { internal::Unavailable("cuda memory stats"); }
void ResetPeak(int device) { internal::Unavailable("cuda memory stats"); }

}  // namespace ember::kernels::cuda
