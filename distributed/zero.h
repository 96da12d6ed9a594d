#ifndef EMBER_DISTRIBUTED_ZERO_H_
#define EMBER_DISTRIBUTED_ZERO_H_

// ZeRO stage 1 (Rajbhandari et al. 2020), as llm.c does it: AdamW's two moment buffers,
// twice the model in f32, are split across the ranks instead of copied on each. The
// parameters, laid end to end in one flat vector of N elements padded to a multiple of
// the world size W, give rank r the slice [r S, (r + 1) S), S = N / W. One step:
//   1. reduce-scatter the gradients (mean over ranks): each rank gets its slice's average;
//   2. the global norm from the slices' sums of squares (one scalar all-reduce), and
//      the clip, as torch.nn.utils.clip_grad_norm_;
//   3. AdamW on the owned slice only, with each parameter's group's lr and weight decay;
//   4. all-gather the updated slices, so every rank holds the whole model again.
// The result is the plain AdamW step on the averaged gradients. The state comes and goes
// in optim::Optimizer's StateDict format (whole tensors per parameter), so a checkpoint
// saved on N ranks loads on M, or into the plain optimizer.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "distributed/process_group.h"
#include "optim/optimizer.h"
#include "tensor/tensor.h"

namespace ember::distributed {

class ZeroAdamW {
 public:
  // Parameters: f32 leaves that require gradients, on one device.
  ZeroAdamW(ProcessGroup& group, std::vector<optim::ParamGroup> groups,
            const optim::AdamOptions& options);

  // Steps 1-4 above, after backward (collective). Returns the gradient norm before
  // clipping to max_norm (infinity: no clipping). The parameters' gradients are freed
  // as they go into the flat vector (their memory is what the step works in).
  double Step(double max_norm);

  std::vector<optim::ParamGroup>& param_groups() { return groups_; }
  // Elements of AdamW's state this rank holds: 2 S. The step works in W S more (the
  // flat vector, only while it runs: the gradients it replaces are freed) and S.
  int64_t state_elements() const { return 2 * shard_; }

  // The whole state, as optim::Optimizer::StateDict (collective: every rank calls it,
  // and every rank gets all of it).
  std::map<std::string, Tensor> StateDict() const;
  // Takes this rank's slice of an optim::Optimizer state dict over the same parameters;
  // every parameter must be at the same step. InvalidArgument naming the problem
  // otherwise, changing nothing.
  absl::Status LoadStateDict(const std::map<std::string, Tensor>& state);

 private:
  // The part of parameter `param` in this rank's slice: its elements [begin, begin +
  // length) are the slice's [shard_begin, shard_begin + length).
  struct Segment {
    size_t group, param;
    int64_t begin, shard_begin, length;
  };

  ProcessGroup& group_;
  std::vector<optim::ParamGroup> groups_;
  optim::AdamOptions options_;
  std::vector<Tensor> params_;    // across groups, in order
  std::vector<int64_t> offsets_;  // each one's first element in the flat vector
  int64_t shard_ = 0;             // S
  std::vector<Segment> segments_;
  Tensor grad_shard_, exp_avg_, exp_avg_sq_;  // [S] each
  int64_t step_ = 0;
};

}  // namespace ember::distributed

#endif  // EMBER_DISTRIBUTED_ZERO_H_
