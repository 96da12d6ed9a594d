#ifndef EMBER_NN_NETWORK_JSON_H_
#define EMBER_NN_NETWORK_JSON_H_

// A Sequential model described in JSON, built through the layer registry
// (nn/registry.h), so that an MLP or a CNN can be tried without recompiling:
//
//   {"layers": [
//     {"type": "Conv2d", "in_channels": 1, "out_channels": 8, "kernel_size": 3, "padding": 1},
//     {"type": "ReLU"},
//     {"type": "MaxPool2d", "kernel_size": 2},
//     {"type": "Flatten"},
//     {"type": "Linear", "in_features": 1568, "out_features": 10}
//   ]}
//
// Types are PyTorch's class names and arguments its constructor arguments, with its
// defaults; RegisteredLayers() lists the types. Parameter names are "0.weight", ... as
// in a torch.nn.Sequential.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nn/layers.h"
#include "tensor/random.h"

namespace ember::nn {

// Any mistake (invalid JSON, an unknown type, a missing, misspelt or ill-typed
// argument, a value the layer refuses) is an InvalidArgument naming the layer's index
// and type. Parameters are initialised from `gen`, which Dropout layers also draw
// from: it must outlive the model.
absl::StatusOr<std::shared_ptr<Sequential>> SequentialFromJson(absl::string_view json,
                                                               Generator& gen = DefaultGenerator());

// The same, from a file.
absl::StatusOr<std::shared_ptr<Sequential>> SequentialFromJsonFile(
    const std::string& path, Generator& gen = DefaultGenerator());

// A network of named layers whose "inputs" name other layers (or "input", the
// network's input): a DAG, as PaddlePaddle's configs write one (Layer(name, type, size,
// bias, inputs=[...])):
//
//   {"input_size": 8,
//    "layers": [
//      {"name": "h1", "type": "Linear", "in_features": 8, "out_features": 16,
//       "activation": "relu"},                                  // inputs: the layer before
//      {"name": "h2", "type": "Linear", "in_features": 16, "out_features": 16,
//       "inputs": ["h1"], "activation": "tanh"},
//      {"name": "sum", "type": "Add", "inputs": ["h1", "h2"]},   // a residual connection
//      {"name": "both", "type": "Concat", "inputs": ["h1", "sum"]},  // on the last dimension
//      {"name": "out", "type": "FullyConnected", "inputs": ["h1", "both"], "size": 4}],
//    "output": "out"}                                           // default: the last layer
//
// A layer without "inputs" takes the one listed before it (the first takes "input"). Its
// "type" is a registered layer (nn/registry.h, one input), or Add (the sum of inputs of
// one size), Concat (along the last dimension), FullyConnected (Paddle's fc over
// several inputs: y = sum_k x_k W_k^T + b, each input its own weight "weight_k", "bias"
// unless "bias": false) or TiedLinear (y = x W^T with W the "weight" of the layer named
// by "weight_of", no parameter of its own: GPT-2's head, the token embedding's table).
// "activation" (relu, tanh, sigmoid, gelu, silu) applies to the layer's output. Each
// layer's size (its output's last dimension) is followed where it is known (input_size,
// and what each registered layer's LayerSizes says), so a mismatch is found when the
// network is built. Parameters are named by their layer ("h1.weight"; a layer named
// "h.0" gives "h.0.attn.c_attn.weight", as a ModuleList would). "init" names a
// registered InitScheme that sets every parameter's initialiser before any is drawn
// ("gpt2", registered by models/gpt2, makes GPT-2's; models/gpt2/tiny.json is the
// "tiny" GPT written as a spec). Every mistake (a cycle, an unknown input, output or
// init, a duplicate name, a size mismatch, anything SequentialFromJson refuses) is an
// InvalidArgument naming the layer.
absl::StatusOr<std::shared_ptr<Module>> GraphFromJson(absl::string_view json,
                                                      Generator& gen = DefaultGenerator());

// The model a JSON spec describes: a network (its layers named, GraphFromJson) or a
// Sequential chain (SequentialFromJson); from a file, errors name the file.
absl::StatusOr<std::shared_ptr<Module>> ModelFromJson(absl::string_view json,
                                                      Generator& gen = DefaultGenerator());
absl::StatusOr<std::shared_ptr<Module>> ModelFromJsonFile(const std::string& path,
                                                          Generator& gen = DefaultGenerator());

// The layers of a model ModelFromJson made whose weight another layer uses (a
// TiedLinear's "weight_of"); none for a Sequential chain. Sharding keeps them whole
// with the model's root: FSDP gathers a unit only around its own layer's forward.
std::vector<const Module*> TiedLayers(const Module& model);

}  // namespace ember::nn

#endif  // EMBER_NN_NETWORK_JSON_H_
