#include "models/common/sharding.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status.h"
#include "distributed/mesh.h"
#include "distributed/process_group.h"
#include "nn/network_json.h"

namespace ember::models {

absl::StatusOr<std::unique_ptr<distributed::ShardedModel>> ShardLayers(
    std::shared_ptr<nn::Module> model, const std::string& mesh, bool fsdp, Device device,
    Generator& gen) {
  ASSIGN_OR_RETURN(const distributed::Mesh grid,
                   distributed::Mesh::Create(mesh, distributed::World()));
  for (const std::string& axis : grid.axes()) {
    if (axis != "data" && axis != "model") {
      return absl::InvalidArgumentError(
          absl::StrCat("--mesh=", mesh, ": training knows the axes data and model, not ", axis));
    }
  }
  distributed::ShardOptions options;
  options.device = device;
  options.fsdp = fsdp;
  const distributed::ShardingPlan plan{
      {}, distributed::ChildUnits(*model, nn::TiedLayers(*model)), nullptr};
  return distributed::ShardedModel::Create(std::move(model), grid, plan, options, gen);
}

}  // namespace ember::models
