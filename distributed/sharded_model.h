#ifndef EMBER_DISTRIBUTED_SHARDED_MODEL_H_
#define EMBER_DISTRIBUTED_SHARDED_MODEL_H_

// Any nn::Module spread over a mesh (mesh.h), as PyTorch's fully_shard and
// parallelize_module leave one: the training loop sees the same calls whatever the
// strategy, and the strategy comes from the mesh, the model's plan and two options.
//
// - Every parameter is placed by the plan's rules on its logical axes (sharding.h): a
//   dimension whose axis maps to the mesh axis "model" is split across that axis' ranks
//   (tensor parallel: the plan's tensor_parallel makes the layers communicate, Megatron's
//   f and g), and with `fsdp` one dimension of each parameter is split across the "data"
//   axis' ranks: the one the rules map to "data", else its first dimension that splits
//   evenly and is not split already (FSDP2's Shard(0), without padding; a parameter with
//   no such dimension stays whole, its gradient averaged). Without `fsdp` the rules'
//   "data" entries are ignored: the data axis replicates.
// - Parameters split along "data" are FSDP's (fsdp.h): each rank keeps its shard, which
//   the optimizer steps, and a unit's parameters are gathered around its module's
//   forward and backward (units: the plan's modules; the root, every parameter no unit
//   holds, stays gathered through a step).
// - Data parallel over whole parameters (no `fsdp`, the data axis above 1): the
//   gradients are averaged as backward finishes them (data_parallel.h), unless
//   `average_gradients` is false because the optimizer reduces them itself (ZeRO-1,
//   zero.h).
//
// A model declared on the meta device (nn::MetaDeviceGuard) has each rank draw only its
// shards, with the values one process would draw (ParamSharding::Draw, in NamedParameters
// order); a model with values has them sliced. Either way the model's parameters keep
// their handles: a split one holds this rank's share (tensor parallel) or nothing between
// uses (FSDP).
//
//   ASSIGN_OR_RETURN(auto sharded, ShardedModel::Create(model, mesh, plan, options, gen));
//   optimizer over sharded->parameters()
//   each step: sharded->ZeroGrad();
//     each micro-batch m: sharded->BeginForward(); loss = ...;
//                         sharded->BeginBackward(m is the last); Backward(loss);
//                         sharded->EndBackward();
//     sharded->FinishGradients();
//     optimizer.Step(optim::ClipFactor(sharded->GradNorm(), max_norm));
//     sharded->ParametersUpdated();

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "distributed/data_parallel.h"
#include "distributed/fsdp.h"
#include "distributed/mesh.h"
#include "distributed/sharding.h"
#include "nn/module.h"
#include "nn/safetensors.h"
#include "optim/optimizer.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::distributed {

// What a model package declares about sharding its model.
struct ShardingPlan {
  ShardingRules rules;  // logical axis -> mesh axis ("model" and, for FSDP, "data")
  // FSDP's units: modules of the model, each gathered around its own forward (GPT-2: its
  // blocks). Empty: one unit, the root.
  std::vector<nn::Module*> units;
  // Makes the model's layers communicate over the "model" axis' group (their parameters
  // split by the rules); null for a model with no tensor-parallel layers.
  std::function<void(ProcessGroup&)> tensor_parallel;
};

struct ShardOptions {
  Device device = Device::Cpu();  // where the shards, gradients and gathered weights live
  bool fsdp = false;              // the data axis splits the parameters
  bool average_gradients = true;  // whole parameters' gradients averaged over the data axis
};

// The FSDP units PyTorch's examples give fully_shard: every direct child of `model` that
// holds parameters, but those in `keep_in_root` (a layer whose weight another uses:
// nn::TiedLayers).
std::vector<nn::Module*> ChildUnits(const nn::Module& model,
                                    const std::vector<const nn::Module*>& keep_in_root = {});

// Whether a model on `mesh` under `options` has parameters split across ranks: a model
// best declared on the meta device, each rank drawing only its shards.
bool SplitsParameters(const Mesh& mesh, const ShardOptions& options);

class ShardedModel {
 public:
  // InvalidArgument naming the parameter when a split does not divide it, or when the
  // mesh's "model" axis is above 1 and the plan has no tensor_parallel. `gen` draws a
  // meta model's parameters (and is left where drawing the whole model leaves it).
  // Collective over the mesh: every rank calls it with the same model and plan.
  static absl::StatusOr<std::unique_ptr<ShardedModel>> Create(std::shared_ptr<nn::Module> model,
                                                              const Mesh& mesh,
                                                              const ShardingPlan& plan,
                                                              const ShardOptions& options,
                                                              Generator& gen);
  ~ShardedModel();
  ShardedModel(const ShardedModel&) = delete;
  ShardedModel& operator=(const ShardedModel&) = delete;

