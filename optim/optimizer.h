#ifndef EMBER_OPTIM_OPTIMIZER_H_
#define EMBER_OPTIM_OPTIMIZER_H_

// Optimizers over a list of parameters (leaves that require gradients), with the
// update rules of torch.optim (PyTorch 1.13), operation for operation:
//   SGD (momentum, dampening, Nesterov, weight decay), RMSprop (alpha, eps, momentum,
//   centered), Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight
//   decay, one fused kernel pass).
// Parameter groups carry their own learning rate and weight decay (the usual "no decay
// for biases and norms"); a schedule sets each group's lr between steps.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tensor/tensor.h"

namespace ember::optim {

struct ParamGroup {
  std::vector<Tensor> params;
  double lr = 1e-3;
  double weight_decay = 0;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates every parameter that has a gradient (recording nothing for autograd) as if
  // its gradient were grad_scale times what it is; the gradients are left as they are.
  // With ClipFactor's scale this is ClipGradNorm then Step(), to the bit, with one pass
  // fewer over the gradients (AdamW scales each one in its own fused pass).
  void Step(double grad_scale = 1);
  // Forgets every parameter's gradient (PyTorch's zero_grad(set_to_none=True)).
  void ZeroGrad();

  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }

  // The state that makes a resumed run continue exactly: for parameter i (numbered
  // across groups, in order) "i.step" (0-d i64) and "i.<buffer>" (the parameter's
  // shape), plus "group.<g>.lr" (0-d f64). Parameters not yet updated have no entries.
  // The buffers are the optimizer's own, not copies (as torch's state_dict()): the next
  // Step() changes them, and saving a checkpoint costs no memory beside it (copies of
  // GPT-2 124M's moments were 1 GB, a third of its training run's peak RSS).
  std::map<std::string, Tensor> StateDict() const;
  // Restores a StateDict() of an optimizer over the same parameters; on a mismatch
  // (unknown or malformed key, wrong shape or dtype) returns InvalidArgument naming it
  // and changes nothing.
  absl::Status LoadStateDict(const std::map<std::string, Tensor>& state);

 protected:
  struct ParamState {
    int64_t step = 0;  // updates so far, counting the current one inside Update
    std::map<std::string, Tensor> buffers;
  };
  // A parameter to update: its group, the parameter, its gradient (same shape) and its
  // state (whose step already counts this update).
  struct ParamUpdate {
    const ParamGroup* group;
    Tensor param, grad;
    ParamState* state;
  };
  explicit Optimizer(std::vector<ParamGroup> groups);
  // One step of every parameter that has a gradient, each read as grad_scale grad (all
  // at once, so that AdamW runs them in one kernel call).
  virtual void Update(const std::vector<ParamUpdate>& updates, double grad_scale) = 0;

 private:
  std::vector<ParamGroup> groups_;
  std::vector<ParamState> states_;  // one per parameter, across groups
};

struct SgdOptions {
  double momentum = 0, dampening = 0;
  bool nesterov = false;
};
std::unique_ptr<Optimizer> Sgd(std::vector<ParamGroup> groups, const SgdOptions& options = {});

struct RmspropOptions {
  double alpha = 0.99, eps = 1e-8, momentum = 0;
  bool centered = false;
};
std::unique_ptr<Optimizer> Rmsprop(std::vector<ParamGroup> groups,
                                   const RmspropOptions& options = {});

struct AdamOptions {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};
// Weight decay as an L2 term in the gradient (torch.optim.Adam).
std::unique_ptr<Optimizer> Adam(std::vector<ParamGroup> groups, const AdamOptions& options = {});
// Decoupled weight decay (torch.optim.AdamW); set weight_decay in the groups (PyTorch's
// default is 0.01).
std::unique_ptr<Optimizer> AdamW(std::vector<ParamGroup> groups, const AdamOptions& options = {});

// Scales every gradient by ClipFactor(norm, max_norm), where norm is their joint L2 norm
// (torch.nn.utils.clip_grad_norm_); returns the norm before clipping.
double ClipGradNorm(const std::vector<Tensor>& params, double max_norm);
// The joint L2 norm of the parameters' gradients, accumulated in f64.
double GradNorm(const std::vector<Tensor>& params);
// What clipping to max_norm scales gradients of joint norm `norm` by:
// max_norm / (norm + 1e-6) when that is below 1, else 1.
double ClipFactor(double norm, double max_norm);

}  // namespace ember::optim

#endif  // EMBER_OPTIM_OPTIMIZER_H_
