// Trains GPT-2 on token shards and prints a sample:
//
//   bazel run -c opt //models/gpt2:train    # the main job: Brown corpus, a few minutes
//   bazel run -c opt //models/gpt2:train -- --model=small --steps=2000 --batch_size=16
//   bazel run -c opt //models/gpt2:train -- --resume=runs/gpt2/checkpoint.safetensors --steps=600
//   bazel run -c opt //models/gpt2:train -- --model=$PWD/models/gpt2/tiny.json   # a network spec
//
// --model=FILE.json trains the network that spec describes (nn/network_json.h: any layers from
// ids [B, T] to logits [B, T, V]; GPT-2's blocks are registered) with everything below
// but sharding; its sizes and dropout are its own, and no sample is printed (generate
// and chat run GPT-2's checkpoints).
// Without --train_data it trains on the Brown corpus tokenized with a byte-level BPE of
// --vocab_size tokens learnt from its training split (main_job.h; --vocab=gpt2 for
// GPT-2's). The defaults are the main job's on the device (main_job.h: the demo model on
// 2 CPU cores, the small one on a GPU, which --device=auto finds in a --config=cuda
// build); a flag given on the command line overrides the device's value.
// Every step shows on one line (step, loss, learning rate, tokens/s, elapsed, ETA), the
// validation loss every --val_every steps; each step goes to --out_dir/metrics.csv and
// metrics.jsonl (one JSON object a line with the same keys), loss.svg (the curves) is
// redrawn at each validation, the final figures go to --metrics_out as one JSON object
// (train_loss, val_loss, val_bpb, tokens_per_second, mfu, train_seconds,
// peak_memory_bytes, steps, parameters), and the model and optimizer to
// --save_checkpoint. --checkpoint_every=N also writes OUT_DIR/checkpoints/step_N.safetensors
// (keeping the newest --keep_checkpoints). Ctrl-C (SIGINT) or SIGTERM finishes the step,
// writes a checkpoint there and exits with 130 or 143; --resume=latest continues from the
// newest checkpoint, bit for bit; a second Ctrl-C exits at once, leaving the last
// complete checkpoint as it was.
//
// On several processes (data parallel; see trainer.h), --batch_size is per rank and rank
// 0 alone prints and writes:
//
//   mpirun -np 2 bazel-bin/models/gpt2/train --batch_size=4            # = one process of 8
//   mpirun -np 2 bazel-bin/models/gpt2/train --batch_size=4 --zero=1   # AdamW's state split
//
// --print_shardings prints where each parameter would live on --mesh under
// --sharding_rules (distributed/sharding.h) and exits; from one process it plans a mesh
// of any size. Training itself replicates the parameters (data parallel).

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/atomic_file.h"
#include "base/status.h"
#include "data/datasets.h"
#include "data/windows.h"
#include "distributed/mesh.h"
#include "distributed/process_group.h"
#include "distributed/sharding.h"
#include "models/common/checkpoints.h"
#include "models/common/loss_plot.h"
#include "models/common/precision.h"
#include "models/common/run_log.h"
#include "models/gpt2/main_job.h"
#include "models/gpt2/mfu.h"
#include "models/gpt2/model.h"
#include "models/gpt2/sample.h"
#include "models/gpt2/text_stream.h"
#include "models/gpt2/trainer.h"
#include "models/gpt2/weights.h"
#include "nlohmann/json.hpp"
#include "nn/module.h"
#include "tensor/cuda.h"
#include "tensor/storage.h"

// The flags that fill TrainOptions default to its values (trainer.h), but for the model,
// the batch, the schedule and dropout, which default to the main job's on the device
// (main_job.h), and validation, every 300 steps on 16 batches.
static const ember::models::gpt2::TrainOptions kDefaults;

ABSL_FLAG(std::optional<std::string>, model, std::nullopt,
          "a fresh model of this preset: demo, small, tiny, gpt2, gpt2-medium, ... (default: demo "
          "on a CPU, small on a GPU), or a network spec's file, FILE.json (nn/network_json.h)");
ABSL_FLAG(std::string, init_from, "",
          "start from these weights and their config (step 0): an ember checkpoint, llm.c's .bin "
          "or a Hugging Face GPT-2 folder");
ABSL_FLAG(std::string, resume, "",
          "continue this ember checkpoint's run exactly (to --steps); latest: the newest "
          "checkpoint in --out_dir");
ABSL_FLAG(std::string, train_data, "",
          "training token shards, llm.c's or headerless uint16 (nanoGPT's train.bin): a file or a "
          "glob (default: the Brown corpus in --vocab's tokens)");
ABSL_FLAG(std::string, conversations, "",
          "fine-tune on these conversations instead of token shards: JSON lines of "
          "{\"messages\": [{\"role\", \"content\"}, ...]} (conversations.h), the loss on the "
          "bot's turns only; the tokenizer is --vocab, else the --init_from checkpoint's");
