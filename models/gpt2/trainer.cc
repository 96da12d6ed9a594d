#include "models/gpt2/trainer.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "base/status.h"
#include "data/windows.h"
#include "models/gpt2/weights.h"
#include "nn/safetensors.h"

namespace ember::models::gpt2 {
namespace ag = autograd;
namespace {

// Reads a uint64 from the checkpoint's metadata.
absl::StatusOr<uint64_t> MetaNumber(const Weights& checkpoint, const std::string& key,
                                    const std::string& path) {
  const auto it = checkpoint.metadata.find(key);
  uint64_t v;
  if (it == checkpoint.metadata.end() || !absl::SimpleAtoi(it->second, &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": the checkpoint has no number \"", key, "\" in its metadata"));
  }
  return v;
}

// Rank r's dropout draws from the model generator's stream at offset r x 2^48 words
// past rank 0's (initialisation, before it, is the same on every rank).
uint64_t DropoutStreamOffset(int rank) { return static_cast<uint64_t>(rank) << 48; }

}  // namespace

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(const GPTConfig& config,
                                                         const TrainOptions& options,
                                                         std::vector<const data::TokenShard*> train,
                                                         const data::TokenShard* val,
                                                         const std::string& checkpoint,
                                                         bool resume) {
  // --resume: an ember checkpoint, with the optimizer state and the run's position;
  // --init_from: the weights and config of any file ReadWeights reads.
  GPTConfig cfg = config;
  std::optional<Weights> weights;
  if (!checkpoint.empty()) {
    ASSIGN_OR_RETURN(Weights w, ReadWeights(checkpoint));
    if (resume && w.format != "ember") {
      return absl::InvalidArgumentError(
          absl::StrCat(checkpoint, " is not an ember GPT-2 checkpoint (it is ", w.format,
                       "'s); --resume needs one that train wrote, --init_from takes "
                       "any"));
    }
    if (!resume) w.config.dropout = config.dropout;
    cfg = w.config;
    weights = std::move(w);
  }
  RETURN_IF_ERROR(cfg.Validate());
  if (options.dtype != DType::kF32 && options.dtype != DType::kBF16) {
    return absl::InvalidArgumentError(absl::StrCat("Trainer: dtype ", DTypeName(options.dtype),
                                                   " is not supported (f32 or bf16)"));
  }
  for (const auto& [flag, value] :
       {std::pair<const char*, int64_t>{"batch_size", options.batch_size},
        {"seq_len", options.seq_len},
        {"grad_accum", options.grad_accum},
        {"steps", options.steps}}) {
    if (value < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, "=", value, ": expected at least 1"));
  }
  if (options.warmup_steps < 0 || options.warmup_steps >= options.steps) {
    return absl::InvalidArgumentError(
        absl::StrCat("--warmup_steps=", options.warmup_steps,
                     ": expected at least 0 and below --steps=", options.steps));
  }
  if (!(options.lr >= options.min_lr && options.min_lr >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--lr=", options.lr, " and --min_lr=", options.min_lr, ": expected lr >= min_lr >= 0"));
  }
  if (options.seq_len > cfg.block_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "seq_len ", options.seq_len, " is longer than the model's block_size ", cfg.block_size));
  }
  if (options.zero_stage != 0 && options.zero_stage != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("zero stage ", options.zero_stage, ": expected 0 or 1"));
  }
  const int ranks = distributed::World().size();
  const int64_t rows = options.batch_size * ranks;  // the global batch
  std::vector<const data::TokenShard*> shards = train;
  shards.push_back(val);
  for (const data::TokenShard* shard : shards) {
    if (shard == nullptr) continue;
    if (shard->size() < rows * options.seq_len + 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(shard->path(), " holds ", shard->size(), " tokens, fewer than one batch of ",
                       ranks > 1 ? absl::StrCat(ranks, " x ") : "", options.batch_size, " x ",
                       options.seq_len, " needs"));
    }
    RETURN_IF_ERROR(shard->CheckVocabulary(cfg.vocab_size));
  }
  std::unique_ptr<Trainer> trainer(new Trainer(cfg, options, std::move(train), val));
  if (weights) {
    if (absl::Status s = trainer->model_->LoadStateDict(weights->state); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(checkpoint, " (", weights->format, "): ", s.message()));
    }
  }
  if (resume && weights) {
    if (absl::Status s = trainer->optimizer_->LoadStateDict(weights->optimizer); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(checkpoint, ": ", s.message()));
    }
    // The data position and the schedule count global batches: the saved run's shape
    // must be this one's (old checkpoints, without it, were one process's).
    if (weights->metadata.count("world_size") > 0) {
      absl::StatusOr<uint64_t> saved_ranks = MetaNumber(*weights, "world_size", checkpoint);
      absl::StatusOr<uint64_t> saved_batch = MetaNumber(*weights, "batch_size", checkpoint);
      if (!saved_ranks.ok()) return saved_ranks.status();
      if (!saved_batch.ok()) return saved_batch.status();
      if (*saved_ranks * *saved_batch != static_cast<uint64_t>(rows)) {
        return absl::InvalidArgumentError(absl::StrCat(
            checkpoint, " was saved by ", *saved_ranks, " rank(s) x batch_size ", *saved_batch,
            " = ", *saved_ranks * *saved_batch, " sequences per micro-batch, and this run has ",
            ranks, " x ", options.batch_size, " = ", rows,
            ": resume with ranks x --batch_size = ", *saved_ranks * *saved_batch));
      }
    }
    absl::StatusOr<uint64_t> step = MetaNumber(*weights, "step", checkpoint);
    absl::StatusOr<uint64_t> micro = MetaNumber(*weights, "micro_batches", checkpoint);
    absl::StatusOr<uint64_t> data_offset =
        MetaNumber(*weights, "data_generator_offset", checkpoint);
    absl::StatusOr<uint64_t> model_offset =
        MetaNumber(*weights, "model_generator_offset", checkpoint);
    for (const auto* s : {&step, &micro, &data_offset, &model_offset}) {
      if (!s->ok()) return s->status();
    }
    trainer->step_ = static_cast<int64_t>(*step);
    trainer->micro_batches_ = static_cast<int64_t>(*micro);
    trainer->data_gen_.set_offset(*data_offset);
    trainer->model_gen_.set_offset(*model_offset + DropoutStreamOffset(trainer->world_.rank()));
  }
  // Every rank starts from rank 0's weights, as DistributedDataParallel does (they are
  // equal already when made from one seed or file; this makes sure).
  if (trainer->world_.size() > 1) {
    for (const Tensor& p : trainer->model_->Parameters()) trainer->world_.Broadcast(p, 0);
  }
  return trainer;
}

