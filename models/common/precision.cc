#include "models/common/precision.h"

#include "absl/strings/str_cat.h"

namespace ember::models {

absl::StatusOr<DType> ComputeDTypeFromFlag(const std::string& flag, Device device) {
  if (flag == "auto") return device.is_cpu() ? DType::kF32 : DType::kBF16;
  if (flag == "f32") return DType::kF32;
  if (flag == "bf16") return DType::kBF16;
  return absl::InvalidArgumentError(absl::StrCat("--dtype=", flag, ": expected f32, bf16 or auto"));
}

}  // namespace ember::models