ABSL_FLAG(std::string, vocab, "",
          "the data's tokens: brown (a byte-level BPE of --vocab_size trained on the Brown "
          "corpus's training split, "
          "once, into runs/data/), gpt2, or a .tiktoken file (default: brown for the default data, "
          "else gpt2)");
ABSL_FLAG(int64_t, vocab_size, 8192,
          "--vocab=brown: its tokens, the 256 bytes included (and <|endoftext|> after them)");
ABSL_FLAG(std::string, val_data, "",
          "validation token shard: a file or a glob, of which the first (default: Brown's)");
ABSL_FLAG(std::optional<int64_t>, batch_size, std::nullopt,
          "sequences per micro-batch (default: 32 on a CPU, 64 on a GPU)");
ABSL_FLAG(
    std::optional<int64_t>, seq_len, std::nullopt,
    "tokens per sequence, at most the model's block_size (default: 64 on a CPU, 256 on a GPU)");
ABSL_FLAG(int64_t, grad_accum, kDefaults.grad_accum, "micro-batches per optimizer step");
ABSL_FLAG(std::optional<int64_t>, steps, std::nullopt,
          "optimizer steps in all; a resumed run counts the ones done (default: 1800 on a CPU, "
          "2000 on a GPU)");
ABSL_FLAG(std::optional<double>, lr, std::nullopt,
          "peak learning rate (default: 6e-3 on a CPU, 1e-3 on a GPU)");
ABSL_FLAG(std::optional<int64_t>, warmup_steps, std::nullopt,
          "linear warmup steps (default: 50 on a CPU, 100 on a GPU)");
ABSL_FLAG(std::optional<double>, min_lr, std::nullopt,
          "learning rate at the end of the cosine decay (default: 6e-4 on a CPU, 1e-4 on a GPU)");
ABSL_FLAG(double, weight_decay, kDefaults.weight_decay,
          "AdamW weight decay (matrices and embeddings only)");
ABSL_FLAG(double, beta1, kDefaults.beta1, "AdamW beta1");
ABSL_FLAG(double, beta2, kDefaults.beta2, "AdamW beta2");
ABSL_FLAG(double, grad_clip, kDefaults.grad_clip,
          "clip the gradients' joint norm to this (0: off)");
ABSL_FLAG(std::optional<double>, dropout, std::nullopt,
          "dropout of a fresh model (default: 0 on a CPU, 0.2 on a GPU)");
ABSL_FLAG(double, attn_dropout, 0,
          "dropout on the attention weights (in the fused attention kernel), for a fresh model "
          "or --init_from");
ABSL_FLAG(int64_t, n_layer, 0, "a fresh model's blocks (0: the preset's)");
ABSL_FLAG(int64_t, n_head, 0, "a fresh model's attention heads (0: the preset's)");
ABSL_FLAG(int64_t, n_embd, 0, "a fresh model's width (0: the preset's)");
ABSL_FLAG(int64_t, block_size, 0, "a fresh model's positions (0: the preset's)");
ABSL_FLAG(uint64_t, seed, kDefaults.seed, "seed of initialisation, dropout and data order");
ABSL_FLAG(std::string, device, "auto",
          "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU and this is a "
          "--config=cuda build)");
ABSL_FLAG(std::string, dtype, "auto", ember::models::kDTypeFlagHelp);
ABSL_FLAG(bool, tf32, true,
          "on a GPU, f32 matmuls and attention's forward on TF32 tensor cores (10-bit mantissa "
          "inputs, f32 sums), as nanoGPT and llm.c's f32 build; --notf32 for full f32");
ABSL_FLAG(int, zero, kDefaults.zero_stage,
          "1: split AdamW's state across the ranks (ZeRO-1); 0: every rank holds all of it");
ABSL_FLAG(std::string, mesh, "",
          "the ranks as a grid of named axes, e.g. data:2,model:2 (default: one data axis over "
          "every rank): the data axis' ranks split the batch, the model axis' split each "
          "block's heads and MLP (tensor parallel)");
ABSL_FLAG(bool, fsdp, false,
          "fully sharded data parallel: the data axis' ranks also split the parameters, their "
          "gradients and AdamW's state (ZeRO-3), gathering a block's weights while it computes");
ABSL_FLAG(std::string, sharding_rules, "",
          "with --print_shardings: logical axis -> mesh axis, e.g. embed=data,mlp=model "
          "(default: what training uses, GPT-2's Megatron table qkv=model,heads=model,mlp=model, "
          "and embed=data with --fsdp)");
ABSL_FLAG(bool, print_shardings, false,
          "print each parameter's shard on --mesh under --sharding_rules and the bytes per rank, "
          "then exit (from one process: a plan for a mesh of any size)");
ABSL_FLAG(absl::Duration, dist_timeout, absl::Minutes(10),
          "under mpirun: a rank that waits this long for the others exits, ending the run");
