#include "tensor/cuda.h"

#include <exception>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ember::cuda {

absl::StatusOr<Device> DeviceFromFlag(absl::string_view text) {
  if (text == "auto") return IsAvailable() ? Device::Cuda(0) : Device::Cpu();
  absl::StatusOr<Device> device = ParseDevice(text);
  if (!device.ok() || device->type == DeviceType::kMeta) {  // meta holds no data to compute on
    return absl::InvalidArgumentError(
        absl::StrCat("--device=", text, ": expected cpu, cuda, cuda:N or auto"));
  }
  if (device->is_cpu()) return device;
  try {
    kernels::cuda::CheckDevice(device->index);
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(absl::StrCat("--device=", text, ": ", e.what()));
  }
  return device;
}

}  // namespace ember::cuda
