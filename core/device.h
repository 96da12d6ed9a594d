#ifndef EMBER_CORE_DEVICE_H_
#define EMBER_CORE_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ember {

enum class DeviceType : uint8_t { kCpu, kCuda, kMeta };

// Where a tensor's storage lives: the CPU, or CUDA device `index`; or nowhere: a meta
// tensor has a shape, strides and dtype but no memory (torch's "meta" device), so that
// a model can be built, counted and planned without allocating it. Every op that reads
// or writes values refuses a meta tensor; views work.
struct Device {
  DeviceType type = DeviceType::kCpu;
  int index = 0;

  static Device Cpu() { return {DeviceType::kCpu, 0}; }
  static Device Cuda(int index = 0) { return {DeviceType::kCuda, index}; }
  static Device Meta() { return {DeviceType::kMeta, 0}; }

  bool is_cpu() const { return type == DeviceType::kCpu; }
  bool operator==(const Device& other) const { return type == other.type && index == other.index; }
  bool operator!=(const Device& other) const { return !(*this == other); }

  // "cpu", "cuda:N" or "meta".
  std::string ToString() const;
};

// Parses "cpu", "cuda" (device 0), "cuda:N" or "meta".
absl::StatusOr<Device> ParseDevice(absl::string_view text);

}  // namespace ember

#endif  // EMBER_CORE_DEVICE_H_