ABSL_FLAG(std::string, data_order, "random", "random windows, or sequential (llm.c's order)");
ABSL_FLAG(int64_t, val_every, 300,
          "validation loss every this many steps (and at the end); loss.svg is redrawn then");
ABSL_FLAG(bool, plot_log_scale, false, "draw OUT_DIR/loss.svg with a logarithmic loss axis");
ABSL_FLAG(int64_t, val_batches, 16,
          "validation batches (fixed windows from the start of the shard)");
ABSL_FLAG(std::string, out_dir, "", "where metrics.csv goes (default: runs/gpt2 in the workspace)");
ABSL_FLAG(std::string, save_checkpoint, "",
          "checkpoint to write at the end (default: OUT_DIR/checkpoint.safetensors)");
ABSL_FLAG(int64_t, checkpoint_every, 0,
          "also write OUT_DIR/checkpoints/step_N.safetensors every this many steps (0: never)");
ABSL_FLAG(int64_t, keep_checkpoints, 3,
          "keep the newest this many of OUT_DIR/checkpoints/ (older ones are deleted)");
ABSL_FLAG(std::string, metrics_out, "", "write the final figures here as one JSON object");
ABSL_FLAG(int64_t, sample_tokens, 120,
          "tokens to sample at the end, at most: the sample ends at <|endoftext|> (0: none)");
ABSL_FLAG(double, temperature, 0.8, "sampling temperature");
ABSL_FLAG(int64_t, top_k, 40, "sample from the k most likely tokens (0: all)");

