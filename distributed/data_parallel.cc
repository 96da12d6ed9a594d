#include "distributed/data_parallel.h"

#include <chrono>
#include <utility>

#include "autograd/engine.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::distributed {

GradientAverager::GradientAverager(ProcessGroup& group, std::vector<Tensor> params,
                                   int64_t bucket_bytes)
    : group_(group), params_(std::move(params)) {
  EMBER_CHECK(!params_.empty(), "data parallel: no parameters");
  EMBER_CHECK(bucket_bytes > 0, "data parallel: bucket_bytes must be positive, not ", bucket_bytes);
  const Tensor& first = params_.front();
  // Backward finishes the last layers first: fill buckets from the last parameter.
  int64_t filled = 0;  // elements in the last bucket
  for (size_t i = params_.size(); i-- > 0;) {
    const Tensor& p = params_[i];
    EMBER_CHECK(autograd::IsLeaf(p) && autograd::RequiresGrad(p), "data parallel: parameter ", i,
                " is not a leaf that requires gradients");
    EMBER_CHECK(p.dtype() == first.dtype() && p.device() == first.device(),
                "data parallel: parameter ", i, " is ", DTypeName(p.dtype()), " on ",
                p.device().ToString(), ", parameter 0 ", DTypeName(first.dtype()), " on ",
                first.device().ToString(), " (all must match)");
    if (buckets_.empty() || filled * p.itemsize() >= bucket_bytes) {
      buckets_.emplace_back();
      filled = 0;
    }
    Bucket& bucket = buckets_.back();
    bucket.params.push_back(i);
    bucket.offsets.push_back(filled);
    filled += p.numel();
    const size_t index = buckets_.size() - 1;
    autograd::SetPostAccumulateGradHook(p, [this, index] { Ready(index); });
  }
  for (Bucket& bucket : buckets_) {
    const int64_t numel = bucket.offsets.back() + params_[bucket.params.back()].numel();
    bucket.flat = Zeros({numel}, first.dtype(), first.device());
    bucket.remaining = static_cast<int>(bucket.params.size());
    stats_.bytes += numel * first.itemsize();
  }
  stats_.buckets = static_cast<int>(buckets_.size());
}

GradientAverager::~GradientAverager() {
  for (const Tensor& p : params_) autograd::SetPostAccumulateGradHook(p, nullptr);
}

void GradientAverager::Arm() {
  EMBER_CHECK(next_ == 0, "data parallel: Arm() again before Finish()");
  armed_ = true;
}

void GradientAverager::Ready(size_t bucket) {
  if (!armed_) return;  // an earlier micro-batch: its gradients stay on this rank
  --buckets_[bucket].remaining;
  StartReady();
}

void GradientAverager::StartReady() {
  while (next_ < buckets_.size() && buckets_[next_].remaining == 0) Start(buckets_[next_++]);
}

void GradientAverager::Start(Bucket& bucket) {
  for (size_t k = 0; k < bucket.params.size(); ++k) {
    const Tensor& p = params_[bucket.params[k]];
    const Tensor slot = bucket.flat.Narrow(0, bucket.offsets[k], p.numel());
    const Tensor grad = autograd::Grad(p);
    if (grad.defined()) {
      slot.View(p.shape()).CopyFrom(grad);
    } else {
      slot.Fill(0);  // unused on this rank; others may have a gradient for it
    }
  }
  bucket.work = group_.AllReduceAsync(bucket.flat, ReduceOp::kMean);
}

void GradientAverager::Finish() {
  for (Bucket& bucket : buckets_)
    bucket.remaining = 0;  // what backward did not reach counts as zeros
  StartReady();
  const auto start = std::chrono::steady_clock::now();
  stats_.comm_seconds = 0;
  for (Bucket& bucket : buckets_) {
    bucket.work->Wait();
    stats_.comm_seconds += bucket.work->seconds();
    bucket.work.reset();
    for (size_t k = 0; k < bucket.params.size(); ++k) {
      const Tensor& p = params_[bucket.params[k]];
      p.autograd_meta()->grad = bucket.flat.Narrow(0, bucket.offsets[k], p.numel()).View(p.shape());
    }
    bucket.remaining = static_cast<int>(bucket.params.size());
  }
  stats_.wait_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  next_ = 0;
  armed_ = false;
}

}  // namespace ember::distributed
