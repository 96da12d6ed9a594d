// The C++ side of the safetensors interoperability test (safetensors_interop_test.sh):
//   safetensors_interop write FILE   writes the fixed tensors of
//                                    safetensors_interop.py through ember
//   safetensors_interop dump FILE    reads FILE through ember and prints it in that
//                                    script's text form
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/main.h"
#include "base/status.h"
#include "nn/safetensors.h"
#include "tensor/creation.h"

namespace ember::nn {
namespace {

template <typename T>
Tensor Make(const std::vector<T>& values, IntSpan shape) {
  return FromVector<T>(values, shape);
}

std::map<std::string, Tensor> FixedTensors() {
  // 16-bit floats given by their bits: a u16 tensor's storage read as `dtype`.
  auto bits16 = [](const std::vector<uint16_t>& bits, DType dtype) {
    const int64_t n = static_cast<int64_t>(bits.size());
    return Tensor(FromVector<uint16_t>(bits).storage(), 0, {n}, {1}, dtype);
  };
  std::vector<float> weight;
  for (int i = 0; i < 6; ++i) weight.push_back(i * 0.25f - 0.5f);
  return {
      {"weight", Make<float>(weight, {2, 3})},
      {"bias", Make<double>({0.0, 1.0 / 3, 2.0 / 3}, {3})},
      {"ids", Make<int64_t>({-2, 0, 7, int64_t{1} << 40}, {4})},
      {"counts", Make<int32_t>({-5}, {})},
      {"half", bits16({0x3c00, 0xc000}, DType::kF16)},
      {"brain", bits16({0x3f80, 0x4049, 0}, DType::kBF16)},
      {"mask", Make<bool>({true, false, false, true}, {2, 2})},
      {"bytes", Make<uint8_t>({0, 1, 127, 128, 255}, {5})},
      {"words", Make<uint16_t>({65535}, {1})},
      {"empty", Make<float>({}, {0, 3})},
  };
}

std::string Value(const Tensor& t, int64_t i) {
  const void* p = t.raw_data();
  switch (t.dtype()) {
    case DType::kF32:
      return absl::StrFormat("%.9g", static_cast<const float*>(p)[i]);
    case DType::kF64:
      return absl::StrFormat("%.17g", static_cast<const double*>(p)[i]);
    case DType::kF16:
    case DType::kBF16:
    case DType::kU16:
      return absl::StrCat(static_cast<const uint16_t*>(p)[i]);
    case DType::kI32:
      return absl::StrCat(static_cast<const int32_t*>(p)[i]);
    case DType::kI64:
      return absl::StrCat(static_cast<const int64_t*>(p)[i]);
    case DType::kU8:
      return absl::StrCat(static_cast<const uint8_t*>(p)[i]);
    case DType::kBool:
      return static_cast<const bool*>(p)[i] ? "1" : "0";
  }
  return "?";
}

absl::Status Run(const std::vector<std::string>& arguments) {
  const std::string mode = arguments.size() == 2 ? arguments[0] : "";
  if (mode == "write") {
    return SaveSafetensors(arguments[1], FixedTensors(), {{"format", "pt"}, {"note", "caf\u00e9"}});
  }
  if (mode != "dump")
    return absl::InvalidArgumentError("usage: safetensors_interop write|dump FILE");
  ASSIGN_OR_RETURN(const Safetensors file, LoadSafetensors(arguments[1]));
  for (const auto& [key, value] : file.metadata)
    std::cout << "metadata " << key << "=" << value << "\n";
  for (const auto& [name, t] : file.tensors) {
    std::vector<std::string> values;
    for (int64_t i = 0; i < t.numel(); ++i) values.push_back(Value(t, i));
    std::cout << name << " " << SafetensorsDTypeName(t.dtype()) << " ["
              << absl::StrJoin(t.shape(), ",") << "] " << absl::StrJoin(values, " ") << "\n";
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::nn

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "safetensors_interop", "safetensors_interop write|dump FILE",
                        ember::nn::Run);
}