namespace ember::models::gpt2 {
namespace {

// `flag`'s value if given, else the main job's field on this device.
template <typename T, typename F>
T MainJobFlag(const absl::Flag<std::optional<T>>& flag, bool gpu, F MainJob::*field) {
  return absl::GetFlag(flag).value_or(T((gpu ? kGpuMainJob : kCpuMainJob).*field));
}

// --device; several ranks on a machine with GPUs take one each, unless --device names one.
absl::StatusOr<Device> DeviceFromFlags(const distributed::ProcessGroup& world) {
  const std::string flag = absl::GetFlag(FLAGS_device);
  ASSIGN_OR_RETURN(Device device, cuda::DeviceFromFlag(flag));
  if (world.size() > 1 && !device.is_cpu() && (flag == "cuda" || flag == "auto")) {
    device = Device::Cuda(distributed::LocalRank() % cuda::DeviceCount());
  }
  return device;
}

// The training options the flags give on `device` (its main job's where not given).
absl::StatusOr<TrainOptions> TrainOptionsFromFlags(Device device) {
  const bool gpu = !device.is_cpu();
  const std::string order = absl::GetFlag(FLAGS_data_order);
  if (order != "random" && order != "sequential") {
    return absl::InvalidArgumentError(
        absl::StrCat("--data_order=", order, ": expected random or sequential"));
  }
  TrainOptions options;
  options.batch_size = MainJobFlag(FLAGS_batch_size, gpu, &MainJob::batch_size);
  options.seq_len = MainJobFlag(FLAGS_seq_len, gpu, &MainJob::seq_len);
  options.grad_accum = absl::GetFlag(FLAGS_grad_accum);
  options.steps = MainJobFlag(FLAGS_steps, gpu, &MainJob::steps);
  options.lr = MainJobFlag(FLAGS_lr, gpu, &MainJob::lr);
  options.min_lr = MainJobFlag(FLAGS_min_lr, gpu, &MainJob::min_lr);
  options.warmup_steps = MainJobFlag(FLAGS_warmup_steps, gpu, &MainJob::warmup_steps);
  options.weight_decay = absl::GetFlag(FLAGS_weight_decay);
  options.beta1 = absl::GetFlag(FLAGS_beta1);
  options.beta2 = absl::GetFlag(FLAGS_beta2);
  options.grad_clip = absl::GetFlag(FLAGS_grad_clip);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.val_batches = absl::GetFlag(FLAGS_val_batches);
  options.sequential = order == "sequential";
  options.device = device;
  options.zero_stage = absl::GetFlag(FLAGS_zero);
  options.mesh = absl::GetFlag(FLAGS_mesh);
  options.fsdp = absl::GetFlag(FLAGS_fsdp);
  ASSIGN_OR_RETURN(options.dtype, ComputeDTypeFromFlag(absl::GetFlag(FLAGS_dtype), device));
  return options;
}

// A fresh model's config: the preset with the flags' changes, its head sized to the
// data's vocabulary.
GPTConfig ConfigFromFlags(GPTConfig preset, bool gpu, const TrainingData& data) {
  preset.dropout = MainJobFlag(FLAGS_dropout, gpu, &MainJob::dropout);
  preset.attn_dropout = absl::GetFlag(FLAGS_attn_dropout);
  if (data.encoding) preset.vocab_size = data.encoding->n_vocab();
  for (const auto& [flag, field] : {std::pair{&FLAGS_n_layer, &preset.n_layer},
                                    {&FLAGS_n_head, &preset.n_head},
                                    {&FLAGS_n_embd, &preset.n_embd},
                                    {&FLAGS_block_size, &preset.block_size}}) {
    if (absl::GetFlag(*flag) > 0) *field = absl::GetFlag(*flag);
  }
  return preset;
}

// The checkpoint a run starts from (--resume, where latest is the newest in out_dir, or
// --init_from) and whether it resumes the run; an empty path for a fresh model.
absl::StatusOr<std::pair<std::string, bool>> StartFromFlags(const std::string& out_dir) {
  std::string resume = absl::GetFlag(FLAGS_resume);
  const std::string init_from = absl::GetFlag(FLAGS_init_from);
  if (resume == "latest") {
    ASSIGN_OR_RETURN(resume, LatestCheckpoint(out_dir, "checkpoint.safetensors"));
  }
  if (!resume.empty() && !init_from.empty()) {
    return absl::InvalidArgumentError("give --resume or --init_from, not both");
  }
  return std::pair{resume.empty() ? init_from : resume, !resume.empty()};
}

// --conversations: read with the tokenizer of --vocab, else of the checkpoint the run
// starts from (its "vocab" metadata), else GPT-2's; no token shards.
absl::StatusOr<TrainingData> PrepareConversations(const std::string& checkpoint,
                                                  std::vector<Conversation>* conversations) {
  if (!absl::GetFlag(FLAGS_train_data).empty()) {
    return absl::InvalidArgumentError("give --conversations or --train_data, not both");
  }
  TrainingData data;
  data.vocab = absl::GetFlag(FLAGS_vocab);
  if (data.vocab.empty() && !checkpoint.empty()) {
    ASSIGN_OR_RETURN(const Weights weights, ReadWeights(checkpoint));
    const auto named = weights.metadata.find("vocab");
    if (named != weights.metadata.end()) data.vocab = named->second;
  }
  if (data.vocab.empty()) data.vocab = "gpt2";
  ASSIGN_OR_RETURN(tokenizer::Encoding encoding, LoadVocab(data.vocab));
  data.train_pattern = absl::GetFlag(FLAGS_conversations);
  ASSIGN_OR_RETURN(*conversations, ReadConversations(data.train_pattern, encoding));
  data.conversations = static_cast<int64_t>(conversations->size());
  data.encoding = std::move(encoding);
  return data;
}

// Rank 0's record of a run in out_dir: each step as a row of metrics.csv and a line of
// metrics.jsonl with the same keys (NaN: an empty field, a JSON null), so that anything
// can plot them, and loss.svg, the curves so far. Step 0 holds the first validation
// only; a resumed run appends after its checkpoint's step, its earlier curves read back
// from the CSV. The other ranks' records write nothing.
class RunRecord {
 public:
  static absl::StatusOr<RunRecord> Open(const std::string& out_dir, int64_t step, bool lead) {
    RunRecord record;
    record.lead_ = lead;
    record.plot_ = out_dir + "/loss.svg";
    if (step > 0) record.curves_ = ReadLossCurves(out_dir + "/metrics.csv");
    if (!lead) return record;
    for (const char* name : {"/metrics.csv", "/metrics.jsonl"}) {
      if (step > 0) RETURN_IF_ERROR(DropRowsAfter(out_dir + name, step));
    }
    const auto mode = step > 0 ? std::ios::app : std::ios::trunc;
    record.csv_.open(out_dir + "/metrics.csv", mode);
    record.jsonl_.open(out_dir + "/metrics.jsonl", mode);
    if (step == 0) {
      record.csv_ << "step,loss,val_loss,val_bpb,lr,grad_norm,tokens_per_second,seconds\n";
    }
    return record;
  }

  LossCurves& curves() { return curves_; }

  void Row(int64_t step, std::initializer_list<std::pair<const char*, double>> fields) {
    if (!lead_) return;
    nlohmann::ordered_json row = {{"step", step}};
    csv_ << step;
    for (const auto& [key, value] : fields) {
      csv_ << ',' << (std::isnan(value) ? "" : absl::StrCat(value));
      row[key] =
          std::isnan(value) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(value);
    }
    csv_ << '\n';
    jsonl_ << row.dump() << '\n';
    csv_.flush();  // a row a step, as it happens, for whoever watches the files
    jsonl_.flush();
  }

  absl::Status Plot() const {
    return lead_ ? WriteLossSvg(plot_, curves_, absl::GetFlag(FLAGS_plot_log_scale))
                 : absl::OkStatus();
  }

