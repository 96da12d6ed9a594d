#include "nn/network_json.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "base/status.h"
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
    const RegisteredLayer* registered = FindLayer(type);
    if (registered == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": unknown type \"", type,
                       "\" (known: ", absl::StrJoin(RegisteredLayers(), ", "), ")"));
    }
    const LayerArgs args(layer, gen, budget);
    LayerOr built = absl::InternalError("");
    try {
      built = registered->factory(args);
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

namespace {

// Paddle's fully connected layer over several inputs: y = sum_k x_k W_k^T + b.
class FullyConnected : public Module {
 public:
  FullyConnected(const std::vector<int64_t>& in_sizes, int64_t size, bool bias, Generator& gen)
      : in_sizes_(in_sizes), size_(size) {
    for (size_t k = 0; k < in_sizes.size(); ++k) {
      // nn.Linear's initialisation for each input's matrix.
      const double bound = 1 / std::sqrt(static_cast<double>(in_sizes[k]));
      weights_.push_back(RegisterParameter(
          absl::StrCat("weight_", k),
          {{size, in_sizes[k]}, DType::kF32, Initializer::Uniform(-bound, bound), {}}, gen));
    }
    if (bias) {
      const double bound = 1 / std::sqrt(static_cast<double>(in_sizes.front()));
      bias_ = RegisterParameter(
          "bias", {{size}, DType::kF32, Initializer::Uniform(-bound, bound), {}}, gen);
    }
  }
  Tensor Forward(const Tensor& x) override { return Forward(std::vector<Tensor>{x}); }
  Tensor Forward(const std::vector<Tensor>& xs) {
    Tensor y;
    for (size_t k = 0; k < xs.size(); ++k) {
      const Tensor term = autograd::Linear(xs[k], weights_[k], k == 0 ? bias_ : Tensor());
      y = k == 0 ? term : autograd::Add(y, term);
    }
    return y;
  }
  std::string ToString() const override {
    return absl::StrCat("FullyConnected(in_sizes=[", absl::StrJoin(in_sizes_, ", "),
                        "], size=", size_, ", bias=", bias_.defined() ? "True" : "False", ")");
  }

 private:
  std::vector<int64_t> in_sizes_;
  int64_t size_;
  std::vector<Tensor> weights_;
  Tensor bias_;
};

// The network GraphFromJson builds: its layers in an order where each comes after its
// inputs.
class GraphNet : public Module {
 public:
  struct Node {
    std::string name, type, activation;
    std::vector<std::string> inputs;
    std::shared_ptr<Module> layer;  // null for Add, Concat and TiedLinear
    std::shared_ptr<Module> tied;   // TiedLinear's: the layer whose weight it uses
  };
  GraphNet(std::vector<Node> nodes, std::string output)
      : nodes_(std::move(nodes)), output_(std::move(output)) {
    for (const Node& n : nodes_) {
      if (n.layer) RegisterModule(n.name, n.layer);
    }
  }

  Tensor Forward(const Tensor& x) override {
    std::map<std::string, Tensor> values = {{"input", x}};
    for (const Node& n : nodes_) {
      std::vector<Tensor> in;
      for (const std::string& name : n.inputs) in.push_back(values.at(name));
      Tensor y;
      try {
        if (n.type == "Add") {
          y = in[0];
          for (size_t k = 1; k < in.size(); ++k) y = autograd::Add(y, in[k]);
        } else if (n.type == "Concat") {
          y = autograd::Cat(in, -1);
        } else if (n.type == "FullyConnected") {
          y = static_cast<FullyConnected&>(*n.layer).Forward(in);
        } else if (n.type == "TiedLinear") {
          y = autograd::Linear(in[0], WeightOf(*n.tied), Tensor());
        } else {
          y = (*n.layer)(in[0]);
        }
        y = Activate(n.activation, y);
      } catch (const Error& e) {  // a shape the spec could not check: say which layer
        EMBER_THROW("layer ", n.name, " (", n.type, "): ", e.what());
      }
      values[n.name] = y;
    }
    return values.at(output_);
  }
  std::string ToString() const override {
    std::vector<std::string> lines;
    for (const Node& n : nodes_) {
      const std::string what = n.layer  ? n.layer->ToString()
                               : n.tied ? absl::StrCat("TiedLinear(", n.tied->ToString(), ")")
                                        : n.type;
      lines.push_back(absl::StrCat("  (", n.name, "): ", what, " <- ",
                                   absl::StrJoin(n.inputs, ", "),
                                   n.activation.empty() ? "" : absl::StrCat(", ", n.activation)));
    }
    return absl::StrCat("Graph(\n", absl::StrJoin(lines, "\n"), "\n) -> ", output_);
  }

  std::vector<const Module*> TiedLayers() const {
    std::vector<const Module*> tied;
    for (const Node& n : nodes_) {
      if (n.tied) tied.push_back(n.tied.get());
    }
    return tied;
  }

  // A layer's parameter "weight" (undefined if it has none).
  static Tensor WeightOf(const Module& layer) {
    for (const auto& [name, p] : layer.NamedParameters()) {
      if (name == "weight") return p;
    }
    return Tensor();
  }

  static Tensor Activate(const std::string& name, const Tensor& x) {
    if (name.empty()) return x;
    if (name == "relu") return autograd::Relu(x);
    if (name == "tanh") return autograd::Tanh(x);
    if (name == "sigmoid") return autograd::Sigmoid(x);
    if (name == "gelu") return autograd::GeluErf(x);  // PyTorch's default, exact
    return autograd::Mul(x, autograd::Sigmoid(x));    // "silu", checked when built
  }

 private:
  std::vector<Node> nodes_;
  std::string output_;
};

}  // namespace

namespace {

// The spec's top level: an object of "layers" (a non-empty list), and optionally
// "output", "input_size" and "init"; returns the initialisation scheme (null: each
// layer's own).
absl::StatusOr<const InitScheme*> ReadTopLevel(const nlohmann::json& spec) {
  if (!spec.is_object() || !spec.contains("layers") || !spec["layers"].is_array() ||
      spec["layers"].empty()) {
    return absl::InvalidArgumentError(
        "network spec must be an object {\"layers\": [{\"name\": ..., \"type\": ...}, ...]}");
  }
  for (const auto& [key, value] : spec.items()) {
    if (key != "layers" && key != "output" && key != "input_size" && key != "init") {
      return absl::InvalidArgumentError(absl::StrCat("network spec: unknown key \"", key, "\""));
    }
  }
  if ((spec.contains("output") && !spec["output"].is_string()) ||
      (spec.contains("input_size") && !spec["input_size"].is_number_integer())) {
    return absl::InvalidArgumentError(
        "network spec: \"output\" must be a layer's name and \"input_size\" an integer");
  }
  const InitScheme* scheme = nullptr;
  if (spec.contains("init")) {
    if (spec["init"].is_string()) scheme = FindInitScheme(spec["init"]);
    if (scheme == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("network spec: unknown \"init\" ", spec["init"].dump(),
                       " (known: ", absl::StrJoin(RegisteredInitSchemes(), ", "), ")"));
    }
  }
  return scheme;
}

// The layers' names and wiring, checked before anything is built: each an object with a
// unique "name" and a "type", its "inputs" (the previous layer, or the network's input,
// when not given) and TiedLinear's "weight_of" naming layers that exist.
struct Wiring {
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> inputs;
  std::vector<std::string> tied;        // TiedLinear's "weight_of"; empty for the others
  std::map<std::string, size_t> index;  // a layer's position by name
};

absl::StatusOr<Wiring> ReadWiring(const nlohmann::json& layers) {
  Wiring w;
  w.inputs.resize(layers.size());
  w.tied.resize(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    const nlohmann::json& layer = layers[i];
    if (!layer.is_object() || !layer.contains("name") || !layer["name"].is_string() ||
        !layer.contains("type") || !layer["type"].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("network spec layer ", i,
                       " must be an object with a \"name\" and a \"type\", got ", layer.dump()));
    }
    const std::string name = layer["name"];
    if (name == "input" || !w.index.emplace(name, i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("network spec layer ", i, ": the name \"", name, "\" is ",
                       name == "input" ? "the network's input's" : "taken by an earlier layer"));
    }
    w.names.push_back(name);
    if ((layer.contains("activation") && !layer["activation"].is_string()) ||
        (layer["type"] == "FullyConnected" && layer.contains("bias") &&
         !layer["bias"].is_boolean())) {
      return absl::InvalidArgumentError(
          absl::StrCat("layer ", name, ": \"activation\" must be a name, \"bias\" true or false"));
    }
    if (layer.contains("inputs")) {
      if (!layer["inputs"].is_array() || layer["inputs"].empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("layer ", name, ": \"inputs\" must be a list of layer names"));
      }
      for (const nlohmann::json& in : layer["inputs"]) {
        if (!in.is_string()) {
          return absl::InvalidArgumentError(
              absl::StrCat("layer ", name, ": \"inputs\" must be a list of layer names"));
        }
        w.inputs[i].push_back(in);
      }
    } else {
      w.inputs[i].push_back(i == 0 ? "input" : w.names[i - 1]);
    }
    if (layer["type"] == "TiedLinear") {
      if (!layer.contains("weight_of") || !layer["weight_of"].is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat("layer ", name,
                         " (TiedLinear): needs \"weight_of\", the name of a layer with a weight"));
      }
      w.tied[i] = layer["weight_of"];
    }
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    for (const std::string& in : w.inputs[i]) {
      if (in != "input" && w.index.count(in) == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("layer ", w.names[i], ": unknown input \"", in, "\""));
      }
    }
    if (!w.tied[i].empty() && w.index.count(w.tied[i]) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("layer ", w.names[i], ": unknown weight_of \"", w.tied[i], "\""));
    }
  }
  return w;
}

