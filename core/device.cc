#include "core/device.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ember {

std::string Device::ToString() const {
  switch (type) {
    case DeviceType::kCpu:
      return "cpu";
    case DeviceType::kCuda:
      return absl::StrCat("cuda:", index);
    case DeviceType::kMeta:
      return "meta";
  }
  return "?";
}

absl::StatusOr<Device> ParseDevice(absl::string_view text) {
  if (text == "cpu") return Device::Cpu();
  if (text == "cuda") return Device::Cuda(0);
  if (text == "meta") return Device::Meta();
  int index = 0;
  if (absl::StartsWith(text, "cuda:") && absl::SimpleAtoi(text.substr(5), &index) && index >= 0) {
    return Device::Cuda(index);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown device '", text, "' (expected cpu, cuda, cuda:N or meta)"));
}

}  // namespace ember