 private:
  bool lead_ = false;
  std::string plot_;
  LossCurves curves_;
  std::ofstream csv_, jsonl_;
};

// What the run trains, and its parameters: GPT-2's config, or the spec's file.
std::string ModelName(Trainer& t) {
  if (t.gpt() != nullptr) return t.gpt()->config().ToString();
  const std::string flag = absl::GetFlag(FLAGS_model).value_or("");
  return absl::EndsWith(flag, ".json") ? absl::StrCat("the model spec ", flag)
                                       : "the model spec of the checkpoint";
}
int64_t ParameterCount(Trainer& t) { return nn::CountParameters(t.model()).parameters; }

// The run's plan, on one line: model, device, data, steps and batch.
void PrintPlan(Trainer& t, const TrainOptions& options, const TrainingData& data, int world_size,
               bool resumed) {
  const bool gpu = !options.device.is_cpu();
  const distributed::Mesh& mesh = t.mesh();
  const bool plain = mesh.size("model") == 1 && t.sharded_model().fsdp() == nullptr;
  const std::string ranks =
      world_size == 1 ? ""
      : plain         ? absl::StrCat(world_size, " ranks x ")
                      : absl::StrCat(world_size, " ranks (mesh ", mesh.ToString(),
                             t.sharded_model().fsdp() != nullptr ? ", FSDP" : "", ") x ");
  const std::string batch_ranks =
      mesh.size("data") > 1 ? absl::StrCat(mesh.size("data"), " data ranks x ") : "";
  std::fprintf(
      stderr,
      "train: %s on %s%s%s%s, %.2fM parameters; %s (%s%s)%s; %lld steps of "
      "%lld x %s%lld x %lld tokens\n",
      ModelName(t).c_str(), ranks.c_str(), options.device.ToString().c_str(),
      options.dtype == DType::kBF16 ? " (bf16 autocast)"
      : gpu                         ? (cuda::AllowTf32() ? " (TF32 matmuls)" : " (f32 matmuls)")
                                    : "",
      options.zero_stage == 1 ? " (ZeRO-1)" : "", ParameterCount(t) / 1e6,
      (data.conversations > 0 ? absl::StrCat(data.conversations, " conversations")
                              : absl::StrCat(data.train_tokens(), " training tokens"))
          .c_str(),
      data.train_pattern.c_str(),
      data.train.size() > 1 ? absl::StrCat(": ", data.train.size(), " shards").c_str() : "",
      resumed ? absl::StrCat("; resuming at step ", t.step()).c_str() : "",
      static_cast<long long>(options.steps), static_cast<long long>(options.grad_accum),
      plain ? ranks.c_str() : batch_ranks.c_str(), static_cast<long long>(options.batch_size),
      static_cast<long long>(options.seq_len));
}

// The validation loss with its bits per byte (NaN without validation data, or for a
// model whose vocabulary is not the data's).
struct Validation {
  const TrainingData& data;
  int64_t tokens;  // the validation windows' targets (ValidationLoss's first batches)

