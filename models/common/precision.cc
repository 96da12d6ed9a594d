#include "models/common/precision.h"

#include "absl/strings/str_cat.h"

namespace ember::models {

absl::StatusOr<DType> ComputeDTypeFromFlag(const std::string& flag, Device device) {
  if (flag == "auto") return device.is_cpu() ? DType::kF32 : DType::kBF16;
  if (flag == "f32") return DType::kF32;
  if (flag == "bf16") return DType::kBF16;
  return absl::InvalidArgumentError(absl::StrCat("--dtype=", flag, ": expected f32, bf16 or auto"));
}

absl::StatusOr<std::optional<ops::PackedFormat>> WeightsFromFlag(const std::string& flag,
                                                                 DType dtype, Device device) {
  if (flag == "none") return std::nullopt;
  if (flag == "auto") {
    if (!device.is_cpu()) return std::nullopt;
    return dtype == DType::kBF16 ? ops::PackedFormat::kBF16 : ops::PackedFormat::kF32;
  }
  absl::StatusOr<ops::PackedFormat> format = ops::PackedFormatFromName(flag);
  if (!format.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--weights=", flag, ": expected f32, bf16, int8, auto or none"));
  }
  if (!device.is_cpu()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--weights=", flag, ": packed weights are for the CPU; on ", device.ToString(),
                     " use --weights=none (the GPU decodes from the compute dtype's copies)"));
  }
  return *format;
}

}  // namespace ember::models
