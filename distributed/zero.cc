#include "distributed/zero.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "autograd/engine.h"
#include "base/error.h"
#include "tensor/creation.h"
#include "tensor/ops/adamw.h"
#include "tensor/ops/reduce.h"

namespace ember::distributed {

ZeroAdamW::ZeroAdamW(ProcessGroup& group, std::vector<optim::ParamGroup> groups,
                     const optim::AdamOptions& options)
    : group_(group), groups_(std::move(groups)), options_(options) {
  int64_t total = 0;
  for (const optim::ParamGroup& g : groups_) {
    for (const Tensor& p : g.params) {
      EMBER_CHECK(p.dtype() == DType::kF32 && autograd::IsLeaf(p) && autograd::RequiresGrad(p),
                  "ZeRO-1: parameter ", params_.size(),
                  " is not an f32 leaf that requires gradients");
      EMBER_CHECK(params_.empty() || p.device() == params_.front().device(), "ZeRO-1: parameter ",
                  params_.size(), " is on ", p.device().ToString(), ", parameter 0 on ",
                  params_.front().device().ToString());
      params_.push_back(p);
      offsets_.push_back(total);
      total += p.numel();
    }
  }
  EMBER_CHECK(!params_.empty(), "ZeRO-1: no parameters");
  const int64_t world = group_.size();
  shard_ = (total + world - 1) / world;
  const int64_t lo = group_.rank() * shard_, hi = lo + shard_;
  size_t index = 0;
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (size_t k = 0; k < groups_[g].params.size(); ++k, ++index) {
      const int64_t begin = std::max(lo, offsets_[index]);
      const int64_t end = std::min(hi, offsets_[index] + params_[index].numel());
      if (begin < end)
        segments_.push_back({g, index, begin - offsets_[index], begin - lo, end - begin});
    }
  }
  const Device device = params_.front().device();
  grad_shard_ = Zeros({shard_}, DType::kF32, device);
  exp_avg_ = Zeros({shard_}, DType::kF32, device);
  exp_avg_sq_ = Zeros({shard_}, DType::kF32, device);
}

double ZeroAdamW::Step(double max_norm) {
  autograd::NoGradGuard no_grad;
  // 1. Every gradient into the flat vector (zeros where there is none, and in the
  // padding), freed once there, then each rank's slice of their mean.
  const Tensor flat = Empty({group_.size() * shard_}, DType::kF32, params_.front().device());
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor slot = flat.Narrow(0, offsets_[i], params_[i].numel());
    const Tensor grad = autograd::Grad(params_[i]);
    if (grad.defined()) {
      slot.View(params_[i].shape()).CopyFrom(grad);
    } else {
      slot.Fill(0);
    }
    autograd::ZeroGrad(params_[i]);
  }
  const int64_t total = offsets_.back() + params_.back().numel();
  if (total < flat.numel()) flat.Narrow(0, total, flat.numel() - total).Fill(0);
  group_.ReduceScatter(flat, grad_shard_, ReduceOp::kMean);

  // 2. norm = sqrt(sum over ranks of |slice|^2); clip as torch.nn.utils.clip_grad_norm_,
  // the factor applied inside AdamW's pass over the gradient.
  const double norm = std::sqrt(group_.AllReduce(ops::SumOfSquares(grad_shard_).item<double>()));
  const double grad_scale = optim::ClipFactor(norm, max_norm);

  // 3. AdamW on the owned slice, its segments (one parameter's part each) in one step,
  // each result then also into this rank's slice of the flat vector.
  const Tensor own = flat.Narrow(0, group_.rank() * shard_, shard_);
  ++step_;
  std::vector<ops::AdamWUpdate> updates;
  for (const Segment& s : segments_) {
    const optim::ParamGroup& g = groups_[s.group];
    updates.push_back(
        {params_[s.param].View({params_[s.param].numel()}).Narrow(0, s.begin, s.length),
         grad_shard_.Narrow(0, s.shard_begin, s.length),
         exp_avg_.Narrow(0, s.shard_begin, s.length),
         exp_avg_sq_.Narrow(0, s.shard_begin, s.length),
         {g.lr, options_.beta1, options_.beta2, options_.eps, g.weight_decay, step_, grad_scale}});
  }
  ops::AdamWStep(updates);
  for (size_t i = 0; i < segments_.size(); ++i) {
    own.Narrow(0, segments_[i].shard_begin, segments_[i].length).CopyFrom(updates[i].param);
  }

  // 4. Everyone's updated slices (in place), back into every parameter.
  group_.AllGather(own, flat);
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i].View({params_[i].numel()}).CopyFrom(flat.Narrow(0, offsets_[i], params_[i].numel()));
  }
  return norm;
}

std::map<std::string, Tensor> ZeroAdamW::StateDict() const {
  std::map<std::string, Tensor> out;
  for (size_t g = 0; g < groups_.size(); ++g) {
    out[absl::StrCat("group.", g, ".lr")] = Full({}, groups_[g].lr, DType::kF64);
  }
  if (step_ == 0) return out;
  // Each moment gathered once; the entries are views of it (copies would double it).
  for (const auto& [name, shard] :
       {std::pair<const char*, Tensor>{"exp_avg", exp_avg_}, {"exp_avg_sq", exp_avg_sq_}}) {
    const Tensor gathered = Empty({group_.size() * shard_}, DType::kF32, exp_avg_.device());
    group_.AllGather(shard, gathered);
    for (size_t i = 0; i < params_.size(); ++i) {
      out[absl::StrCat(i, ".", name)] =
          gathered.Narrow(0, offsets_[i], params_[i].numel()).View(params_[i].shape());
    }
  }
  for (size_t i = 0; i < params_.size(); ++i)
    out[absl::StrCat(i, ".step")] = Full({}, step_, DType::kI64);
  return out;
}

absl::Status ZeroAdamW::LoadStateDict(const std::map<std::string, Tensor>& state) {
  // The plain optimizer over the same groups checks every key, shape and dtype.
  std::unique_ptr<optim::Optimizer> plain = optim::AdamW(groups_, options_);
  if (absl::Status s = plain->LoadStateDict(state); !s.ok()) return s;
  const std::map<std::string, Tensor> checked = plain->StateDict();
  int64_t step = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto it = checked.find(absl::StrCat(i, ".step"));
    const int64_t s = it == checked.end() ? 0 : it->second.item<int64_t>();
    if (i > 0 && s != step) {
      return absl::InvalidArgumentError(
          absl::StrCat("optimizer state: ZeRO-1 keeps one step for every parameter, but "
                       "parameter 0 is at step ",
                       step, " and parameter ", i, " at ", s));
    }
    step = s;
  }
  if (step > 0) {
    for (const Segment& s : segments_) {
      for (const auto& [name, shard] :
           {std::pair<const char*, Tensor>{"exp_avg", exp_avg_}, {"exp_avg_sq", exp_avg_sq_}}) {
        const Tensor& whole = checked.at(absl::StrCat(s.param, ".", name));
        shard.Narrow(0, s.shard_begin, s.length)
            .CopyFrom(whole.To(shard.device()).View({whole.numel()}).Narrow(0, s.begin, s.length));
      }
    }
  } else {
    exp_avg_.Fill(0);
    exp_avg_sq_.Fill(0);
  }
  for (size_t g = 0; g < groups_.size(); ++g) groups_[g].lr = plain->param_groups()[g].lr;
  step_ = step;
  return absl::OkStatus();
}

}  // namespace ember::distributed