  std::pair<double, double> operator()(Trainer& t) const {
    const double loss = t.ValidationLoss();
    const bool bpb = data.encoding && t.vocab_size() == data.encoding->n_vocab();
    return {loss, bpb ? BitsPerByte(loss, *data.val, tokens, *data.encoding) : std::nan("")};
  }
};

// What a run sums as it goes.
struct RunTotals {
  double train_seconds = 0, comm_seconds = 0, comm_wait = 0;  // the last two: all-reduces
  // This rank's tensor memory after the last step (parameters, gradients, AdamW's state)
  // and at its peak while training (activations too), before any checkpoint's gathering.
  int64_t live_bytes = 0, peak_bytes = 0;
  double last_loss = std::nan("");
  std::pair<double, double> val{std::nan(""), std::nan("")};  // the last validation's
};

// The tensor memory on `device`: live and peak bytes.
std::pair<int64_t, int64_t> TensorMemory(Device device) {
  if (device.is_cpu()) return {GetCpuAllocator().live_bytes(), GetCpuAllocator().peak_bytes()};
  const auto stats = cuda::GetMemoryStats(device.index);
  return {stats.live_bytes, stats.peak_bytes};
}

// Steps `t` to options.steps: progress, validation every --val_every steps (and at the
// end), a record row a step, checkpoints every --checkpoint_every steps. A stop signal
// on any rank ends every rank after the same step with a checkpoint, and returns true.
absl::StatusOr<bool> TrainSteps(Trainer& t, const TrainOptions& options,
                                distributed::ProcessGroup& world, const std::string& out_dir,
                                const Validation& validate, RunRecord& record, RunTotals& totals) {
  const bool lead = world.rank() == 0;
  const int64_t first = t.step();
  const int64_t tokens_per_step =
      options.grad_accum * t.mesh().size("data") * options.batch_size * options.seq_len;
  const int64_t val_every = std::max<int64_t>(1, absl::GetFlag(FLAGS_val_every));
  const double none = std::nan("");
  CatchStopSignals();
  while (t.step() < options.steps) {
    const StepResult r = t.Step();
    totals.train_seconds += r.seconds;
    totals.comm_seconds += r.comm_seconds;
    totals.comm_wait += r.comm_wait_seconds;
    totals.last_loss = r.loss;
    record.curves().train.emplace_back(r.step + 1, r.loss);
    if (lead) {
      ShowProgress("step", r.step + 1, options.steps, first,
                   absl::StrFormat("loss %.4f | lr %.2e | norm %.2f", r.loss, r.lr, r.grad_norm),
                   (r.step + 1 - first) * tokens_per_step / totals.train_seconds, "tok",
                   totals.train_seconds);
    }
    std::pair<double, double> step_val{none, none};
    if (validate.data.val && ((r.step + 1) % val_every == 0 || r.step + 1 == options.steps)) {
      step_val = totals.val = validate(t);
      record.curves().val.emplace_back(r.step + 1, step_val.first);
      if (lead) {
        EndProgress();
        std::fprintf(stderr, "step %lld: val loss %.4f, val_bpb %.3f\n",
                     static_cast<long long>(r.step + 1), step_val.first, step_val.second);
      }
      RETURN_IF_ERROR(record.Plot());
    }
    record.Row(r.step + 1, {{"loss", r.loss},
                            {"val_loss", step_val.first},
                            {"val_bpb", step_val.second},
                            {"lr", r.lr},
                            {"grad_norm", r.grad_norm},
                            {"tokens_per_second", tokens_per_step / r.seconds},
                            {"seconds", r.seconds}});
    bool stop = StopSignal() != 0;
    if (world.size() > 1) stop = world.AllReduce(stop ? 1.0 : 0.0) > 0;
    const int64_t every = absl::GetFlag(FLAGS_checkpoint_every);
    if (stop || (every > 0 && t.step() % every == 0 && t.step() < options.steps)) {
      const std::string path = StepCheckpointPath(out_dir, t.step());
      RETURN_IF_ERROR(t.SaveCheckpoint(path));  // collective
      if (lead) PruneStepCheckpoints(out_dir, absl::GetFlag(FLAGS_keep_checkpoints));
      if (stop && lead) ReportStop(t.step(), path);
      if (stop) return true;
    }
  }
  if (lead) EndProgress();
  std::tie(totals.live_bytes, totals.peak_bytes) = TensorMemory(options.device);
  if (world.size() > 1) {
    // Each rank's own: sharded runs differ in what they hold.
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    std::fprintf(stderr,
                 "train: rank %d: tensor memory %.1f MB after the last step (parameters, "
                 "gradients, AdamW's state), %.1f MB at its peak; peak RSS %.0f MB\n",
                 world.rank(), totals.live_bytes / 1e6, totals.peak_bytes / 1e6,
                 usage.ru_maxrss * 1024 / 1e6);
  }
  return false;
}

// What the run did: its summary line, the all-reduce's line under several ranks, and
// --metrics_out. On a GPU, llm.c's model FLOPs utilisation (mfu.h): each GPU's share of
// the tokens against its dense bf16 peak; not reported for a GPU mfu.h does not know.
absl::Status Summarize(Trainer& t, const TrainOptions& options, int64_t steps,
                       const RunTotals& totals, const std::string& checkpoint,
                       const std::string& out_dir, int data_ranks) {
  const int world_size = distributed::World().size();
  const int64_t tokens_per_step =
      options.grad_accum * data_ranks * options.batch_size * options.seq_len;
  const double train_seconds = totals.train_seconds;
  const double tokens_per_second = train_seconds > 0 ? steps * tokens_per_step / train_seconds : 0;
  const int64_t peak = totals.peak_bytes;
  double mfu = std::nan("");
  std::string mfu_text;
  if (!options.device.is_cpu() && t.gpt() != nullptr) {  // llm.c's count is GPT-2's
    const std::string name = cuda::DeviceName(options.device.index);
    if (const double peak_flops = Bf16PeakFlops(name); peak_flops > 0) {
      const GPTConfig& config = t.gpt()->config();
      mfu = FlopsPerToken(config.NumParameters(), config, options.seq_len) * tokens_per_second /
            static_cast<double>(world_size) / peak_flops;
      mfu_text = absl::StrFormat(", MFU %.1f%% (of the %s's bf16 peak)", 100 * mfu, name);
    }
  }
  std::fprintf(stderr,
               "train: %lld steps in %s, %.0f tokens/s%s, peak tensor memory %.0f MB%s; wrote %s "
               "and %s/{metrics.csv,metrics.jsonl,loss.svg}\n",
               static_cast<long long>(steps), FormatDuration(train_seconds).c_str(),
               tokens_per_second, mfu_text.c_str(), peak / 1e6, world_size > 1 ? " (rank 0)" : "",
               checkpoint.c_str(), out_dir.c_str());
  if (totals.comm_seconds > 0) {
    std::fprintf(stderr,
                 "train: gradient all-reduce %.3f s per step, %.0f%% of it hidden behind backward "
                 "(waited %.3f s per step)\n",
                 totals.comm_seconds / steps, 100 * (1 - totals.comm_wait / totals.comm_seconds),
                 totals.comm_wait / steps);
  }
  const std::string path = absl::GetFlag(FLAGS_metrics_out);
  if (path.empty()) return absl::OkStatus();
  return WriteMetricsJson(path, {{"train_loss", totals.last_loss},
                                 {"val_loss", totals.val.first},
                                 {"val_bpb", totals.val.second},
                                 {"tokens_per_second", tokens_per_second},
                                 {"mfu", mfu},
                                 {"train_seconds", train_seconds},
                                 {"peak_memory_bytes", peak},
                                 {"steps", t.step()},
                                 {"live_memory_bytes", totals.live_bytes},
                                 {"parameters", ParameterCount(t)}});
}

// --print_shardings: the plan of --mesh under --sharding_rules (default: the table
// training uses, with --fsdp's embed=data) for this model (its specs alone, on the meta
// device), printed by rank 0.
absl::Status PrintShardings(const GPTConfig& config, distributed::ProcessGroup& world) {
  const std::string spec = absl::GetFlag(FLAGS_mesh);
  ASSIGN_OR_RETURN(
      const distributed::Mesh mesh,
      distributed::Mesh::Layout(spec, world.size() == 1 ? 0 : world.size(), world.rank()));
  distributed::ShardingRules rules = Gpt2ShardingRules(absl::GetFlag(FLAGS_fsdp));
  if (!absl::GetFlag(FLAGS_sharding_rules).empty()) {
    ASSIGN_OR_RETURN(rules, distributed::ShardingRules::Parse(absl::GetFlag(FLAGS_sharding_rules)));
  }
  const nn::MetaDeviceGuard meta;  // specs only, no memory
  const GPT model(config);
  ASSIGN_OR_RETURN(const std::vector<distributed::ParamSharding> shardings,
                   distributed::Shardings(model, mesh, rules));
  if (world.rank() == 0)
    std::printf("%s", distributed::ShardingsTable(shardings, mesh, rules).c_str());
  return absl::OkStatus();
}

// Up to --sample_tokens tokens after <|endoftext|>, on stdout, ending at the next
// <|endoftext|> (a document's end: what a model trained on documents or conversations
// writes after it is the start of another, not more of this one).
void PrintSample(Trainer& t, const tokenizer::Encoding& encoding, const SamplingOptions& sampling,
                 uint64_t seed) {
  const int64_t n = absl::GetFlag(FLAGS_sample_tokens);
  Generator gen(seed);
  const int64_t eot = encoding.specials().at("<|endoftext|>");
  std::vector<int64_t> ids = Generate(*t.gpt(), {eot}, n, sampling, gen, /*stop=*/eot);
  if (ids.size() > 1 && ids.back() == eot) ids.pop_back();
  const std::vector<tokenizer::Rank> text_ids(ids.begin() + 1, ids.end());
  std::printf("---- sample (%zu tokens, temperature %.2f, top-k %lld) ----\n%s\n", text_ids.size(),
              sampling.temperature, static_cast<long long>(sampling.top_k),
              encoding.Decode(text_ids)->c_str());
}

absl::Status Run() {
  distributed::SetTimeout(absl::GetFlag(FLAGS_dist_timeout));
  distributed::ProcessGroup& world = distributed::World();
  const bool lead = world.rank() == 0;  // the rank that prints and writes
  ASSIGN_OR_RETURN(const Device device, DeviceFromFlags(world));
  const bool gpu = !device.is_cpu();
  cuda::SetAllowTf32(absl::GetFlag(FLAGS_tf32));
  // The flags that need no data are checked before the corpus is read (or a vocabulary
  // learnt), the sample's before the training.
  ASSIGN_OR_RETURN(TrainOptions options, TrainOptionsFromFlags(device));
  const std::string model = MainJobFlag(FLAGS_model, gpu, &MainJob::model);
  GPTConfig preset;
  if (absl::EndsWith(model, ".json")) {
    ASSIGN_OR_RETURN(options.model_spec, data::ReadUtf8File(model));
    for (const auto* flag : {&FLAGS_n_layer, &FLAGS_n_head, &FLAGS_n_embd, &FLAGS_block_size}) {
      if (absl::GetFlag(*flag) > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--model=", model,
                         ": a spec gives its own sizes (--n_layer, --n_head, "
                         "--n_embd and --block_size change a preset's)"));
      }
    }
    if (absl::GetFlag(FLAGS_dropout) || absl::GetFlag(FLAGS_attn_dropout) > 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--model=", model, ": a spec gives its own dropout (its layers' \"dropout\")"));
    }
  } else {
    ASSIGN_OR_RETURN(preset, GPTConfig::Preset(model));
  }
  const std::string out_dir = PathOrWorkspace(absl::GetFlag(FLAGS_out_dir), "runs/gpt2");
  ASSIGN_OR_RETURN(const auto start, StartFromFlags(out_dir));
  SamplingOptions sampling;
  sampling.temperature = absl::GetFlag(FLAGS_temperature);
  sampling.top_k = absl::GetFlag(FLAGS_top_k);
  RETURN_IF_ERROR(sampling.Validate());
  if (lead) RETURN_IF_ERROR(CreateDirectories(out_dir));
  std::vector<Conversation> conversations;
  ASSIGN_OR_RETURN(
      const TrainingData data,
      absl::GetFlag(FLAGS_conversations).empty()
          ? PrepareData({absl::GetFlag(FLAGS_train_data), absl::GetFlag(FLAGS_val_data),
                         absl::GetFlag(FLAGS_vocab), absl::GetFlag(FLAGS_vocab_size)},
                        world)
          : PrepareConversations(start.first, &conversations));
  if (data.encoding) options.vocab = data.vocab;  // for generate and chat, in the checkpoint
  if (absl::GetFlag(FLAGS_print_shardings)) {
    if (!options.model_spec.empty()) {
      return absl::InvalidArgumentError("--print_shardings plans GPT-2's presets, not a spec");
    }
    return PrintShardings(ConfigFromFlags(preset, gpu, data), world);
  }
  if (!absl::GetFlag(FLAGS_sharding_rules).empty()) {
    return absl::InvalidArgumentError(
        "--sharding_rules is for planning with --print_shardings; training shards GPT-2 by its "
        "own table (--mesh's model axis, and --fsdp for the data axis)");
  }
  std::vector<const data::TokenShard*> train_shards;
  for (const data::TokenShard& shard : data.train) train_shards.push_back(&shard);
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                   Trainer::Create(ConfigFromFlags(preset, gpu, data), options, train_shards,
                                   data.val ? &*data.val : nullptr, start.first, start.second,
                                   conversations.empty() ? nullptr : &conversations));
  Trainer& t = *trainer;
  if (lead) PrintPlan(t, options, data, world.size(), start.second);

