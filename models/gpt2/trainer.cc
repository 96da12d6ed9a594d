#include "models/gpt2/trainer.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "base/status.h"
#include "data/windows.h"
#include "models/gpt2/weights.h"
#include "nn/network_json.h"
#include "nn/safetensors.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"

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

// How the options spread the model: FSDP on the data axis with --fsdp; ZeRO-1 reduces
// the gradients itself.
distributed::ShardOptions ShardOptionsOf(const TrainOptions& options) {
  return {options.device, options.fsdp, /*average_gradients=*/options.zero_stage == 0};
}

// The checkpoint a run starts from: with `resume` an ember checkpoint (the optimizer
// state and the run's position too), otherwise the weights of any file ReadWeights
// reads. The run takes its config, or its spec, from it (config's dropout stays the
// caller's when fine-tuning).
absl::StatusOr<Weights> ReadStart(const std::string& checkpoint, bool resume, GPTConfig& config,
                                  TrainOptions& options) {
  ASSIGN_OR_RETURN(Weights w, ReadWeights(checkpoint));
  if (resume && w.format != "ember") {
    return absl::InvalidArgumentError(
        absl::StrCat(checkpoint, " is not an ember GPT-2 checkpoint (it is ", w.format,
                     "'s); --resume needs one that train wrote, --init_from takes any"));
  }
  if (!w.spec.empty()) {
    // A spec's run: its spec, unless another (whose parameters it fills) is given.
    if (options.model_spec.empty()) {
      options.model_spec = w.spec;
    } else if (resume && options.model_spec != w.spec) {
      return absl::InvalidArgumentError(absl::StrCat(
          checkpoint, " was trained from another model spec; resume it without --model"));
    }
  } else if (!options.model_spec.empty()) {
    if (resume) {
      return absl::InvalidArgumentError(
          absl::StrCat(checkpoint, " is a GPT-2 run's checkpoint; resume it without a model spec"));
    }
  } else {
    if (!resume) {
      w.config.dropout = config.dropout;
      w.config.attn_dropout = config.attn_dropout;
    }
    config = w.config;
  }
  return w;
}

// The options' own limits, each error naming train's flag.
absl::Status CheckOptions(const TrainOptions& options, const GPTConfig& config) {
  if (options.model_spec.empty()) RETURN_IF_ERROR(config.Validate());
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
  if (options.model_spec.empty() && options.seq_len > config.block_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "seq_len ", options.seq_len, " is longer than the model's block_size ", config.block_size));
  }
  if (options.zero_stage != 0 && options.zero_stage != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("zero stage ", options.zero_stage, ": expected 0 or 1"));
  }
  return absl::OkStatus();
}

// The ranks' mesh from --mesh: axes "data" and "model" only, both present (of 1 when
// left out).
absl::StatusOr<distributed::Mesh> MakeMesh(const TrainOptions& options) {
  distributed::ProcessGroup& world = distributed::World();
  std::string spec = options.mesh.empty() ? absl::StrCat("data:", world.size()) : options.mesh;
  ASSIGN_OR_RETURN(const distributed::Mesh layout, distributed::Mesh::Layout(spec, world.size()));
  for (const std::string& axis : layout.axes()) {
    if (axis != "data" && axis != "model") {
      return absl::InvalidArgumentError(
          absl::StrCat("--mesh=", spec, ": training knows the axes data and model, not ", axis,
                       " (other axes are for planning with --print_shardings)"));
    }
  }
  if (options.zero_stage == 1 && (layout.size("model") > 1 || options.fsdp)) {
    return absl::InvalidArgumentError(
        "--zero=1 splits AdamW's state of a model every rank holds whole; with a model axis "
        "or --fsdp the parameters are sharded already (FSDP shards the state with them)");
  }
  if (!layout.has("data")) absl::StrAppend(&spec, ",data:1");
  if (!layout.has("model")) absl::StrAppend(&spec, ",model:1");
  return distributed::Mesh::Create(spec, world);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(
    const GPTConfig& config, const TrainOptions& options,
    std::vector<const data::TokenShard*> train, const data::TokenShard* val,
    const std::string& checkpoint, bool resume, const std::vector<Conversation>* conversations) {
  GPTConfig cfg = config;
  TrainOptions opts = options;
  std::optional<Weights> weights;
  if (!checkpoint.empty()) {
    ASSIGN_OR_RETURN(weights, ReadStart(checkpoint, resume, cfg, opts));
  }
  RETURN_IF_ERROR(CheckOptions(opts, cfg));
  ASSIGN_OR_RETURN(distributed::Mesh mesh, MakeMesh(opts));
  std::unique_ptr<Trainer> trainer(
      new Trainer(cfg, opts, std::move(train), conversations, val, std::move(mesh)));
  if (!opts.model_spec.empty()) RETURN_IF_ERROR(trainer->BuildSpec());
  RETURN_IF_ERROR(trainer->batches_.Check(val, trainer->vocab_size_));
  RETURN_IF_ERROR(trainer->Shard());
  if (weights) {
    if (absl::Status s = trainer->LoadState(*weights, resume); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(checkpoint, " (", weights->format, "): ", s.message()));
    }
    if (resume) RETURN_IF_ERROR(trainer->Resume(*weights, checkpoint));
  }
  return trainer;
}

