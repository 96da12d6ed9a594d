#include "models/gpt2/weights.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "data/datasets.h"
#include "nlohmann/json.hpp"
#include "nn/safetensors.h"

namespace ember::models::gpt2 {
namespace {

constexpr int32_t kLlmcMagic = 20240326;

absl::StatusOr<Weights> ReadEmber(nn::Safetensors file, const std::string& path) {
  Weights w;
  w.format = "ember";
  if (const auto spec = file.metadata.find("spec"); spec != file.metadata.end()) {
    w.spec = spec->second;
  } else {
    ASSIGN_OR_RETURN(w.config, ParseConfigJson(file.metadata["config"], path));
  }
  w.metadata = std::move(file.metadata);
  constexpr size_t kPrefix = sizeof(kOptimizerPrefix) - 1;
  for (auto& [name, t] : file.tensors) {
    if (name.compare(0, kPrefix, kOptimizerPrefix) == 0) {
      w.optimizer[name.substr(kPrefix)] = t;
    } else {
      w.state[name] = t.To(DType::kF32);
    }
  }
  return w;
}

// The names of GPT(config)'s parameters in llm.c's file order, with their shapes.
std::vector<std::pair<std::string, Shape>> LlmcOrder(const GPTConfig& c, int64_t padded_vocab) {
  const int64_t C = c.n_embd;
  std::vector<std::pair<std::string, Shape>> order = {{"wte.weight", {padded_vocab, C}},
                                                      {"wpe.weight", {c.block_size, C}}};
  const std::vector<std::pair<std::string, Shape>> kinds = {{"ln_1.weight", {C}},
                                                            {"ln_1.bias", {C}},
                                                            {"attn.c_attn.weight", {3 * C, C}},
                                                            {"attn.c_attn.bias", {3 * C}},
                                                            {"attn.c_proj.weight", {C, C}},
                                                            {"attn.c_proj.bias", {C}},
                                                            {"ln_2.weight", {C}},
                                                            {"ln_2.bias", {C}},
                                                            {"mlp.c_fc.weight", {4 * C, C}},
                                                            {"mlp.c_fc.bias", {4 * C}},
                                                            {"mlp.c_proj.weight", {C, 4 * C}},
                                                            {"mlp.c_proj.bias", {C}}};
  for (const auto& [kind, shape] : kinds) {
    for (int64_t i = 0; i < c.n_layer; ++i)
      order.emplace_back(absl::StrCat("h.", i, ".", kind), shape);
  }
  order.emplace_back("ln_f.weight", Shape{C});
  order.emplace_back("ln_f.bias", Shape{C});
  return order;
}

absl::StatusOr<Weights> ReadLlmc(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const int64_t size = static_cast<int64_t>(std::filesystem::file_size(path));
  int32_t h[256];
  if (!in.read(reinterpret_cast<char*>(h), sizeof(h))) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", size, " bytes, shorter than llm.c's 1024-byte header"));
  }
  if (h[1] != 3 && h[1] != 5) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": llm.c checkpoint version ", h[1],
                                                   " (expected 3, float32, or 5, bfloat16)"));
  }
  GPTConfig c;
  c.block_size = h[2], c.vocab_size = h[3], c.n_layer = h[4], c.n_head = h[5], c.n_embd = h[6];
  const int64_t padded = h[7];
  if (absl::Status s = c.Validate(); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
  if (padded < c.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": padded vocabulary ", padded, " is smaller than the vocabulary ", c.vocab_size));
  }
  const DType dtype = h[1] == 3 ? DType::kF32 : DType::kBF16;
  // The size the header promises, against the file's before anything is allocated (in
  // 128 bits: a hostile header cannot overflow it).
  const __int128 expected =
      sizeof(h) + (static_cast<__int128>(c.NumParameters()) + (padded - c.vocab_size) * c.n_embd) *
                      ItemSize(dtype);
  if (size != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", size, " bytes, but its header (", c.ToString(), ", ",
                     DTypeName(dtype), ") needs ",
                     expected > INT64_MAX ? std::string("more than 2^63")
                                          : absl::StrCat(static_cast<int64_t>(expected))));
  }
  const auto order = LlmcOrder(c, padded);
  Weights w{c, {}, "llm.c", {}, {}, {}};
  for (const auto& [name, shape] : order) {
    Tensor t = Empty(shape, dtype);
    if (!in.read(static_cast<char*>(t.raw_data()),
                 static_cast<std::streamsize>(t.numel() * t.itemsize()))) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read ", name));
    }
    t = t.To(DType::kF32);
    w.state[name] = name == "wte.weight" ? t.Slice(0, 0, c.vocab_size).Contiguous() : t;
  }
  return w;
}

