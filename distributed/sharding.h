#ifndef EMBER_DISTRIBUTED_SHARDING_H_
#define EMBER_DISTRIBUTED_SHARDING_H_

// Where each parameter lives on a mesh, from its spec alone (nn/param_spec.h), as
// nanoGPTJAX's logical_to_sharding(axes, mesh, rules): a table of rules maps each
// logical axis ("embed", "mlp", ...) to a mesh axis, and a parameter is split along
// every dimension whose logical axis maps to an axis of the mesh (into that axis' size
// of equal parts), whole along the others. The same layer code then runs replicated,
// fully sharded (FSDP: "embed" on "data") or tensor parallel ("mlp", "qkv", "heads" on
// "model"), or both on a 2-D mesh, by changing the table.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "distributed/mesh.h"
#include "nn/module.h"
#include "nn/param_spec.h"

namespace ember::distributed {

// Logical axis -> mesh axis. A logical axis the table leaves out, or maps to a mesh axis
// the mesh lacks (or one of size 1), is replicated: one table serves every mesh.
class ShardingRules {
 public:
  ShardingRules() = default;
  explicit ShardingRules(std::vector<std::pair<std::string, std::string>> rules)
      : rules_(std::move(rules)) {}
  // "embed=data,mlp=model" (also "" for no rules: everything replicated).
  static absl::StatusOr<ShardingRules> Parse(absl::string_view text);
  // (A model's own table sits beside the axes its layers declare: GPT-2's is
  // models/gpt2/block.h's Gpt2ShardingRules.)

  // These rules less those that map to `mesh_axis`.
  ShardingRules Without(absl::string_view mesh_axis) const;
  // The mesh axis for `logical`, or "" (replicated).
  std::string MeshAxis(absl::string_view logical) const;
  // "embed=data,mlp=model".
  std::string ToString() const;

 private:
  std::vector<std::pair<std::string, std::string>> rules_;
};

// One parameter on the mesh.
struct ParamSharding {
  std::string name;
  nn::ParamSpec spec;
  std::vector<std::string> mesh_axes;  // per dimension: the mesh axis it is split along, or ""
  Shape local_shape;                   // one rank's shard

  bool sharded() const;
  int64_t local_numel() const { return NumElements(local_shape); }

  // This rank's shard of the whole tensor: along each split dimension its mesh axis'
  // coordinate-th share (of each of the spec's parts there); a contiguous copy of the
  // values (no gradient flows through it, nor through Gather).
  Tensor Slice(const Tensor& whole, const Mesh& mesh) const;
  // The whole tensor from every rank's shard (this rank's in `shard`): an all-gather
  // along each split dimension over its mesh axis' group, so collective over those.
  Tensor Gather(const Tensor& shard, const Mesh& mesh) const;
  // This rank's shard with the values the spec's initializer gives the whole tensor
  // there, made in the shard's memory only (nn::DrawShard; gen advances as it would for
  // the whole tensor). On the CPU.
  Tensor Draw(const Mesh& mesh, Generator& gen) const;
};

// Every parameter of `model` (in NamedParameters order) on `mesh` under `rules`, from
// the specs alone (a meta model's too). An error names the parameter when a dimension
// (each of its parts) does not divide by its mesh axis' size, or when two of its
// dimensions map to one mesh axis.
absl::StatusOr<std::vector<ParamSharding>> Shardings(const nn::Module& model, const Mesh& mesh,
                                                     const ShardingRules& rules);

// The plan as a table, one line per parameter ("h.0.mlp.c_fc.weight  [3072, 768] (mlp,
// embed)  -> [1536, 768] (model, -)") and the bytes one rank holds against the whole.
std::string ShardingsTable(const std::vector<ParamSharding>& shardings, const Mesh& mesh,
                           const ShardingRules& rules);

}  // namespace ember::distributed

#endif  // EMBER_DISTRIBUTED_SHARDING_H_