Trainer::Trainer(const GPTConfig& config, const TrainOptions& options,
                 std::vector<const data::TokenShard*> train, const data::TokenShard* val)
    : options_(options),
      model_gen_(options.seed),
      model_(std::make_shared<GPT>(config, model_gen_)),
      train_(std::move(train)),
      val_(val),
      world_(distributed::World()),
      schedule_(
          optim::WarmupCosineLr(options.lr, options.min_lr, options.warmup_steps, options.steps)),
      data_gen_(options.seed + 1) {
  model_->To(options.device);
  model_gen_.set_offset(model_gen_.offset() + DropoutStreamOffset(world_.rank()));
  // nanoGPT's groups: weight decay on every parameter of two or more dimensions.
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : model_->Parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  optim::AdamOptions adam;
  adam.beta1 = options.beta1, adam.beta2 = options.beta2;
  std::vector<optim::ParamGroup> groups = {{decay, options.lr, options.weight_decay},
                                           {no_decay, options.lr, 0.0}};
  if (options.zero_stage == 1) {
    zero_ = std::make_unique<distributed::ZeroAdamW>(world_, std::move(groups), adam);
  } else {
    optimizer_ = optim::AdamW(std::move(groups), adam);
    if (world_.size() > 1)
      averager_ = std::make_unique<distributed::GradientAverager>(world_, model_->Parameters());
  }
  model_->Train();
}

std::pair<Tensor, Tensor> Trainer::NextBatch() {
  const int64_t b = options_.batch_size, t = options_.seq_len, n = world_.size(), r = world_.rank();
  EMBER_CHECK(!train_.empty(), "Trainer: no training shard");
  // Sequential: global batch k of a shard reads its tokens [k B N T, (k+1) B N T + 1),
  // of which this rank's rows are its batch k N + r of B; the shards follow one another,
  // and start over after the last.
  if (options_.sequential) {
    int64_t total = 0;
    for (const data::TokenShard* shard : train_) total += data::WindowCount(*shard, t) / (b * n);
    int64_t k = micro_batches_ % total;
    size_t s = 0;
    while (k >= data::WindowCount(*train_[s], t) / (b * n))
      k -= data::WindowCount(*train_[s++], t) / (b * n);
    ++micro_batches_;
    const data::Batch batch = data::SequentialBatch(*train_[s], k * n + r, b, t);
    return {batch.x.To(options_.device), batch.y.To(options_.device)};
  }
  // Random: one shard per batch, in proportion to its windows (no draw for one shard, so
  // a one-shard run's windows do not depend on this rule); every rank draws the global
  // batch and keeps its rows.
  size_t s = 0;
  if (train_.size() > 1) {
    int64_t total = 0;
    for (const data::TokenShard* shard : train_) total += data::WindowCount(*shard, t);
    int64_t pick = static_cast<int64_t>(data_gen_.NextBelow(static_cast<uint64_t>(total)));
    while (pick >= data::WindowCount(*train_[s], t)) pick -= data::WindowCount(*train_[s++], t);
  }
  // Create checked that every shard holds a window, so this fails only on a broken invariant.
  absl::StatusOr<data::Batch> batch = data::RandomWindows(*train_[s], b * n, t, data_gen_);
  EMBER_CHECK(batch.ok(), "train: ", batch.status().message());
  ++micro_batches_;
  return {batch->x.Narrow(0, r * b, b).To(options_.device),
          batch->y.Narrow(0, r * b, b).To(options_.device)};
}

