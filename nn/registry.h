#ifndef EMBER_NN_REGISTRY_H_
#define EMBER_NN_REGISTRY_H_

// Layers by name, so that a model can be described in data (nn/network_json.h) and tried
// without recompiling. Each layer registers its PyTorch class name and a factory that
// reads PyTorch's constructor arguments, beside its own code:
//
//   EMBER_REGISTER_LAYER(Linear, [](const LayerArgs& args) -> LayerOr {
//     ASSIGN_OR_RETURN(const int64_t in, args.Int("in_features"));
//     ...
//   });
//
// (the library that holds registrations is alwayslink, so they survive linking).

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"
#include "nn/module.h"
#include "tensor/random.h"

namespace ember::nn {

// One layer's arguments (a JSON object) with typed, checked reads: a missing required
// key or a value of the wrong type is an InvalidArgument naming the key.
class LayerArgs {
 public:
  // `budget`: the parameters the spec's layers so far have left (kMaxParameters at first).
  LayerArgs(const nlohmann::json& args, Generator& gen, int64_t budget = kMaxParameters);

  absl::StatusOr<int64_t> Int(const std::string& key) const;
  absl::StatusOr<int64_t> Int(const std::string& key, int64_t fallback) const;
  absl::StatusOr<double> Float(const std::string& key, double fallback) const;
  absl::StatusOr<bool> Bool(const std::string& key, bool fallback) const;
  absl::StatusOr<std::string> String(const std::string& key, const std::string& fallback) const;
  // n for (n, n), or [h, w], as PyTorch's kernel_size, stride, padding.
  absl::StatusOr<std::array<int64_t, 2>> Pair(const std::string& key) const;
  absl::StatusOr<std::array<int64_t, 2>> Pair(const std::string& key,
                                              std::array<int64_t, 2> fallback) const;

  // The most parameters a spec's layers may have together: 2^28 = 268,435,456 (1 GiB of
  // float32; GPT-2 XL's largest matrix has 80M).
  static constexpr int64_t kMaxParameters = int64_t{1} << 28;
  // InvalidArgument unless a weight of shape `dims` fits the budget the spec has left.
  // Factories call it before building the layer, so that a typo such as "in_features":
  // 78400000 is an error naming the layer, not an out-of-memory kill. Non-positive sizes
  // are left to the layer's own check.
  absl::Status CheckParameters(std::initializer_list<int64_t> dims) const;

  // The generator that initialises parameters.
  Generator& gen() const { return *gen_; }
  // Keys other than "type" given but never read by the factory (misspelt or
  // unsupported arguments).
  std::vector<std::string> Unread() const;

 private:
  const nlohmann::json* Find(const std::string& key) const;

  const nlohmann::json& args_;
  Generator* gen_;
  int64_t budget_;
  mutable std::set<std::string> read_;
};

using LayerOr = absl::StatusOr<std::shared_ptr<Module>>;
using LayerFactory = std::function<LayerOr(const LayerArgs&)>;

// What a layer's arguments say of its sizes (the last dimension of its input and of its
// output), so that a network spec (nn/network_json.h) refuses a mismatch when it is built.
struct LayerSizes {
  // The output's size is the input's; `input`, if given, is the argument the input's
  // size must equal ("normalized_shape").
  static LayerSizes Same(std::string input = "") { return {std::move(input), "", true}; }
  // The input's size must equal argument `input` (none: not checked), the output's is
  // argument `output` ("in_features", "out_features").
  static LayerSizes From(std::string input, std::string output) {
    return {std::move(input), std::move(output), false};
  }

  std::string input, output;
  bool same = false;  // neither Same nor From: the output's size is not known
};

struct RegisteredLayer {
  LayerFactory factory;
  LayerSizes sizes;
};

// Registers `factory` under `type`; returns true (for EMBER_REGISTER_LAYER). A name
// registered twice is a programming error (ember::Error at start-up).
bool RegisterLayer(const std::string& type, LayerFactory factory, LayerSizes sizes = {});

// The layer registered under `type`, or null.
const RegisteredLayer* FindLayer(const std::string& type);

// Every registered name, sorted.
std::vector<std::string> RegisteredLayers();

// EMBER_REGISTER_LAYER(type, factory) or EMBER_REGISTER_LAYER(type, factory, sizes).
#define EMBER_REGISTER_LAYER(type, ...) \
  static const bool ember_layer_registered_##type = ::ember::nn::RegisterLayer(#type, __VA_ARGS__)

// An initialisation a network spec can ask for by name ("init": "gpt2"): given the
// network with its parameters declared, it sets their initialisers
// (Module::SetInitializer), which are then drawn in the parameters' order.
using InitScheme = std::function<void(Module&)>;

// Registers `scheme` under `name`; returns true. A name registered twice is a
// programming error.
bool RegisterInitScheme(const std::string& name, InitScheme scheme);

// The scheme registered under `name`, or null.
const InitScheme* FindInitScheme(const std::string& name);

// Every registered scheme's name, sorted.
std::vector<std::string> RegisteredInitSchemes();

#define EMBER_REGISTER_INIT_SCHEME(name, scheme) \
  static const bool ember_init_registered_##name = ::ember::nn::RegisterInitScheme(#name, scheme)

}  // namespace ember::nn

#endif  // EMBER_NN_REGISTRY_H_