absl::StatusOr<Weights> ReadHuggingFace(const nn::Safetensors& file,
                                        const std::string& safetensors_path,
                                        const std::string& config_path) {
  absl::StatusOr<std::string> text = data::ReadUtf8File(config_path);
  if (!text.ok())
    return absl::NotFoundError(
        absl::StrCat(text.status().message(), " (a Hugging Face GPT-2 needs config.json)"));
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  GPTConfig c;
  try {
    c.vocab_size = j.at("vocab_size"), c.n_layer = j.at("n_layer"), c.n_head = j.at("n_head");
    c.n_embd = j.at("n_embd"),
    c.block_size = j.contains("n_positions") ? j.at("n_positions") : j.at("n_ctx");
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(config_path, ": not a GPT-2 config: ", e.what()));
  }
  if (absl::Status s = c.Validate(); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(config_path, ": ", s.message()));
  Weights w{c, {}, "huggingface", {}, {}, {}};
  for (const auto& [full_name, t] : file.tensors) {
    std::string name = full_name.rfind("transformer.", 0) == 0 ? full_name.substr(12) : full_name;
    const auto ends_with = [&](const std::string& suffix) {
      return name.size() >= suffix.size() &&
             name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (name == "lm_head.weight" || ends_with(".attn.bias") || ends_with(".attn.masked_bias"))
      continue;
    const bool conv1d = ends_with(".attn.c_attn.weight") || ends_with(".attn.c_proj.weight") ||
                        ends_with(".mlp.c_fc.weight") || ends_with(".mlp.c_proj.weight");
    if (conv1d && t.dim() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(safetensors_path, ": ", full_name,
                                                     " has shape ", ShapeToString(t.shape()),
                                                     ", not a matrix"));
    }
    w.state[name] = conv1d ? t.Transpose(0, 1).To(DType::kF32).Contiguous() : t.To(DType::kF32);
  }
  return w;
}

}  // namespace

std::string ConfigJson(const GPTConfig& c) {
  nlohmann::json j{{"vocab_size", c.vocab_size}, {"block_size", c.block_size},
                   {"n_layer", c.n_layer},       {"n_head", c.n_head},
                   {"n_embd", c.n_embd},         {"dropout", c.dropout}};
  if (c.attn_dropout > 0) j["attn_dropout"] = c.attn_dropout;  // older readers need not know it
  return j.dump();
}

absl::StatusOr<GPTConfig> ParseConfigJson(const std::string& text, const std::string& path) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  GPTConfig c;
  try {
    c.vocab_size = j.at("vocab_size"), c.block_size = j.at("block_size"),
    c.n_layer = j.at("n_layer");
    c.n_head = j.at("n_head"), c.n_embd = j.at("n_embd"), c.dropout = j.at("dropout");
    if (j.contains("attn_dropout")) c.attn_dropout = j.at("attn_dropout");
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the checkpoint's config is malformed: ", e.what()));
  }
  if (absl::Status s = c.Validate(); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", s.message()));
  return c;
}

absl::StatusOr<Weights> ReadWeights(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::is_directory(path, error)) {
    const std::string safetensors_path = (fs::path(path) / "model.safetensors").string();
    ASSIGN_OR_RETURN(nn::Safetensors file, nn::LoadSafetensors(safetensors_path));
    return ReadHuggingFace(file, safetensors_path, (fs::path(path) / "config.json").string());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  int32_t magic = 0;
  in.read(reinterpret_cast<char*>(&magic), sizeof(magic));
  if (in && magic == kLlmcMagic) return ReadLlmc(path);
  absl::StatusOr<nn::Safetensors> file = nn::LoadSafetensors(path);
  if (!file.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is neither an llm.c checkpoint (magic ",
                                                   kLlmcMagic,
                                                   ") nor safetensors: ", file.status().message()));
  }
  const std::string& format = file->metadata["format"];
  if (format == kCheckpointFormat) return ReadEmber(*std::move(file), path);
  if (absl::StartsWith(format,
                       "ember-")) {  // another trainer's checkpoint, not a Hugging Face file
    return absl::InvalidArgumentError(absl::StrCat(
        path, " is a checkpoint of another model (its format is \"", format, "\"), not of GPT-2"));
  }
  return ReadHuggingFace(*file, path, (fs::path(path).parent_path() / "config.json").string());
}

absl::StatusOr<std::unique_ptr<GPT>> LoadGpt(const std::string& path) {
  ASSIGN_OR_RETURN(Weights w, ReadWeights(path));
  return GptFromWeights(std::move(w), path);
}

absl::StatusOr<std::unique_ptr<GPT>> GptFromWeights(Weights w, const std::string& path) {
  if (!w.spec.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        " holds the weights of a network spec that train --model=<spec>.json trained, not a "
        "GPT-2 config: generate and chat run GPT-2's"));
  }
  w.config.dropout = 0;
  w.config.attn_dropout = 0;
  // A config that asks for more parameters than the file holds is refused before the
  // model takes its memory.
  int64_t held = 0;
  for (const auto& [name, t] : w.state) held += t.numel();
  if (w.config.NumParameters() > held) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " (", w.format, "): its config (", w.config.ToString(), ") has ",
                     w.config.NumParameters(), " parameters, the file holds ", held));
  }
  // Declared without memory, then made uninitialised: the checkpoint's values replace
  // every parameter (LoadStateDict is strict), so nothing is drawn only to be overwritten.
  std::unique_ptr<GPT> model;
  {
    const nn::MetaDeviceGuard meta;
    model = std::make_unique<GPT>(w.config);
  }
  nn::ToEmpty(*model, Device::Cpu());
  model->PadVocabulary();
  if (absl::Status s = model->LoadStateDict(w.state); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, " (", w.format, "): ", s.message()));
  }
  return model;
}

}  // namespace ember::models::gpt2