// The layers in depth-first topological order (each after its inputs and the layer
// whose weight it ties); a layer met again while its inputs are being visited closes a
// cycle, which the error spells out.
absl::StatusOr<std::vector<size_t>> BuildOrder(const Wiring& w) {
  std::vector<int> state(w.names.size(), 0);  // 0 new, 1 visiting, 2 done
  std::vector<size_t> order, path;
  std::function<absl::Status(size_t)> visit = [&](size_t i) -> absl::Status {
    if (state[i] == 2) return absl::OkStatus();
    if (state[i] == 1) {
      std::vector<std::string> cycle;
      for (auto it = std::find(path.begin(), path.end(), i); it != path.end(); ++it)
        cycle.push_back(w.names[*it]);
      cycle.push_back(w.names[i]);
      return absl::InvalidArgumentError(absl::StrCat(
          "layer ", w.names[i], ": its inputs form a cycle, ", absl::StrJoin(cycle, " <- ")));
    }
    state[i] = 1;
    path.push_back(i);
    for (const std::string& in : w.inputs[i]) {
      if (in != "input") RETURN_IF_ERROR(visit(w.index.at(in)));
    }
    if (!w.tied[i].empty()) RETURN_IF_ERROR(visit(w.index.at(w.tied[i])));  // built before its user
    path.pop_back();
    state[i] = 2;
    order.push_back(i);
    return absl::OkStatus();
  };
  for (size_t i = 0; i < w.names.size(); ++i) RETURN_IF_ERROR(visit(i));
  return order;
}