StepResult Trainer::Step() {
  const auto start = std::chrono::steady_clock::now();
  const double lr = schedule_(step_);
  for (optim::ParamGroup& g : zero_ ? zero_->param_groups() : optimizer_->param_groups()) g.lr = lr;
  model_->ZeroGrad();
  double loss_sum = 0;
  for (int64_t m = 0; m < options_.grad_accum; ++m) {
    const auto [x, y] = NextBatch();
    // Each micro-batch's mean loss, scaled so the gradients add up to the step's mean.
    Tensor loss;
    {
      const ag::AutocastGuard autocast(options_.dtype);
      loss = model_->Loss(x, y);
    }
    loss_sum += loss.item<double>();
    // Across ranks, the last micro-batch's backward sends the gradients as they finish.
    if (averager_ && m + 1 == options_.grad_accum) averager_->Arm();
    ag::Backward(ag::Div(loss, static_cast<double>(options_.grad_accum)));
  }
  StepResult result;
  // The norm is wanted either way; an infinite limit measures without clipping.
  const double max_norm =
      options_.grad_clip > 0 ? options_.grad_clip : std::numeric_limits<double>::infinity();
  if (zero_) {
    result.grad_norm = zero_->Step(max_norm);
  } else {
    if (averager_) {
      averager_->Finish();
      result.comm_seconds = averager_->stats().comm_seconds;
      result.comm_wait_seconds = averager_->stats().wait_seconds;
    }
    // Clipping folded into the update: AdamW reads each gradient scaled, in its one pass.
    result.grad_norm = optim::GradNorm(model_->Parameters());
    optimizer_->Step(optim::ClipFactor(result.grad_norm, max_norm));
  }
  result.loss = world_.AllReduce(loss_sum / static_cast<double>(options_.grad_accum),
                                 distributed::ReduceOp::kMean);
  result.lr = lr;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.step = step_++;
  return result;
}

double Trainer::ValidationLoss() {
  if (val_ == nullptr) return std::nan("");
  ag::NoGradGuard no_grad;
  const ag::AutocastGuard autocast(options_.dtype);
  model_->Eval();
  const int64_t b = options_.batch_size, t = options_.seq_len, n = world_.size();
  const int64_t batches = std::min(options_.val_batches, data::WindowCount(*val_, t) / (b * n));
  double sum = 0;
  for (int64_t k = 0; k < batches; ++k) {
    const data::Batch batch = data::SequentialBatch(*val_, k * n + world_.rank(), b, t);
    sum += model_->Loss(batch.x.To(options_.device), batch.y.To(options_.device)).item<double>();
  }
  model_->Train();
  return world_.AllReduce(sum, distributed::ReduceOp::kMean) /
         static_cast<double>(std::max<int64_t>(batches, 1));
}

absl::Status Trainer::SaveCheckpoint(const std::string& path) const {
  std::map<std::string, Tensor> tensors = model_->StateDict();
  // ZeRO's state comes from every rank: all of them gather it.
  for (const auto& [key, t] : zero_ ? zero_->StateDict() : optimizer_->StateDict())
    tensors[kOptimizerPrefix + key] = t;
  std::map<std::string, std::string> metadata = {
      {"format", kCheckpointFormat},
      {"config", ConfigJson(model_->config())},
      {"step", absl::StrCat(step_)},
      {"micro_batches", absl::StrCat(micro_batches_)},
      {"data_generator_offset", absl::StrCat(data_gen_.offset())},
      {"model_generator_offset",
       absl::StrCat(model_gen_.offset() - DropoutStreamOffset(world_.rank()))},
      {"world_size", absl::StrCat(world_.size())},
      {"batch_size", absl::StrCat(options_.batch_size)},
  };
  if (!options_.vocab.empty()) metadata["vocab"] = options_.vocab;
  const absl::Status status =
      world_.rank() == 0 ? nn::SaveSafetensors(path, tensors, metadata) : absl::OkStatus();
  if (world_.AllReduce(status.ok() ? 0.0 : 1.0) > 0 && status.ok()) {
    return absl::InternalError(
        absl::StrCat("rank 0 could not write ", path, " (its message says why)"));
  }
  return status;
}

}  // namespace ember::models::gpt2