  nn::Module& model() const { return *model_; }
  const Mesh& mesh() const { return mesh_; }
  const ShardOptions& options() const { return options_; }
  // Every parameter's place, in NamedParameters order.
  const std::vector<ParamSharding>& shardings() const { return shardings_; }
  // Whether any parameter is split across ranks.
  bool split() const { return split_; }
  // What the optimizer steps, one per parameter in NamedParameters order: FSDP's shard,
  // or the model's parameter (whole, or its tensor-parallel share).
  const std::vector<Tensor>& parameters() const { return parameters_; }
  // FSDP's and data parallel's figures (null when not in use).
  const FullyShardedData* fsdp() const { return fsdp_.get(); }
  const GradientAverager* averager() const { return averager_.get(); }

  // Forgets every gradient (the model's and the shards').
  void ZeroGrad();
  // Before each micro-batch's forward (FSDP gathers the root when it has changed).
  void BeginForward();
  // Before each micro-batch's backward: the last one's averages the gradients as they
  // finish.
  void BeginBackward(bool last_micro_batch);
  // After each micro-batch's backward (FSDP reduces what is left and frees its units).
  void EndBackward();
  // After the last micro-batch: waits for the averages (parameters() then hold the
  // step's gradients).
  void FinishGradients();
  // The global L2 norm of those gradients, every distinct element counted once
  // (collective when parameters are split), for clipping.
  double GradNorm() const;
  // After the optimizer changed parameters() (FSDP gathers anew at the next forward).
  void ParametersUpdated();

  // Parameter i's share on this rank of `whole` (its spec's shape), or anything shaped
  // like it (AdamW's moments), on options.device.
  Tensor Slice(size_t i, const Tensor& whole) const;
  // The whole of parameter i from every rank's `local` (parameters()[i]'s shape):
  // collective over the axes it is split along; `local` itself when it is whole.
  Tensor Gather(size_t i, const Tensor& local) const;
  // Whole parameters by name (a checkpoint's) into parameters(): every parameter given
  // with its spec's shape, nothing else; InvalidArgument naming the first problem,
  // changing nothing.
  absl::Status LoadStateDict(const std::map<std::string, Tensor>& whole);
  // Writes this rank's share of parameter i's `local` (parameters()[i], or an optimizer
  // entry shaped like it) into `file` as the blocks of tensor `name` it covers, if this
  // rank is the first of those holding that share (coordinate 0 along every mesh axis
  // the parameter is not split along), so that every block is written once and none is
  // gathered: a distributed checkpoint, every rank writing at once.
  absl::Status WriteShare(size_t i, const Tensor& local, const std::string& name,
                          nn::SharedSafetensorsWriter& file) const;
  // The parameters whole by name, as one process's model.StateDict() (collective: every
  // rank gets all of it; the model's own tensors when none is split).
  std::map<std::string, Tensor> StateDict() const;

  // For an optimizer over parameters() (in any groups and order): the parameter whose
  // state entry `key` is ("<i>.<buffer>", optim::Optimizer::StateDict's numbering), when
  // `value` has that parameter's shape here (its moments, not "<i>.step"); otherwise
  // none.
  std::optional<size_t> StateParameter(const optim::Optimizer& optimizer, const std::string& key,
                                       const Tensor& value) const;
  // The optimizer's state with every parameter's entries whole, as one process's
  // (collective, as StateDict), and back: each whole entry sliced to this rank's share.
  std::map<std::string, Tensor> OptimizerStateDict(const optim::Optimizer& optimizer) const;
  absl::Status LoadOptimizerStateDict(optim::Optimizer& optimizer,
                                      const std::map<std::string, Tensor>& whole) const;

 private:
  ShardedModel(std::shared_ptr<nn::Module> model, const Mesh& mesh, const ShardOptions& options);
  // Places parameter i: its values (drawn, or its own sliced) into the model's parameter,
  // or, split across "data", into a shard of its own (the parameter's memory released).
  // Returns FSDP's entry for it.
  FullyShardedData::Param Place(size_t i, const Tensor& param, Generator& gen);
  // The parameter an optimizer state entry "<i>.<anything>" belongs to (none for
  // "group.<g>.lr" or a parameter not among parameters()).
  std::optional<size_t> EntryParameter(const optim::Optimizer& optimizer,
                                       const std::string& key) const;

  std::shared_ptr<nn::Module> model_;
  Mesh mesh_;
  ShardOptions options_;
  std::vector<ParamSharding> shardings_;
  bool split_ = false;
  std::vector<Tensor> parameters_;
  std::unique_ptr<FullyShardedData> fsdp_;
  std::unique_ptr<GradientAverager> averager_;
};

}  // namespace ember::distributed

#endif  // EMBER_DISTRIBUTED_SHARDED_MODEL_H_