// One layer of the graph, built from its spec (name, inputs and activation removed) and
// its inputs' sizes (-1: unknown); returns the size of its output (-1: unknown). `tied` is
// TiedLinear's layer, `budget` the parameters the spec may still make.
absl::StatusOr<int64_t> BuildNode(const nlohmann::json& layer, const std::vector<int64_t>& in_sizes,
                                  const std::shared_ptr<Module>& tied, const std::string& tied_name,
                                  Generator& gen, int64_t& budget, GraphNet::Node& node) {
  auto bad = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat("layer ", node.name, " (", node.type, "): ", what));
  };
  int64_t size = -1;
  if (node.type == "Add" || node.type == "Concat") {
    if (layer.size() != 1) return bad("takes \"inputs\" only");
    const bool known =
        std::none_of(in_sizes.begin(), in_sizes.end(), [](int64_t s) { return s < 0; });
    if (node.type == "Add") {
      for (size_t k = 1; known && k < in_sizes.size(); ++k) {
        if (in_sizes[k] != in_sizes[0]) {
          return bad(absl::StrCat("its inputs ", node.inputs[0], " (", in_sizes[0], ") and ",
                                  node.inputs[k], " (", in_sizes[k], ") differ in size"));
        }
      }
      return in_sizes[0];
    }
    if (known) {
      size = 0;
      for (const int64_t s : in_sizes) size += s;
    }
    return size;
  }
  if (node.type == "FullyConnected") {
    for (size_t k = 0; k < in_sizes.size(); ++k) {
      if (in_sizes[k] < 1) {
        return bad(absl::StrCat("the size of its input ", node.inputs[k],
                                " is not known (give input_size, or a layer of known size)"));
      }
    }
    if (!layer.contains("size") || !layer["size"].is_number_integer() || layer["size"] < 1) {
      return bad("needs \"size\", a positive integer");
    }
    for (const auto& [key, value] : layer.items()) {
      if (key != "type" && key != "size" && key != "bias") {
        return bad(absl::StrCat("unknown argument \"", key, "\""));
      }
    }
    size = layer["size"];
    node.layer = std::make_shared<FullyConnected>(in_sizes, size, layer.value("bias", true), gen);
  } else if (node.type == "TiedLinear") {
    // y = x W^T with W the weight of layer weight_of, [out, in] (GPT-2's head: wte's).
    if (node.inputs.size() != 1) return bad("takes one input");
    if (layer.size() != 2) return bad("takes \"weight_of\" only");
    node.tied = tied;
    const Tensor weight = node.tied ? GraphNet::WeightOf(*node.tied) : Tensor();
    if (!weight.defined() || weight.dim() != 2) {
      return bad(absl::StrCat("weight_of \"", tied_name, "\" has no 2-D \"weight\""));
    }
    if (in_sizes[0] > 0 && in_sizes[0] != weight.size(1)) {
      return bad(absl::StrCat(tied_name, "'s weight is ", ShapeToString(weight.shape()),
                              ", but its input ", node.inputs[0], " has size ", in_sizes[0]));
    }
    return weight.size(0);
  } else {
    const RegisteredLayer* registered = FindLayer(node.type);
    if (registered == nullptr) {
      return bad(absl::StrCat("unknown type (known: Add, Concat, FullyConnected, TiedLinear, ",
                              absl::StrJoin(RegisteredLayers(), ", "), ")"));
    }
    if (node.inputs.size() != 1) return bad("takes one input");
    const LayerSizes& rule = registered->sizes;
    if (!rule.input.empty() && in_sizes[0] > 0 && layer.contains(rule.input) &&
        layer[rule.input] != in_sizes[0]) {
      return bad(absl::StrCat(rule.input, " ", layer[rule.input].dump(), ", but its input ",
                              node.inputs[0], " has size ", in_sizes[0]));
    }
    const LayerArgs args(layer, gen, budget);
    LayerOr built = absl::InternalError("");
    try {
      built = registered->factory(args);
    } catch (const Error& e) {
      built = absl::InvalidArgumentError(e.what());
    }
    if (!built.ok()) return bad(built.status().message());
    if (const std::vector<std::string> unread = args.Unread(); !unread.empty()) {
      return bad(absl::StrCat("unknown argument \"", absl::StrJoin(unread, "\", \""), "\""));
    }
    node.layer = *std::move(built);
    if (rule.same) {
      size = in_sizes[0];
    } else if (!rule.output.empty()) {
      size = layer.value(rule.output, int64_t{-1});
    }
  }
  budget -= node.layer->NumParameters();
  if (budget < 0) {
    return bad(absl::StrCat("the spec has more than ", LayerArgs::kMaxParameters, " parameters"));
  }
  return size;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Module>> GraphFromJson(absl::string_view text, Generator& gen) {
  nlohmann::json spec;
  try {
    spec = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("network spec is not valid JSON: ", e.what()));
  }
  ASSIGN_OR_RETURN(const InitScheme* const scheme, ReadTopLevel(spec));
  const nlohmann::json& layers = spec["layers"];
  ASSIGN_OR_RETURN(const Wiring wiring, ReadWiring(layers));
  ASSIGN_OR_RETURN(const std::vector<size_t> order, BuildOrder(wiring));
  const std::string output = spec.value("output", wiring.names.back());
  if (wiring.index.count(output) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("network spec: unknown output \"", output, "\""));
  }
  // Build in that order, following sizes. With an initialisation scheme the parameters
  // are declared only, then drawn in their order once the scheme has set them.
  std::optional<MetaDeviceGuard> declare_only;
  if (scheme != nullptr) declare_only.emplace();
  std::map<std::string, int64_t> sizes = {{"input", spec.value("input_size", int64_t{-1})}};
  std::map<std::string, std::shared_ptr<Module>> built_layers;
  std::vector<GraphNet::Node> nodes;
  int64_t budget = LayerArgs::kMaxParameters;
  static const std::set<std::string> kActivations = {"relu", "tanh", "sigmoid", "gelu", "silu"};
  for (const size_t i : order) {
    nlohmann::json layer = layers[i];
    GraphNet::Node node{wiring.names[i],  layer["type"], layer.value("activation", std::string()),
                        wiring.inputs[i], nullptr,       nullptr};
    if (!node.activation.empty() && kActivations.count(node.activation) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("layer ", node.name, " (", node.type, "): activation \"", node.activation,
                       "\" (known: relu, tanh, sigmoid, gelu, silu)"));
    }
    std::vector<int64_t> in_sizes;
    for (const std::string& in : node.inputs) in_sizes.push_back(sizes.at(in));
    for (const char* key : {"name", "inputs", "activation"}) layer.erase(key);
    const std::string& tied = wiring.tied[i];
    ASSIGN_OR_RETURN(const int64_t size,
                     BuildNode(layer, in_sizes, tied.empty() ? nullptr : built_layers[tied], tied,
                               gen, budget, node));
    sizes[node.name] = size;
    built_layers[node.name] = node.layer;
    nodes.push_back(std::move(node));
  }
  auto net = std::make_shared<GraphNet>(std::move(nodes), output);
  if (scheme != nullptr) {
    declare_only.reset();
    (*scheme)(*net);
    Materialize(*net, Device::Cpu(), gen);
  }
  return net;
}

absl::StatusOr<std::shared_ptr<Module>> ModelFromJson(absl::string_view text, Generator& gen) {
  // Named layers make a network; unnamed ones a chain.
  const nlohmann::json spec =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  const bool graph = spec.is_object() && spec.contains("layers") && spec["layers"].is_array() &&
                     !spec["layers"].empty() && spec["layers"][0].is_object() &&
                     spec["layers"][0].contains("name");
  if (graph) return GraphFromJson(text, gen);
  ASSIGN_OR_RETURN(std::shared_ptr<Sequential> chain, SequentialFromJson(text, gen));
  return std::shared_ptr<Module>(std::move(chain));
}

std::vector<const Module*> TiedLayers(const Module& model) {
  const auto* graph = dynamic_cast<const GraphNet*>(&model);
  return graph != nullptr ? graph->TiedLayers() : std::vector<const Module*>();
}

absl::StatusOr<std::shared_ptr<Module>> ModelFromJsonFile(const std::string& path, Generator& gen) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open model spec ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::shared_ptr<Module>> model = ModelFromJson(text.str(), gen);
  if (!model.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", model.status().message()));
  }
  return model;
}

}  // namespace ember::nn
