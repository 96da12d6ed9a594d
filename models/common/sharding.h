#ifndef EMBER_MODELS_COMMON_SHARDING_H_
#define EMBER_MODELS_COMMON_SHARDING_H_

// The --mesh and --fsdp flags of the trainers whose models have no tensor-parallel
// layers of their own (MNIST's classifiers, makemore's MLP), and their models over the
// ranks (distributed/sharded_model.h).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/device.h"
#include "distributed/sharded_model.h"
#include "nn/module.h"
#include "tensor/random.h"

namespace ember::models {

// The flags' help, the same in every such binary.
inline constexpr char kMeshFlagHelp[] =
    "under mpirun, the ranks' mesh: data:N (the default: every rank on the data axis); a "
    "model axis needs tensor-parallel layers, which this model does not have";
inline constexpr char kFsdpFlagHelp[] =
    "fully sharded data parallel: the ranks also split the parameters, their gradients and "
    "the optimizer's state, each layer gathered around its use";

// `model` over the mesh `mesh` describes ("": every rank on the data axis), with FSDP
// when `fsdp`: each child layer a unit (a layer whose weight another uses stays with the
// root, nn::TiedLayers), on `device`. Collective: every rank calls it.
absl::StatusOr<std::unique_ptr<distributed::ShardedModel>> ShardLayers(
    std::shared_ptr<nn::Module> model, const std::string& mesh, bool fsdp, Device device,
    Generator& gen);

}  // namespace ember::models

#endif  // EMBER_MODELS_COMMON_SHARDING_H_
