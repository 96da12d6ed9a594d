// libFuzzer target for GPT-2's checkpoint readers (ember_fuzzer, base/fuzzer.bzl). The
// first byte picks the layout: even, the rest is one file (llm.c's .bin, or ember's
// safetensors with its config in the metadata); odd, a Hugging Face folder:
// config.json, a NUL byte, then model.safetensors. For any bytes, ReadWeights and
// GptFromWeights return a model or an error status (never a crash, never memory the
// file does not justify: a config promising more parameters than the file holds is
// refused first), and a model they return runs a forward pass.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/fuzz_input.h"
#include "models/gpt2/weights.h"
#include "tensor/creation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ember::FuzzCheck;
  namespace g = ember::models::gpt2;
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string path;
  if (data[0] % 2 == 0) {
    path = ember::FuzzInputFile("checkpoint.bin", rest);
  } else {
    const size_t nul = rest.find('\0');
    const std::string config = rest.substr(0, nul),
                      model = nul == std::string::npos ? "" : rest.substr(nul + 1);
    const std::filesystem::path file = ember::FuzzInputFile("hf_config.json", config);
    path = (file.parent_path() / file.filename().string().append(".dir")).string();
    std::filesystem::create_directories(path);
    std::filesystem::rename(file, path + "/config.json");
    std::filesystem::rename(ember::FuzzInputFile("hf_model.safetensors", model),
                            path + "/model.safetensors");
  }
  absl::StatusOr<g::Weights> weights = g::ReadWeights(path);
  if (!weights.ok()) {
    FuzzCheck(weights.status().code() == absl::StatusCode::kInvalidArgument ||
                  weights.status().code() == absl::StatusCode::kNotFound,
              absl::StrCat("an unreadable checkpoint gives ", weights.status().ToString()));
    return 0;
  }
  const absl::StatusOr<std::unique_ptr<g::GPT>> model =
      g::GptFromWeights(*std::move(weights), path);
  if (!model.ok()) {
    FuzzCheck(model.status().code() == absl::StatusCode::kInvalidArgument,
              absl::StrCat("a checkpoint that is not a model gives ", model.status().ToString()));
    return 0;
  }
  const g::GPTConfig& c = (*model)->config();
  const int64_t t = std::min<int64_t>(2, c.block_size);
  const ember::Tensor logits = (*model)->Forward(
      ember::FromVector(std::vector<int64_t>{0, c.vocab_size - 1}).Narrow(0, 0, t).Reshape({1, t}));
  FuzzCheck(logits.shape() == ember::Shape({1, t, c.vocab_size}), "the logits' shape");
  return 0;
}
