#include "distributed/fsdp.h"

#include <utility>

#include "autograd/engine.h"
#include "base/error.h"
#include "nn/param_spec.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"

namespace ember::distributed {
namespace ag = autograd;
namespace {

// Copies `from` (a shard's shape) into the views of shard k of n of `to`, or the other
// way (the views' contents into `from`) when `into_shard`.
void CopyShard(const FullyShardedData::Param& p, const Tensor& whole, const Tensor& shard,
               int64_t n, int64_t k, bool into_shard) {
  const std::vector<Tensor> views = nn::ShardViews(whole, p.dim, p.parts, n, k);
  const int64_t rows = views.front().size(p.dim);
  for (size_t i = 0; i < views.size(); ++i) {
    const Tensor piece = shard.Narrow(p.dim, static_cast<int64_t>(i) * rows, rows);
    if (into_shard) {
      piece.CopyFrom(views[i]);
    } else {
      views[i].CopyFrom(piece);
    }
  }
}

}  // namespace

FullyShardedData::FullyShardedData(ProcessGroup& group, std::vector<std::vector<Param>> units,
                                   std::vector<nn::Module*> modules)
    : group_(group), modules_(std::move(modules)) {
  EMBER_CHECK(!units.empty() && (modules_.empty() || units.size() == modules_.size() + 1),
              "FSDP: ", units.size(), " units for ", modules_.size(),
              " modules (the root and one per module)");
  const int64_t n = group_.size();
  for (size_t u = 0; u < units.size(); ++u) {
    Unit& unit = units_.emplace_back();
    unit.params = std::move(units[u]);
    for (const Param& p : unit.params) {
      EMBER_CHECK(
          ag::IsLeaf(p.param) && ag::RequiresGrad(p.param) && p.param.dtype() == DType::kF32,
          "FSDP: a parameter of unit ", u, " is not an f32 leaf that requires gradients");
      unit.offsets.push_back(unit.shard_numel);
      if (p.dim < 0) {
        unit.whole_numel += p.param.numel();
        continue;
      }
      Shape want = p.param.shape();
      EMBER_CHECK(p.dim < p.param.dim() && want[p.dim] % (n * p.parts) == 0, "FSDP: dimension ",
                  p.dim, " of ", ShapeToString(want), " does not split into ", n,
                  " shards of each of ", p.parts, " parts");
      want[p.dim] /= n;
      EMBER_CHECK(p.shard.defined() && p.shard.shape() == want && p.shard.is_contiguous() &&
                      ag::IsLeaf(p.shard) && ag::RequiresGrad(p.shard) &&
                      !p.shard.storage().is_same(p.param.storage()),
                  "FSDP: a shard of ", ShapeToString(p.param.shape()),
                  " must be a contiguous leaf that requires gradients, of shape ",
                  ShapeToString(want), ", in memory of its own");
      unit.shard_numel += p.shard.numel();
    }
    unit.pending = static_cast<int>(unit.params.size());
    for (const Param& p : unit.params) {
      ag::SetPostAccumulateGradHook(p.param, [this, u] {
        if (--units_[u].pending == 0) Reduce(u);
      });
    }
  }
  for (size_t m = 0; m < modules_.size(); ++m) {
    const size_t u = m + 1;
    modules_[m]->SetForwardHooks([this, u](const Tensor& x) { return Before(u, x); },
                                 [this, u](const Tensor& y) { return After(u, y); });
  }
}

FullyShardedData::~FullyShardedData() {
  for (nn::Module* m : modules_) m->SetForwardHooks(nullptr, nullptr);
  for (const Unit& unit : units_) {
    for (const Param& p : unit.params) ag::SetPostAccumulateGradHook(p.param, nullptr);
  }
}

void FullyShardedData::StartGather(size_t u) {
  Unit& unit = units_[u];
  if (unit.gathered || unit.gather || unit.shard_numel == 0) return;
  const int64_t s = unit.shard_numel;
  const Device device = unit.params.front().param.device();
  unit.gather_buffer = Empty({group_.size() * s}, DType::kF32, device);
  const Tensor own = unit.gather_buffer.Narrow(0, group_.rank() * s, s);
  for (size_t i = 0; i < unit.params.size(); ++i) {
    const Param& p = unit.params[i];
    if (p.dim >= 0)
      own.Narrow(0, unit.offsets[i], p.shard.numel()).View(p.shard.shape()).CopyFrom(p.shard);
  }
  unit.gather = group_.AllGatherAsync(own, unit.gather_buffer);
  gathered_bytes_ += unit.gather_buffer.numel() * 4;
}

void FullyShardedData::EnsureGathered(size_t u) {
  Unit& unit = units_[u];
  if (unit.gathered) return;
  StartGather(u);
  if (unit.gather) {
    ag::NoGradGuard no_grad;
    unit.gather->Wait();
    unit.gather.reset();
    const int64_t s = unit.shard_numel;
    for (size_t i = 0; i < unit.params.size(); ++i) {
      const Param& p = unit.params[i];
      if (p.dim < 0) continue;
      const uint64_t version = p.param.storage().version();
      p.param.storage().Restore();
      for (int64_t k = 0; k < group_.size(); ++k) {
        const Tensor piece = unit.gather_buffer.Narrow(0, k * s + unit.offsets[i], p.shard.numel())
                                 .View(p.shard.shape());
        CopyShard(p, p.param, piece, group_.size(), k, /*into_shard=*/false);
      }
      // The same weights again (the shards change only in the optimizer's step, after
      // backward): the tensors the forward saved from them are still right.
      p.param.storage().set_version(version);
    }
    unit.gather_buffer = Tensor();
  }
  unit.gathered = true;
}

void FullyShardedData::Release(size_t u) {
  Unit& unit = units_[u];
  if (!unit.gathered || u == 0) return;
  for (const Param& p : unit.params) {
    if (p.dim >= 0) p.param.storage().Release();
  }
  unit.gathered = false;
}

Tensor FullyShardedData::Before(size_t u, const Tensor& x) {
  EnsureGathered(u);
  if (u + 1 < units_.size()) StartGather(u + 1);  // the next unit's, behind this one's compute
  return x;
}

Tensor FullyShardedData::After(size_t u, const Tensor& y) {
  Release(u);
  if (!ag::ShouldRecord({y})) return y;
  // Backward reaches this node before any of the unit's own: gather the unit for them
  // (and start the one backward needs next).
  return ag::Record("FSDPGatherForBackward", ag::Detach(y), {y}, [this, u](const Tensor& g) {
    EnsureGathered(u);
    if (u > 1) StartGather(u - 1);
    return std::vector<Tensor>{g};
  });
}

void FullyShardedData::Reduce(size_t u) {
  Unit& unit = units_[u];
  if (unit.reduced) return;
  unit.reduced = true;
  if (unit.params.empty()) return;  // a root whose module's parameters are all in units
  ag::NoGradGuard no_grad;
  const int64_t n = group_.size(), s = unit.shard_numel;
  const Device device = unit.params.front().param.device();
  if (s > 0) {
    // Rank k's part of the input: every parameter's shard k of its gradient.
    unit.scatter_input = Empty({n * s}, DType::kF32, device);
    unit.scatter_output = Empty({s}, DType::kF32, device);
    for (size_t i = 0; i < unit.params.size(); ++i) {
      const Param& p = unit.params[i];
      if (p.dim < 0) continue;
      const Tensor grad = ag::Grad(p.param);
      for (int64_t k = 0; k < n; ++k) {
        const Tensor piece = unit.scatter_input.Narrow(0, k * s + unit.offsets[i], p.shard.numel())
                                 .View(p.shard.shape());
        if (grad.defined()) {
          CopyShard(p, grad, piece, n, k, /*into_shard=*/true);
        } else {
          piece.Fill(0);
        }
      }
    }
    unit.scatter =
        group_.ReduceScatterAsync(unit.scatter_input, unit.scatter_output, ReduceOp::kMean);
    reduced_bytes_ += unit.scatter_input.numel() * 4;
  }
  if (unit.whole_numel > 0) {
    unit.whole_grads = Empty({unit.whole_numel}, DType::kF32, device);
    int64_t offset = 0;
    for (const Param& p : unit.params) {
      if (p.dim >= 0) continue;
      const Tensor slot = unit.whole_grads.Narrow(0, offset, p.param.numel()).View(p.param.shape());
      const Tensor grad = ag::Grad(p.param);
      if (grad.defined()) {
        slot.CopyFrom(grad);
      } else {
        slot.Fill(0);
      }
      offset += p.param.numel();
    }
    unit.all_reduce = group_.AllReduceAsync(unit.whole_grads, ReduceOp::kMean);
    reduced_bytes_ += unit.whole_numel * 4;
  }
  for (const Param& p : unit.params) ag::ZeroGrad(p.param);
  Release(u);
  // The unit reduced before this one has had a unit's backward to finish: fold it in now,
  // so that at most two units' whole gradients are in flight, not the model's.
  if (in_flight_ >= 0) Complete(static_cast<size_t>(in_flight_));
  in_flight_ = static_cast<int>(u);
}

void FullyShardedData::Complete(size_t u) {
  Unit& unit = units_[u];
  if (unit.scatter) {
    unit.scatter->Wait();
    unit.scatter.reset();
    // Added to this step's so far, unless an optimizer's zero_grad has forgotten the
    // shards' gradients since (Python's, which does not call ZeroGrad).
    bool accumulate = unit.grads_started;
    for (const Param& p : unit.params) {
      if (p.dim >= 0 && !ag::Grad(p.shard).defined()) accumulate = false;
    }
    unit.shard_grads =
        accumulate ? ops::Add(unit.shard_grads, unit.scatter_output) : unit.scatter_output;
    for (size_t i = 0; i < unit.params.size(); ++i) {
      const Param& p = unit.params[i];
      if (p.dim < 0) continue;
      p.shard.autograd_meta()->grad =
          unit.shard_grads.Narrow(0, unit.offsets[i], p.shard.numel()).View(p.shard.shape());
    }
    unit.scatter_input = unit.scatter_output = Tensor();
  }
  if (unit.all_reduce) {
    unit.all_reduce->Wait();
    unit.all_reduce.reset();
    // A whole parameter's gradient is the mean so far: the next micro-batch's backward
    // adds its own to it, and the mean of that sum over ranks is this mean plus the mean
    // of theirs.
    int64_t offset = 0;
    for (const Param& p : unit.params) {
      if (p.dim >= 0) continue;
      p.param.autograd_meta()->grad =
          unit.whole_grads.Narrow(0, offset, p.param.numel()).View(p.param.shape());
      offset += p.param.numel();
    }
    unit.whole_grads = Tensor();
  }
  unit.grads_started = true;
}

void FullyShardedData::EndBackward() {
  ag::NoGradGuard no_grad;
  for (size_t u = units_.size(); u-- > 0;) Reduce(u);
  for (size_t u = 0; u < units_.size(); ++u) {
    Complete(u);
    units_[u].reduced = false;
    units_[u].pending = static_cast<int>(units_[u].params.size());
  }
  in_flight_ = -1;
  for (size_t u = 1; u < units_.size(); ++u) Release(u);
}

void FullyShardedData::ZeroGrad() {
  for (Unit& unit : units_) {
    for (const Param& p : unit.params) {
      ag::ZeroGrad(p.param);
      if (p.dim >= 0) ag::ZeroGrad(p.shard);
    }
    unit.shard_grads = Tensor();
    unit.grads_started = false;
    unit.reduced = false;
  }
  gathered_bytes_ = reduced_bytes_ = 0;
}

void FullyShardedData::BeginForward() {
  Unit& root = units_[0];
  std::vector<uint64_t> versions;
  for (const Param& p : root.params) {
    if (p.dim >= 0) versions.push_back(p.shard.storage().version());
  }
  if (!root_current_ || versions != root.versions) {
    root.gathered = false;
    EnsureGathered(0);
    root.versions = std::move(versions);
    root_current_ = true;
  }
}

}  // namespace ember::distributed
