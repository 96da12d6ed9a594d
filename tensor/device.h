#ifndef EMBER_TENSOR_DEVICE_H_
#define EMBER_TENSOR_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ember {

enum class DeviceType : uint8_t { kCpu, kCuda };

// Where a tensor's storage lives: the CPU, or CUDA device `index`.
struct Device {
  DeviceType type = DeviceType::kCpu;
  int index = 0;

  static Device Cpu() { return {DeviceType::kCpu, 0}; }
  static Device Cuda(int index = 0) { return {DeviceType::kCuda, index}; }

  bool is_cpu() const { return type == DeviceType::kCpu; }
  bool operator==(const Device& other) const { return type == other.type && index == other.index; }
  bool operator!=(const Device& other) const { return !(*this == other); }

  // "cpu" or "cuda:N".
  std::string ToString() const;
};

// Parses "cpu", "cuda" (device 0) or "cuda:N".
absl::StatusOr<Device> ParseDevice(absl::string_view text);

}  // namespace ember

#endif  // EMBER_TENSOR_DEVICE_H_
