// libFuzzer target for the safetensors reader (ember_fuzzer, base/fuzzer.bzl). For any
// bytes, ParseSafetensors returns a Status and never reads outside them or crashes;
// what it accepts, SaveSafetensors writes and LoadSafetensors reads back to the same
// names, dtypes, shapes, bytes and metadata.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/fuzz_input.h"
#include "nn/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::FuzzCheck;
  const absl::StatusOr<ember::nn::Safetensors> parsed =
      ember::nn::ParseSafetensors(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!parsed.ok()) {
    FuzzCheck(
        parsed.status().code() == absl::StatusCode::kInvalidArgument,
        absl::StrCat("a malformed file is not InvalidArgument: ", parsed.status().ToString()));
    return 0;
  }
  const std::string path = ember::FuzzInputFile("rewritten.safetensors", "");
  const absl::Status saved = ember::nn::SaveSafetensors(path, parsed->tensors, parsed->metadata);
  FuzzCheck(saved.ok(), absl::StrCat("what was read cannot be written: ", saved.ToString()));
  const absl::StatusOr<ember::nn::Safetensors> back = ember::nn::LoadSafetensors(path);
  FuzzCheck(back.ok(), absl::StrCat("what was written cannot be read: ", back.status().ToString()));
  FuzzCheck(back->metadata == parsed->metadata, "the metadata changed");
  FuzzCheck(back->tensors.size() == parsed->tensors.size(), "the tensors changed");
  for (const auto& [name, t] : parsed->tensors) {
    const auto it = back->tensors.find(name);
    FuzzCheck(it != back->tensors.end(), "tensor '" + name + "' was lost");
    const ember::Tensor& u = it->second;
    FuzzCheck(u.dtype() == t.dtype() && u.shape() == t.shape(),
              "tensor '" + name + "' changed dtype or shape");
    const size_t bytes = static_cast<size_t>(t.numel() * t.itemsize());
    FuzzCheck(bytes == 0 || std::memcmp(u.raw_data(), t.raw_data(), bytes) == 0,
              "tensor '" + name + "' changed");
  }
  return 0;
}