  const int64_t first = t.step();
  ASSIGN_OR_RETURN(RunRecord record, RunRecord::Open(out_dir, first, lead));
  const int64_t rows_per_step = t.mesh().size("data") * options.batch_size;
  record.curves().tokens_per_step =
      static_cast<double>(options.grad_accum * rows_per_step * options.seq_len);
  record.curves().title =
      t.gpt() != nullptr
          ? absl::StrFormat("GPT-2, %lld layers x %lld, %.2fM parameters",
                            static_cast<long long>(t.gpt()->config().n_layer),
                            static_cast<long long>(t.gpt()->config().n_embd),
                            ParameterCount(t) / 1e6)
          : absl::StrFormat("%s, %.2fM parameters", ModelName(t), ParameterCount(t) / 1e6);
  const Validation validate{
      data, data.val ? std::min(options.val_batches,
                                data::WindowCount(*data.val, options.seq_len) / rows_per_step) *
                           rows_per_step * options.seq_len
                     : 0};
  GetCpuAllocator().ResetPeak();
  RunTotals totals;
  if (first == 0 && data.val) {
    totals.val = validate(t);
    record.curves().val.emplace_back(0, totals.val.first);
    const double none = std::nan("");
    record.Row(0, {{"loss", none},
                   {"val_loss", totals.val.first},
                   {"val_bpb", totals.val.second},
                   {"lr", none},
                   {"grad_norm", none},
                   {"tokens_per_second", none},
                   {"seconds", none}});
    if (lead) {
      std::fprintf(stderr, "step 0: val loss %.4f (ln %lld = %.4f), val_bpb %.3f\n",
                   totals.val.first, static_cast<long long>(t.vocab_size()),
                   std::log(static_cast<double>(t.vocab_size())), totals.val.second);
    }
  }
  ASSIGN_OR_RETURN(const bool stopped,
                   TrainSteps(t, options, world, out_dir, validate, record, totals));
  if (stopped) return absl::OkStatus();  // main exits with 128 + the signal
  const std::string checkpoint = absl::GetFlag(FLAGS_save_checkpoint).empty()
                                     ? out_dir + "/checkpoint.safetensors"
                                     : absl::GetFlag(FLAGS_save_checkpoint);
  RETURN_IF_ERROR(t.SaveCheckpoint(checkpoint));
  if (!lead) return absl::OkStatus();
  RETURN_IF_ERROR(
      Summarize(t, options, t.step() - first, totals, checkpoint, out_dir, t.mesh().size("data")));
  if (absl::GetFlag(FLAGS_sample_tokens) > 0 && t.sharded_model().split()) {
    std::fprintf(stderr, "train: no sample from a sharded model: generate --checkpoint=%s\n",
                 checkpoint.c_str());
  } else if (absl::GetFlag(FLAGS_sample_tokens) > 0 && data.encoding && t.gpt() != nullptr &&
             t.vocab_size() == data.encoding->n_vocab()) {
    PrintSample(t, *data.encoding, sampling, options.seed);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::gpt2

int main(int argc, char** argv) {
  const int code = ember::RunMain(argc, argv, "train",
                                  "trains GPT-2 on token shards; see models/gpt2/train.cc's header",
                                  &ember::models::gpt2::Run);
  return ember::models::ExitCodeAfterSignal(code);
}
