#include "optim/optimizer.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "autograd/autocast.h"
#include "autograd/engine.h"
#include "base/error.h"
#include "tensor/creation.h"
#include "tensor/ops/adamw.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"
#include "tensor/ops/unary.h"

namespace ember::optim {

Optimizer::Optimizer(std::vector<ParamGroup> groups) : groups_(std::move(groups)) {
  size_t count = 0;
  for (const ParamGroup& group : groups_) {
    EMBER_CHECK(group.lr >= 0 && group.weight_decay >= 0, "optimizer: lr ", group.lr,
                " and weight_decay ", group.weight_decay, " must not be negative");
    for (const Tensor& p : group.params) {
      EMBER_CHECK(p.defined() && autograd::IsLeaf(p) && autograd::RequiresGrad(p),
                  "optimizer: parameter ", count, " is not a leaf that requires gradients");
      ++count;
    }
  }
  states_.resize(count);
}

void Optimizer::Step(double grad_scale) {
  autograd::NoGradGuard no_grad;
  std::vector<ParamUpdate> updates;
  size_t i = 0;
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) {
      ParamState& state = states_[i++];
      const Tensor grad = autograd::Grad(p);
      if (!grad.defined()) continue;
      ++state.step;
      updates.push_back({&group, p, grad, &state});
    }
  }
  Update(updates, grad_scale);
}

void Optimizer::ZeroGrad() {
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) autograd::ZeroGrad(p);
  }
}

std::map<std::string, Tensor> Optimizer::StateDict() const {
  std::map<std::string, Tensor> out;
  for (size_t g = 0; g < groups_.size(); ++g) {
    out[absl::StrCat("group.", g, ".lr")] = Full({}, groups_[g].lr, DType::kF64);
  }
  for (size_t i = 0; i < states_.size(); ++i) {
    if (states_[i].step == 0) continue;
    out[absl::StrCat(i, ".step")] = Full({}, states_[i].step, DType::kI64);
    for (const auto& [name, buffer] : states_[i].buffers) {
      out[absl::StrCat(i, ".", name)] = buffer;
    }
  }
  return out;
}

absl::Status Optimizer::LoadStateDict(const std::map<std::string, Tensor>& state) {
  std::vector<const Tensor*> params;
  for (const ParamGroup& group : groups_) {
    for (const Tensor& p : group.params) params.push_back(&p);
  }
  std::vector<ParamState> states(states_.size());
  std::vector<double> lrs(groups_.size(), -1);
  for (const auto& [key, value] : state) {
    const std::vector<std::string> parts = absl::StrSplit(key, absl::MaxSplits('.', 1));
    size_t index = 0;
    if (parts.size() == 2 && parts[0] == "group") {
      const std::vector<std::string> sub = absl::StrSplit(parts[1], '.');
      if (sub.size() != 2 || sub[1] != "lr" || !absl::SimpleAtoi(sub[0], &index) ||
          index >= groups_.size() || value.numel() != 1 || !IsFloatingPoint(value.dtype())) {
        return absl::InvalidArgumentError(absl::StrCat("optimizer state: bad entry ", key));
      }
      lrs[index] = value.item<double>();
      continue;
    }
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &index) || index >= params.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state: unexpected key ", key, " (this optimizer has ",
                       params.size(), " parameters in ", groups_.size(), " groups)"));
    }
    if (parts[1] == "step") {
      if (value.dim() != 0 || value.dtype() != DType::kI64 || value.item<int64_t>() < 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("optimizer state: ", key, " must be a positive 0-d i64"));
      }
      states[index].step = value.item<int64_t>();
      continue;
    }
    const Tensor& p = *params[index];
    if (value.shape() != p.shape() || value.dtype() != p.dtype()) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state: ", key, " has shape ", ShapeToString(value.shape()),
                       " and dtype ", DTypeName(value.dtype()), ", its parameter ",
                       ShapeToString(p.shape()), " and ", DTypeName(p.dtype())));
    }
    states[index].buffers[parts[1]] = value.To(p.device()).Clone();  // beside its parameter
  }
  for (size_t i = 0; i < states.size(); ++i) {
    if (states[i].step == 0 && !states[i].buffers.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state: parameter ", i, " has buffers but no step"));
    }
  }
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (lrs[g] >= 0) groups_[g].lr = lrs[g];
  }
  states_ = std::move(states);
  return absl::OkStatus();
}

