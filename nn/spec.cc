#include "nn/spec.h"

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "nlohmann/json.hpp"
#include "nn/registry.h"

namespace ember::nn {

absl::StatusOr<std::shared_ptr<Sequential>> SequentialFromJson(absl::string_view text,
                                                               Generator& gen) {
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(text.begin(), text.end());
  } catch (
      const nlohmann::json::exception& e) {  // parse_error, or out_of_range: a number past a double
    return absl::InvalidArgumentError(absl::StrCat("model spec is not valid JSON: ", e.what()));
  }
  if (!spec.is_object() || !spec.contains("layers") || !spec["layers"].is_array() ||
      spec.size() != 1) {
    return absl::InvalidArgumentError(
        "model spec must be an object {\"layers\": [{\"type\": ...}, ...]} and nothing else");
  }
  auto model = std::make_shared<Sequential>();
  int64_t budget = LayerArgs::kMaxParameters;  // parameters the layers may still have
  const nlohmann::json& layers = spec["layers"];
  for (size_t i = 0; i < layers.size(); ++i) {
    const nlohmann::json& layer = layers[i];
    const std::string where = absl::StrCat("model spec layer ", i);
    if (!layer.is_object() || !layer.contains("type") || !layer["type"].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " must be an object with a \"type\", got ", layer.dump()));
    }
    const std::string type = layer["type"].get<std::string>();
    const LayerFactory* factory = FindLayer(type);
    if (factory == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown type \"", type,
                       "\" (known: ", absl::StrJoin(RegisteredLayers(), ", "), ")"));
    }
    const LayerArgs args(layer, gen, budget);
    LayerOr built = absl::InternalError("");
    try {
      built = (*factory)(args);
    } catch (const Error& e) {  // a value the layer's constructor refuses
      built = absl::InvalidArgumentError(e.what());
    }
    if (!built.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, " (", type, "): ", built.status().message()));
    }
    if (const std::vector<std::string> unread = args.Unread(); !unread.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " (", type, "): unknown argument \"",
                                                     absl::StrJoin(unread, "\", \""), "\""));
    }
    budget -= (*built)->NumParameters();  // a layer's bias is not in its CheckParameters
    if (budget < 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, " (", type,
                                                     "): the spec has more than ",
                                                     LayerArgs::kMaxParameters, " parameters"));
    }
    model->Append(*std::move(built));
  }
  return model;
}

absl::StatusOr<std::shared_ptr<Sequential>> SequentialFromJsonFile(const std::string& path,
                                                                   Generator& gen) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open model spec ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::shared_ptr<Sequential>> model = SequentialFromJson(text.str(), gen);
  if (!model.ok())
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", model.status().message()));
  return model;
}

}  // namespace ember::nn
