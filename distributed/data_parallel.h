#ifndef EMBER_DISTRIBUTED_DATA_PARALLEL_H_
#define EMBER_DISTRIBUTED_DATA_PARALLEL_H_

// Data-parallel training's gradient averaging, as torch's DistributedDataParallel does
// it: every rank runs the same model on its own rows of the global batch, and after
// backward each parameter's gradient is the mean over ranks, so every rank takes the
// step one process would take on the whole batch (the mean loss over N equal parts is
// the mean of their means).
//
// The gradients travel in buckets of about bucket_bytes, in reverse parameter order
// (the order backward finishes them): a bucket's all-reduce starts, on the process
// group's communication thread, as soon as backward has finished all of its gradients
// (autograd's post-accumulate hooks), while backward goes on computing the earlier
// layers'. Buckets start strictly in order, so that every rank issues the same
// collectives in the same order. Finish() waits for the rest; afterwards each
// parameter's gradient is a view into its bucket.
//
//   GradientAverager averager(World(), model.Parameters());
//   for each micro-batch: if it is the last, averager.Arm(); Backward(loss);
//   averager.Finish();  // then clip, step

#include <cstdint>
#include <memory>
#include <vector>

#include "distributed/process_group.h"
#include "tensor/tensor.h"

namespace ember::distributed {

class GradientAverager {
 public:
  // params: leaves that require gradients, of one floating dtype, on one device.
  GradientAverager(ProcessGroup& group, std::vector<Tensor> params,
                   int64_t bucket_bytes = 25 << 20);
  ~GradientAverager();
  GradientAverager(const GradientAverager&) = delete;
  GradientAverager& operator=(const GradientAverager&) = delete;

  // The next backward starts averaging the buckets as they complete (call it before the
  // last micro-batch's backward; earlier ones accumulate on each rank alone).
  void Arm();
  // Averages whatever backward did not start (a parameter without a gradient counts as
  // zeros), waits for every bucket, and points each gradient at its average.
  void Finish();

  struct Stats {
    int buckets = 0;
    int64_t bytes = 0;        // gradient bytes all-reduced per step
    double comm_seconds = 0;  // the all-reduces' time on the communication thread
    double wait_seconds = 0;  // how long Finish() waited: communication not hidden
  };
  // The last Finish()'s figures; the share hidden behind backward is
  // 1 - wait_seconds / comm_seconds.
  const Stats& stats() const { return stats_; }

 private:
  struct Bucket {
    std::vector<size_t> params;    // indices into params_, in the order backward ends them
    std::vector<int64_t> offsets;  // each one's first element in `flat`
    Tensor flat;                   // [numel of all of them]
    int remaining = 0;             // gradients backward has not finished this pass
    std::shared_ptr<Work> work;    // the all-reduce, once started
  };

  void Ready(size_t bucket);
  // Starts every bucket from next_ on whose gradients are all finished.
  void StartReady();
  void Start(Bucket& bucket);

  ProcessGroup& group_;
  std::vector<Tensor> params_;
  std::vector<Bucket> buckets_;
  size_t next_ = 0;  // the first bucket not started
  bool armed_ = false;
  Stats stats_;
};

}  // namespace ember::distributed

#endif  // EMBER_DISTRIBUTED_DATA_PARALLEL_H_