absl::Status Trainer::Resume(const Weights& weights, const std::string& checkpoint) {
  // The data position and the schedule count global batches: the saved run's shape
  // must be this one's (old checkpoints, without it, were one process's).
  const int64_t rows = options_.batch_size * data_ranks_;
  if (weights.metadata.count("world_size") > 0) {
    ASSIGN_OR_RETURN(const uint64_t saved_ranks, MetaNumber(weights, "world_size", checkpoint));
    ASSIGN_OR_RETURN(const uint64_t saved_batch, MetaNumber(weights, "batch_size", checkpoint));
    if (saved_ranks * saved_batch != static_cast<uint64_t>(rows)) {
      return absl::InvalidArgumentError(absl::StrCat(
          checkpoint, " was saved by ", saved_ranks, " rank(s) x batch_size ", saved_batch, " = ",
          saved_ranks * saved_batch, " sequences per micro-batch, and this run has ", data_ranks_,
          " x ", options_.batch_size, " = ", rows,
          ": resume with ranks x --batch_size = ", saved_ranks * saved_batch));
    }
  }
  ASSIGN_OR_RETURN(const uint64_t step, MetaNumber(weights, "step", checkpoint));
  ASSIGN_OR_RETURN(const uint64_t micro, MetaNumber(weights, "micro_batches", checkpoint));
  ASSIGN_OR_RETURN(const uint64_t data_offset,
                   MetaNumber(weights, "data_generator_offset", checkpoint));
  ASSIGN_OR_RETURN(const uint64_t model_offset,
                   MetaNumber(weights, "model_generator_offset", checkpoint));
  step_ = static_cast<int64_t>(step);
  batches_.Seek(static_cast<int64_t>(micro), data_offset);
  model_gen_.set_offset(model_offset + DropoutStreamOffset(data_rank_));
  return absl::OkStatus();
}

namespace {

// GPT-2 made on the meta device when its parameters will be split across ranks (each
// rank then draws only its shards), on the CPU otherwise; null for a spec
// (Trainer::BuildSpec makes it).
std::shared_ptr<GPT> MakeModel(const GPTConfig& config, const TrainOptions& options,
                               const distributed::Mesh& mesh, Generator& gen) {
  if (!options.model_spec.empty()) return nullptr;
  if (distributed::SplitsParameters(mesh, ShardOptionsOf(options))) {
    const nn::MetaDeviceGuard meta;
    return std::make_shared<GPT>(config, gen);
  }
  return std::make_shared<GPT>(config, gen);
}

}  // namespace

Trainer::Trainer(const GPTConfig& config, const TrainOptions& options,
                 std::vector<const data::TokenShard*> train,
                 const std::vector<Conversation>* conversations, const data::TokenShard* val,
                 distributed::Mesh mesh)
    : options_(options),
      model_gen_(options.seed),
      model_(MakeModel(config, options, mesh, model_gen_)),
      val_(val),
      world_(distributed::World()),
      mesh_(std::move(mesh)),
      data_ranks_(mesh_.size("data")),
      data_rank_(mesh_.coordinate("data")),
      schedule_(
          optim::WarmupCosineLr(options.lr, options.min_lr, options.warmup_steps, options.steps)),
      batches_(std::move(train), conversations,
               {options.batch_size, options.seq_len, data_ranks_, data_rank_, options.sequential,
                options.seed + 1}) {
  gpt_ = static_cast<GPT*>(model_.get());
  vocab_size_ = config.vocab_size;
}

absl::Status Trainer::BuildSpec() {
  ASSIGN_OR_RETURN(model_, nn::ModelFromJson(options_.model_spec, model_gen_));
  // The vocabulary: the logits' size on one sequence (in eval mode: dropout draws nothing).
  const ag::NoGradGuard no_grad;
  model_->Eval();
  Tensor logits;
  try {
    logits = (*model_)(Zeros({1, options_.seq_len}, DType::kI64));
  } catch (const Error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model spec on ids [1, ", options_.seq_len, "]: ", e.what()));
  }
  if (logits.dim() != 3 || logits.size(0) != 1 || logits.size(1) != options_.seq_len) {
    return absl::InvalidArgumentError(
        absl::StrCat("a model spec trained on tokens maps ids [B, T] to logits [B, T, V]; this "
                     "one maps [1, ",
                     options_.seq_len, "] to ", ShapeToString(logits.shape())));
  }
  vocab_size_ = logits.size(2);
  return absl::OkStatus();
}

