#ifndef EMBER_DISTRIBUTED_FSDP_H_
#define EMBER_DISTRIBUTED_FSDP_H_

// Fully sharded data parallelism: ZeRO stage 3 (Rajbhandari et al. 2020), as PyTorch's
// FSDP runs it. Each rank of the data group holds 1/N of every sharded parameter (its
// shard: the optimizer's parameter, with its gradient and AdamW's state), and the whole
// parameter only while a layer computes with it:
//
//   forward of unit u:   all-gather u's shards into its parameters (unit u + 1's
//                        all-gather starts behind u's compute), compute, free them
//   backward of unit u:  all-gather them again (u - 1's behind), compute; once backward
//                        has finished u's gradients, reduce-scatter them (the mean over
//                        ranks) into the shards' gradients, free the whole gradients and
//                        parameters
//
// A unit is a module's parameters (GPT-2: a block); unit 0, the root, holds the rest
// (the embeddings, tied to the output layer, and the final LayerNorm): it is gathered
// at the start of a forward and kept until the optimizer has stepped the shards, as
// FSDP keeps its root. A parameter the rules leave whole (a bias) is whole on every rank
// and its gradient all-reduced (the mean). The freed parameters keep their tensors (a
// released storage, tensor/storage.h), so the views autograd saved in forward read the
// gathered weights again in backward. Memory per rank: 1/N of the sharded parameters,
// their gradients and AdamW's state, plus the root and at most a few units gathered
// (the one computing, the one prefetched) and two units' whole gradients (a unit's
// reduction is waited for when the next one's starts).
//
//   FullyShardedData fsdp(mesh.group("data"), units, modules);
//   fsdp.ZeroGrad();
//   for each micro-batch: fsdp.BeginForward(); loss = model.Loss(...); Backward(loss);
//                         fsdp.EndBackward();
//   optimizer over the shards (and the whole parameters).Step(); fsdp.ShardsUpdated();

#include <cstdint>
#include <memory>
#include <vector>

#include "distributed/process_group.h"
#include "nn/module.h"
#include "tensor/tensor.h"

namespace ember::distributed {

class FullyShardedData {
 public:
  struct Param {
    Tensor param;       // the layer's parameter, whole while its unit is gathered
    int dim = -1;       // the dimension split over the group (-1: whole on every rank)
    int64_t parts = 1;  // the parameter's parts along it (nn::ShardViews)
    // dim >= 0: this rank's shard, a leaf that requires gradients; the caller makes it
    // (and may free param's storage: the first gather allocates it).
    Tensor shard;
  };

  // units[0] is the root; units[u >= 1] are gathered around modules[u - 1]'s forward
  // (its forward hooks, which this sets) and for its backward. With no modules the
  // caller runs Before and After around each unit's forward itself (Python's modules,
  // whose hooks are Python's). Every rank passes the same units with the same shapes.
  // Throws on a shard whose shape is not param's share.
  FullyShardedData(ProcessGroup& group, std::vector<std::vector<Param>> units,
                   std::vector<nn::Module*> modules);
  ~FullyShardedData();
  FullyShardedData(const FullyShardedData&) = delete;
  FullyShardedData& operator=(const FullyShardedData&) = delete;

  // Gathers the root unless it is current: gathered since the last ShardsUpdated, and
  // none of its shards written since (their storage versions).
  void BeginForward();
  // Unit u's forward hooks (u >= 1): Before gathers it (and starts the next unit's
  // gather) and returns x; After frees it and returns y with a node that gathers it
  // again when backward reaches it.
  Tensor Before(size_t u, const Tensor& x);
  Tensor After(size_t u, const Tensor& y);
  // After each backward: reduces whatever backward did not reach (a gradient it did not
  // make counts as zeros), waits for every reduction, adds each shard's to its
  // gradient (a whole parameter's gradient is the mean itself), and frees what is
  // still gathered but the root.
  void EndBackward();
  // Forgets the shards' (and whole parameters') gradients, for the next step.
  void ZeroGrad();
  // The optimizer changed the shards: the root is gathered again at the next forward.
  void ShardsUpdated() { root_current_ = false; }

  // Bytes of parameters all-gathered and of gradients reduced by the last step's
  // forward and backward passes (for the docs' communication figures).
  int64_t gathered_bytes() const { return gathered_bytes_; }
  int64_t reduced_bytes() const { return reduced_bytes_; }

 private:
  struct Unit {
    std::vector<Param> params;
    std::vector<int64_t> offsets;  // a sharded parameter's shard in the unit's [S]
    int64_t shard_numel = 0;       // S
    int64_t whole_numel = 0;       // the whole parameters' elements, laid end to end
    bool gathered = false;
    Tensor gather_buffer;  // [N S] while an all-gather is in flight
    std::shared_ptr<Work> gather;
    int pending = 0;  // gradients backward has still to finish this pass
    bool reduced = false;
    Tensor scatter_input, scatter_output, whole_grads;  // [N S], [S], [whole_numel]
    Tensor shard_grads;  // [S]: this step's mean gradients so far; the shards' are views
    std::shared_ptr<Work> scatter, all_reduce;
    bool grads_started = false;      // this step's shard gradients hold a first micro-batch's
    std::vector<uint64_t> versions;  // the root's shards' storage versions when gathered
  };

  void StartGather(size_t u);
  void EnsureGathered(size_t u);
  void Release(size_t u);
  void Reduce(size_t u);
  // Waits for unit u's reductions (if any are in flight), adds them to the shards' and
  // whole parameters' gradients, and frees their buffers.
  void Complete(size_t u);

  ProcessGroup& group_;
  std::vector<Unit> units_;
  std::vector<nn::Module*> modules_;
  bool root_current_ = false;
  int in_flight_ = -1;  // the unit whose reductions were started last and not completed
  int64_t gathered_bytes_ = 0, reduced_bytes_ = 0;
};

}  // namespace ember::distributed

#endif  // EMBER_DISTRIBUTED_FSDP_H_
