// libFuzzer target for model specs (nn/network_json.h; ember_fuzzer, base/fuzzer.bzl). For any
// bytes, ModelFromJson (a chain, or a network of named layers) builds a model or returns
// InvalidArgument, never crashes or throws, and a model it builds has at most the 2^28 parameters a
// spec may have. Specs with a number past 4,096 are left to network_json_test: valid ones build
// weights of up to a gigabyte, seconds each under the sanitizers.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/fuzz_input.h"
#include "nlohmann/json.hpp"
#include "nn/network_json.h"
#include "nn/registry.h"
#include "tensor/random.h"

namespace {

bool HasLargeNumber(const nlohmann::json& j) {
  if (j.is_number()) return !(j.get<double>() >= -4096 && j.get<double>() <= 4096);  // NaN too
  if (!j.is_structured()) return false;  // (iterating a string or a bool gives itself)
  for (const auto& item : j) {
    if (HasLargeNumber(item)) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::FuzzCheck;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_discarded() && HasLargeNumber(parsed)) return 0;
  ember::Generator gen(1);
  const auto model = ember::nn::ModelFromJson(text, gen);
  if (!model.ok()) {
    FuzzCheck(model.status().code() == absl::StatusCode::kInvalidArgument,
              absl::StrCat("a bad spec is not InvalidArgument: ", model.status().ToString()));
    return 0;
  }
  FuzzCheck((*model)->NumParameters() <= ember::nn::LayerArgs::kMaxParameters,
            "a spec past the parameter limit");
  return 0;
}
