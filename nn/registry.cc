#include "nn/registry.h"

#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"
#include "nlohmann/json.hpp"

namespace ember::nn {
namespace {

std::map<std::string, RegisteredLayer>& Registry() {
  static auto* registry = new std::map<std::string, RegisteredLayer>();
  return *registry;
}

std::map<std::string, InitScheme>& Schemes() {
  static auto* schemes = new std::map<std::string, InitScheme>();
  return *schemes;
}

absl::Status WrongType(const std::string& key, const nlohmann::json& value, const char* expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("argument \"", key, "\" is ", value.dump(), ", expected ", expected));
}

}  // namespace

LayerArgs::LayerArgs(const nlohmann::json& args, Generator& gen, int64_t budget)
    : args_(args), gen_(&gen), budget_(budget) {}

const nlohmann::json* LayerArgs::Find(const std::string& key) const {
  read_.insert(key);
  const auto it = args_.find(key);
  return it == args_.end() ? nullptr : &*it;
}

absl::StatusOr<int64_t> LayerArgs::Int(const std::string& key) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("missing argument \"", key, "\""));
  if (!value->is_number_integer()) return WrongType(key, *value, "an integer");
  return value->get<int64_t>();
}

absl::Status LayerArgs::CheckParameters(std::initializer_list<int64_t> dims) const {
  int64_t count = 1;
  for (const int64_t d : dims) {
    if (d <= 0) return absl::OkStatus();
    if (count > budget_ / d) {  // count * d > budget_, without overflowing
      return absl::InvalidArgumentError(
          absl::StrCat("a weight of shape [", absl::StrJoin(dims, ", "), "] has more than the ",
                       budget_, " parameters left of the ", kMaxParameters, " a spec may have"));
    }
    count *= d;
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> LayerArgs::Int(const std::string& key, int64_t fallback) const {
  return Find(key) == nullptr ? absl::StatusOr<int64_t>(fallback) : Int(key);
}

absl::StatusOr<double> LayerArgs::Float(const std::string& key, double fallback) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_number()) return WrongType(key, *value, "a number");
  return value->get<double>();
}

absl::StatusOr<bool> LayerArgs::Bool(const std::string& key, bool fallback) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) return WrongType(key, *value, "true or false");
  return value->get<bool>();
}

absl::StatusOr<std::string> LayerArgs::String(const std::string& key,
                                              const std::string& fallback) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_string()) return WrongType(key, *value, "a string");
  return value->get<std::string>();
}

absl::StatusOr<std::array<int64_t, 2>> LayerArgs::Pair(const std::string& key) const {
  const nlohmann::json* value = Find(key);
  if (value == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("missing argument \"", key, "\""));
  if (value->is_number_integer())
    return std::array<int64_t, 2>{value->get<int64_t>(), value->get<int64_t>()};
  if (value->is_array() && value->size() == 2 && (*value)[0].is_number_integer() &&
      (*value)[1].is_number_integer()) {
    return std::array<int64_t, 2>{(*value)[0].get<int64_t>(), (*value)[1].get<int64_t>()};
  }
  return WrongType(key, *value, "an integer or a pair [height, width]");
}

absl::StatusOr<std::array<int64_t, 2>> LayerArgs::Pair(const std::string& key,
                                                       std::array<int64_t, 2> fallback) const {
  return Find(key) == nullptr ? absl::StatusOr<std::array<int64_t, 2>>(fallback) : Pair(key);
}

std::vector<std::string> LayerArgs::Unread() const {
  std::vector<std::string> unread;
  for (const auto& [key, value] : args_.items()) {
    if (key != "type" && !read_.count(key)) unread.push_back(key);
  }
  return unread;
}

bool RegisterLayer(const std::string& type, LayerFactory factory, LayerSizes sizes) {
  EMBER_CHECK(
      Registry().emplace(type, RegisteredLayer{std::move(factory), std::move(sizes)}).second,
      "layer \"", type, "\" is registered twice");
  return true;
}

const RegisteredLayer* FindLayer(const std::string& type) {
  const auto it = Registry().find(type);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> RegisteredLayers() {
  std::vector<std::string> names;
  for (const auto& [name, layer] : Registry()) names.push_back(name);
  return names;
}

bool RegisterInitScheme(const std::string& name, InitScheme scheme) {
  EMBER_CHECK(Schemes().emplace(name, std::move(scheme)).second, "initialisation \"", name,
              "\" is registered twice");
  return true;
}

const InitScheme* FindInitScheme(const std::string& name) {
  const auto it = Schemes().find(name);
  return it == Schemes().end() ? nullptr : &it->second;
}

std::vector<std::string> RegisteredInitSchemes() {
  std::vector<std::string> names;
  for (const auto& [name, scheme] : Schemes()) names.push_back(name);
  return names;
}

}  // namespace ember::nn