namespace {

// The gradient, scaled, with an L2 term: s grad + wd p (the multiply in the gradient's
// type, as ClipGradNorm's in place).
Tensor WithL2(const Tensor& grad, double grad_scale, const Tensor& param, double weight_decay) {
  const Tensor g = grad_scale == 1 ? grad : ops::Mul(grad, grad_scale);
  return weight_decay == 0 ? g : ops::Add(g, ops::Mul(param, weight_decay));
}

// The buffer `name` of `state`, zeros of the parameter's shape the first time.
Tensor& Buffer(const Tensor& param, const char* name, std::map<std::string, Tensor>& buffers) {
  auto [it, inserted] = buffers.try_emplace(name);
  if (inserted) it->second = Zeros(param.shape(), param.dtype(), param.device());
  return it->second;
}

class SgdOptimizer final : public Optimizer {
 public:
  SgdOptimizer(std::vector<ParamGroup> groups, const SgdOptions& options)
      : Optimizer(std::move(groups)), options_(options) {
    EMBER_CHECK(!options.nesterov || (options.momentum > 0 && options.dampening == 0),
                "sgd: Nesterov momentum needs momentum > 0 and dampening 0");
  }

 private:
  void Update(const std::vector<ParamUpdate>& updates, double grad_scale) override {
    for (const ParamUpdate& u : updates) UpdateOne(*u.group, u.param, u.grad, grad_scale, *u.state);
  }
  // g = grad + wd p; buf = momentum buf + (1 - dampening) g (g itself the first time);
  // g = nesterov ? g + momentum buf : buf; p = p - lr g.
  void UpdateOne(const ParamGroup& group, const Tensor& param, const Tensor& grad,
                 double grad_scale, ParamState& state) {
    Tensor g = WithL2(grad, grad_scale, param, group.weight_decay);
    if (options_.momentum != 0) {
      auto [it, first] = state.buffers.try_emplace("momentum_buffer");
      if (first) {
        it->second = g.Clone();
      } else {
        it->second.CopyFrom(
            ops::Add(ops::Mul(it->second, options_.momentum), ops::Mul(g, 1 - options_.dampening)));
      }
      g = options_.nesterov ? ops::Add(g, ops::Mul(it->second, options_.momentum)) : it->second;
    }
    param.CopyFrom(ops::Sub(param, ops::Mul(g, group.lr)));
  }

  SgdOptions options_;
};

class RmspropOptimizer final : public Optimizer {
 public:
  RmspropOptimizer(std::vector<ParamGroup> groups, const RmspropOptions& options)
      : Optimizer(std::move(groups)), options_(options) {}

 private:
  void Update(const std::vector<ParamUpdate>& updates, double grad_scale) override {
    for (const ParamUpdate& u : updates) UpdateOne(*u.group, u.param, u.grad, grad_scale, *u.state);
  }
  // s = alpha s + (1 - alpha) g^2; centered: a = alpha a + (1 - alpha) g, s - a^2 under
  // the root; avg = sqrt(.) + eps; p -= lr g / avg (or through a momentum buffer).
  void UpdateOne(const ParamGroup& group, const Tensor& param, const Tensor& grad,
                 double grad_scale, ParamState& state) {
    const double alpha = options_.alpha;
    const Tensor g = WithL2(grad, grad_scale, param, group.weight_decay);
    Tensor& square_avg = Buffer(param, "square_avg", state.buffers);
    square_avg.CopyFrom(ops::Add(ops::Mul(square_avg, alpha), ops::Mul(ops::Mul(g, 1 - alpha), g)));
    Tensor variance = square_avg;
    if (options_.centered) {
      Tensor& grad_avg = Buffer(param, "grad_avg", state.buffers);
      grad_avg.CopyFrom(ops::Add(ops::Mul(grad_avg, alpha), ops::Mul(g, 1 - alpha)));
      variance = ops::Sub(square_avg, ops::Mul(grad_avg, grad_avg));
    }
    const Tensor avg = ops::Add(ops::Sqrt(variance), options_.eps);
    if (options_.momentum > 0) {
      Tensor& buf = Buffer(param, "momentum_buffer", state.buffers);
      buf.CopyFrom(ops::Add(ops::Mul(buf, options_.momentum), ops::Div(g, avg)));
      param.CopyFrom(ops::Sub(param, ops::Mul(buf, group.lr)));
    } else {
      param.CopyFrom(ops::Sub(param, ops::Mul(ops::Div(g, avg), group.lr)));
    }
  }