Tensor Trainer::Loss(const Tensor& x, const Tensor& y) {
  if (gpt_ != nullptr) return gpt_->Loss(x, y);  // its head over the padded vocabulary
  const Tensor logits = model_->Forward(x);
  return ag::CrossEntropy(ag::Reshape(logits, {-1, vocab_size_}), y.Reshape({-1}));
}

absl::Status Trainer::Shard() {
  // GPT-2 shards by its own plan; a spec's layers are FSDP units each (but those whose
  // weight another layer uses), with no tensor parallelism.
  const distributed::ShardingPlan plan =
      gpt_ != nullptr ? Gpt2ShardingPlan(*gpt_)
                      : distributed::ShardingPlan{
                            {}, distributed::ChildUnits(*model_, nn::TiedLayers(*model_)), nullptr};
  ASSIGN_OR_RETURN(sharded_, distributed::ShardedModel::Create(
                                 model_, mesh_, plan, ShardOptionsOf(options_), model_gen_));
  if (gpt_ != nullptr && !sharded_->split()) gpt_->PadVocabulary();  // To(device) made wte anew
  // Rank r's dropout draws from its own stream (the model axis' ranks share one: their
  // activations are the same); initialisation, before it, is the same on every rank.
  model_gen_.set_offset(model_gen_.offset() + DropoutStreamOffset(data_rank_));
  // nanoGPT's groups: weight decay on every parameter of two or more dimensions.
  std::vector<Tensor> decay, no_decay;
  for (const Tensor& p : sharded_->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  optim::AdamOptions adam;
  adam.beta1 = options_.beta1, adam.beta2 = options_.beta2;
  std::vector<optim::ParamGroup> groups = {{decay, options_.lr, options_.weight_decay},
                                           {no_decay, options_.lr, 0.0}};
  if (options_.zero_stage == 1) {
    zero_ = std::make_unique<distributed::ZeroAdamW>(mesh_.group("data"), std::move(groups), adam);
  } else {
    optimizer_ = optim::AdamW(std::move(groups), adam);
  }
  model_->Train();
  return absl::OkStatus();
}

absl::Status Trainer::LoadState(const Weights& weights, bool optimizer) {
  RETURN_IF_ERROR(sharded_->LoadStateDict(weights.state));
  if (!optimizer) return absl::OkStatus();
  // AdamW's moments whole, each into its parameter's shard (ZeRO's: whole).
  return zero_ ? zero_->LoadStateDict(weights.optimizer)
               : sharded_->LoadOptimizerStateDict(*optimizer_, weights.optimizer);
}

StepResult Trainer::Step() {
  const auto start = std::chrono::steady_clock::now();
  const double lr = schedule_(step_);
  for (optim::ParamGroup& g : zero_ ? zero_->param_groups() : optimizer_->param_groups()) g.lr = lr;
  sharded_->ZeroGrad();
  // The micro-batches' losses, read once the backward passes are queued: reading one
  // before its backward would make the host wait for the GPU in the middle of the step.
  std::vector<Tensor> losses;
  for (int64_t m = 0; m < options_.grad_accum; ++m) {
    const auto [x, y] = batches_.Next(options_.device);
    // Each micro-batch's mean loss, scaled so the gradients add up to the step's mean.
    Tensor loss;
    {
      const ag::AutocastGuard autocast(options_.dtype);
      sharded_->BeginForward();
      loss = Loss(x, y);
    }
    losses.push_back(ag::Detach(loss));
    sharded_->BeginBackward(m + 1 == options_.grad_accum);
    ag::Backward(ag::Div(loss, static_cast<double>(options_.grad_accum)));
    sharded_->EndBackward();
  }
  double loss_sum = 0;
  for (const Tensor& loss : losses) loss_sum += loss.item<double>();
  StepResult result;
  // The norm is wanted either way; an infinite limit measures without clipping.
  const double max_norm =
      options_.grad_clip > 0 ? options_.grad_clip : std::numeric_limits<double>::infinity();
  if (zero_) {
    result.grad_norm = zero_->Step(max_norm);  // it reduces the gradients itself
  } else {
    sharded_->FinishGradients();
    result.grad_norm = sharded_->GradNorm();
    // Clipping folded into the update: AdamW reads each gradient scaled, in its one pass.
    optimizer_->Step(optim::ClipFactor(result.grad_norm, max_norm));
    sharded_->ParametersUpdated();
  }
  if (const distributed::GradientAverager* averager = sharded_->averager()) {
    result.comm_seconds = averager->stats().comm_seconds;
    result.comm_wait_seconds = averager->stats().wait_seconds;
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
  const int64_t b = options_.batch_size, t = options_.seq_len, n = data_ranks_;
  const int64_t batches = std::min(options_.val_batches, data::WindowCount(*val_, t) / (b * n));
  double sum = 0;
  for (int64_t k = 0; k < batches; ++k) {
    const data::Batch batch = data::SequentialBatch(*val_, k * n + data_rank_, b, t);
    sharded_->BeginForward();
    sum += Loss(batch.x.To(options_.device), batch.y.To(options_.device)).item<double>();
  }
  model_->Train();
  return world_.AllReduce(sum, distributed::ReduceOp::kMean) /
         static_cast<double>(std::max<int64_t>(batches, 1));
}

absl::Status Trainer::SaveCheckpoint(const std::string& path) const {
  std::map<std::string, std::string> metadata = {
      {"format", kCheckpointFormat},
      gpt_ != nullptr
          ? std::pair<const std::string, std::string>{"config", ConfigJson(gpt_->config())}
          : std::pair<const std::string, std::string>{"spec", options_.model_spec},
      {"step", absl::StrCat(step_)},
      {"micro_batches", absl::StrCat(batches_.drawn())},
      {"data_generator_offset", absl::StrCat(batches_.generator_offset())},
      {"model_generator_offset",
       absl::StrCat(model_gen_.offset() - DropoutStreamOffset(data_rank_))},
      // The data axis' ranks: each reads its own rows (the model axis' share them).
      {"world_size", absl::StrCat(data_ranks_)},
      {"batch_size", absl::StrCat(options_.batch_size)},
  };
  if (!options_.vocab.empty()) metadata["vocab"] = options_.vocab;
  // A distributed checkpoint: one safetensors file of whole tensors, to which every rank
  // writes the blocks it holds at once (nn::SharedSafetensorsWriter; a share held by
  // several ranks is written by the first), so that nothing is gathered. ZeRO's state,
  // whole on every rank, and the optimizer's scalars come from rank 0.
  const ag::NoGradGuard no_grad;
  const std::map<std::string, Tensor> state = zero_ ? zero_->StateDict() : optimizer_->StateDict();
  const std::vector<distributed::ParamSharding>& shardings = sharded_->shardings();
  std::map<std::string, nn::TensorLayout> layout;
  for (size_t i = 0; i < shardings.size(); ++i)
    layout[shardings[i].name] = {shardings[i].spec.shape, sharded_->parameters()[i].dtype()};
  // An entry of one parameter's state (AdamW's moments) has its shape; ZeRO's are whole.
  const auto entry_parameter = [&](const std::string& key) -> std::optional<size_t> {
    if (zero_) return std::nullopt;
    return sharded_->StateParameter(*optimizer_, key, state.at(key));
  };
  for (const auto& [key, t] : state) {
    const std::optional<size_t> i = entry_parameter(key);
    layout[kOptimizerPrefix + key] = {i ? shardings[*i].spec.shape : t.shape(), t.dtype()};
  }
  // Every rank learns whether every rank's part succeeded; a failed write is abandoned.
  const int rank = world_.rank();
  const auto everywhere = [&](const absl::Status& status) -> absl::Status {
    if (world_.AllReduce(status.ok() ? 0.0 : 1.0) == 0) return absl::OkStatus();
    if (rank == 0) nn::SharedSafetensorsWriter::Abandon(path);
    return status.ok() ? absl::InternalError(absl::StrCat("another rank could not write ", path,
                                                          " (its message says why)"))
                       : status;
  };
  RETURN_IF_ERROR(everywhere(rank == 0 ? nn::SharedSafetensorsWriter::Create(path, layout, metadata)
                                       : absl::OkStatus()));
  const auto write = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(nn::SharedSafetensorsWriter file,
                     nn::SharedSafetensorsWriter::Open(path, layout, metadata));
    for (size_t i = 0; i < shardings.size(); ++i)
      RETURN_IF_ERROR(sharded_->WriteShare(i, sharded_->parameters()[i], shardings[i].name, file));
    for (const auto& [key, t] : state) {
      const std::string name = kOptimizerPrefix + key;
      if (const std::optional<size_t> i = entry_parameter(key)) {
        RETURN_IF_ERROR(sharded_->WriteShare(*i, t, name, file));
      } else if (rank == 0) {
        RETURN_IF_ERROR(file.WriteBlock(name, std::vector<int64_t>(t.dim(), 0), t));
      }
    }
    return file.Close();
  };
  RETURN_IF_ERROR(everywhere(write()));
  return everywhere(rank == 0 ? nn::SharedSafetensorsWriter::Commit(path) : absl::OkStatus());
}

}  // namespace ember::models::gpt2
