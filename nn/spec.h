#ifndef EMBER_NN_SPEC_H_
#define EMBER_NN_SPEC_H_

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

}  // namespace ember::nn

#endif  // EMBER_NN_SPEC_H_