  RmspropOptions options_;
};

// Adam and AdamW share the fused kernel (tensor/ops/adamw.h), every parameter in one
// call; Adam adds its weight decay to the gradient first and runs the kernel without
// decoupled decay.
class AdamOptimizer final : public Optimizer {
 public:
  AdamOptimizer(std::vector<ParamGroup> groups, const AdamOptions& options, bool decoupled)
      : Optimizer(std::move(groups)), options_(options), decoupled_(decoupled) {}

 private:
  void Update(const std::vector<ParamUpdate>& updates, double grad_scale) override {
    std::vector<ops::AdamWUpdate> steps;
    for (const ParamUpdate& u : updates) {
      const ParamGroup& group = *u.group;
      // AdamW scales the gradient in the kernel; Adam's L2 term must see it scaled.
      const Tensor g =
          decoupled_ ? u.grad : WithL2(u.grad, grad_scale, u.param, group.weight_decay);
      // Autocast's bf16 copy of the parameter, written by the same pass (unless a graph
      // still reads it): the next forward casts nothing.
      steps.push_back(
          {u.param,
           g.Contiguous(),
           Buffer(u.param, "exp_avg", u.state->buffers),
           Buffer(u.param, "exp_avg_sq", u.state->buffers),
           {group.lr, options_.beta1, options_.beta2, options_.eps,
            decoupled_ ? group.weight_decay : 0.0, u.state->step, decoupled_ ? grad_scale : 1.0},
           autograd::CastCopy(u.param)});
    }
    ops::AdamWStep(steps);
    for (const ops::AdamWUpdate& step : steps) {
      if (step.bf16_copy.defined()) autograd::KeepCast(step.param);
    }
  }

  AdamOptions options_;
  bool decoupled_;
};

}  // namespace

std::unique_ptr<Optimizer> Sgd(std::vector<ParamGroup> groups, const SgdOptions& options) {
  return std::make_unique<SgdOptimizer>(std::move(groups), options);
}
std::unique_ptr<Optimizer> Rmsprop(std::vector<ParamGroup> groups, const RmspropOptions& options) {
  return std::make_unique<RmspropOptimizer>(std::move(groups), options);
}
std::unique_ptr<Optimizer> Adam(std::vector<ParamGroup> groups, const AdamOptions& options) {
  return std::make_unique<AdamOptimizer>(std::move(groups), options, /*decoupled=*/false);
}
std::unique_ptr<Optimizer> AdamW(std::vector<ParamGroup> groups, const AdamOptions& options) {
  return std::make_unique<AdamOptimizer>(std::move(groups), options, /*decoupled=*/true);
}

// norm = sqrt(sum over parameters of |grad|^2), accumulated in f64 on the gradients'
// device and read once.
double GradNorm(const std::vector<Tensor>& params) {
  Tensor sum_squares;
  for (const Tensor& p : params) {
    const Tensor g = autograd::Grad(p);
    if (!g.defined()) continue;
    const Tensor s = ops::SumOfSquares(g);
    sum_squares = sum_squares.defined() ? ops::Add(sum_squares, s.To(sum_squares.device())) : s;
  }
  return sum_squares.defined() ? std::sqrt(sum_squares.item<double>()) : 0.0;
}

double ClipFactor(double norm, double max_norm) { return std::min(1.0, max_norm / (norm + 1e-6)); }

double ClipGradNorm(const std::vector<Tensor>& params, double max_norm) {
  const double norm = GradNorm(params);
  const double factor = ClipFactor(norm, max_norm);
  if (factor < 1) {
    for (const Tensor& p : params) {
      const Tensor g = autograd::Grad(p);
      if (g.defined()) ops::MulInPlace(g, factor);
    }
  }
  return norm;
}

}  // namespace ember::optim
