// Trains GPT-2 on token shards and prints a sample:
//
//   bazel run -c opt //models/gpt2:train                      # the demo: Brown corpus, a few minutes
//   bazel run -c opt //models/gpt2:train -- --model=small --steps=2000 --batch_size=16
//   bazel run -c opt //models/gpt2:train -- --resume=runs/gpt2/checkpoint.safetensors --steps=600
//
// Without --train_data it trains on the Brown corpus tokenized with a byte-level BPE of
// --vocab_size tokens learnt from its training split (runs/data/brown_bpe8192.tiktoken
// and _{train,val}.bin, made from ./setup.sh's download on first use; --vocab=gpt2 for
// GPT-2's). The defaults are the main job's, sized for about five minutes: on 2 CPU cores
// the demo model (8,192 tokens, 1,800 steps of 32 x 64, AdamW at 6e-3 decaying to 6e-4);
// on a GPU (--device=auto finds one in a --config=cuda build) the small model (see
// MainJob below). A flag given on the command line overrides the device's value.
// Every step shows on one line (step, loss, learning rate, tokens/s, elapsed, ETA), the
// validation loss every --val_every steps; each step goes to --out_dir/metrics.csv (and
// metrics.jsonl, one JSON object a line with the same keys; loss.svg, the curves, is
// redrawn at each validation), the
// final figures to --metrics_out as one JSON object (train_loss, val_loss, val_bpb,
// tokens_per_second, train_seconds, peak_memory_bytes, steps, parameters), and the model
// and optimizer to --save_checkpoint. --checkpoint_every=N also writes
// OUT_DIR/checkpoints/step_N.safetensors (keeping the newest --keep_checkpoints). Ctrl-C
// (SIGINT) or SIGTERM finishes the step, writes a checkpoint there and exits with 130 or
// 143; --resume=latest continues from the newest checkpoint, bit for bit; a second
// Ctrl-C exits at once, leaving the last complete checkpoint as it was.
//
// On several processes (data parallel; see trainer.h), --batch_size is per rank and rank
// 0 alone prints and writes:
//
//   mpirun -np 2 bazel-bin/models/gpt2/train --batch_size=4            # = one process of 8
//   mpirun -np 2 bazel-bin/models/gpt2/train --batch_size=4 --zero=1   # AdamW's state split
//   mpirun --hostfile hosts -np 16 bazel-bin/models/gpt2/train ...     # machines in `hosts`

#include <glob.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "base/atomic_file.h"
#include "base/cpus.h"
#include "base/status.h"
#include "data/datasets.h"
#include "data/prepare.h"
#include "data/shards.h"
#include "data/windows.h"
#include "distributed/process_group.h"
#include "models/common/checkpoints.h"
#include "models/common/loss_plot.h"
#include "models/common/run_log.h"
#include "models/gpt2/mfu.h"
#include "models/gpt2/model.h"
#include "models/gpt2/sample.h"
#include "models/gpt2/text_stream.h"
#include "models/gpt2/trainer.h"
#include "nlohmann/json.hpp"
#include "tensor/storage.h"
#include "tokenizer/trainer.h"
#include "tokenizer/vocab.h"
#include "tensor/cuda.h"

// The flags that fill TrainOptions default to its values (trainer.h), but for the model,
// the batch, the schedule and validation, which default to the main job's on a CPU (see
// MainJob below): the demo model on the Brown corpus in an 8,192-token BPE learnt from
// its training split, 1,800 steps of 32 x 64 tokens (about 5 minutes on 2 cores),
// validation every 300 steps on 16 batches.
static const ember::models::gpt2::TrainOptions kDefaults;

ABSL_FLAG(std::optional<std::string>, model, std::nullopt,
          "a fresh model of this preset: demo, small, tiny, gpt2, gpt2-medium, ... (default: demo on a CPU, small on a GPU)");
ABSL_FLAG(std::string, init_from, "", "start from these weights and their config (step 0): an ember checkpoint, llm.c's .bin or a Hugging Face GPT-2 folder");
ABSL_FLAG(std::string, resume, "", "continue this ember checkpoint's run exactly (to --steps); latest: the newest checkpoint in --out_dir");
ABSL_FLAG(std::string, train_data, "", "training token shards: a file or a glob (default: the Brown corpus in --vocab's tokens)");
ABSL_FLAG(std::string, vocab, "",
          "the data's tokens: brown (a byte-level BPE of --vocab_size trained on the Brown corpus's training split, "
          "once, into runs/data/), gpt2, or a .tiktoken file (default: brown for the default data, else gpt2)");
ABSL_FLAG(int64_t, vocab_size, 8192, "--vocab=brown: its tokens, the 256 bytes included (and <|endoftext|> after them)");
ABSL_FLAG(std::string, val_data, "", "validation token shard: a file or a glob, of which the first (default: Brown's)");
ABSL_FLAG(std::optional<int64_t>, batch_size, std::nullopt, "sequences per micro-batch (default: 32 on a CPU, 64 on a GPU)");
ABSL_FLAG(std::optional<int64_t>, seq_len, std::nullopt,
          "tokens per sequence, at most the model's block_size (default: 64 on a CPU, 256 on a GPU)");
ABSL_FLAG(int64_t, grad_accum, kDefaults.grad_accum, "micro-batches per optimizer step");
ABSL_FLAG(std::optional<int64_t>, steps, std::nullopt,
          "optimizer steps in all; a resumed run counts the ones done (default: 1800 on a CPU, 2000 on a GPU)");
ABSL_FLAG(std::optional<double>, lr, std::nullopt, "peak learning rate (default: 6e-3 on a CPU, 1e-3 on a GPU)");
ABSL_FLAG(std::optional<int64_t>, warmup_steps, std::nullopt, "linear warmup steps (default: 50 on a CPU, 100 on a GPU)");
ABSL_FLAG(std::optional<double>, min_lr, std::nullopt,
          "learning rate at the end of the cosine decay (default: 6e-4 on a CPU, 1e-4 on a GPU)");
ABSL_FLAG(double, weight_decay, kDefaults.weight_decay, "AdamW weight decay (matrices and embeddings only)");
ABSL_FLAG(double, beta1, kDefaults.beta1, "AdamW beta1");
ABSL_FLAG(double, beta2, kDefaults.beta2, "AdamW beta2");
ABSL_FLAG(double, grad_clip, kDefaults.grad_clip, "clip the gradients' joint norm to this (0: off)");
ABSL_FLAG(std::optional<double>, dropout, std::nullopt, "dropout of a fresh model (default: 0 on a CPU, 0.2 on a GPU)");
ABSL_FLAG(int64_t, n_layer, 0, "a fresh model's blocks (0: the preset's)");
ABSL_FLAG(int64_t, n_head, 0, "a fresh model's attention heads (0: the preset's)");
ABSL_FLAG(int64_t, n_embd, 0, "a fresh model's width (0: the preset's)");
ABSL_FLAG(int64_t, block_size, 0, "a fresh model's positions (0: the preset's)");
ABSL_FLAG(uint64_t, seed, kDefaults.seed, "seed of initialisation, dropout and data order");
ABSL_FLAG(std::string, device, "auto", "where to run: cpu, cuda, cuda:N, or auto (cuda:0 when there is a GPU and this is a --config=cuda build)");
ABSL_FLAG(bool, tf32, true, "on a GPU, f32 matmuls and attention's forward on TF32 tensor cores (10-bit mantissa inputs, f32 sums), as nanoGPT and llm.c's f32 build; --notf32 for full f32");
ABSL_FLAG(int, zero, kDefaults.zero_stage, "1: split AdamW's state across the ranks (ZeRO-1); 0: every rank holds all of it");
ABSL_FLAG(absl::Duration, dist_timeout, absl::Minutes(10), "under mpirun: a rank that waits this long for the others exits, ending the run");
ABSL_FLAG(std::string, data_order, "random", "random windows, or sequential (llm.c's order)");
ABSL_FLAG(int64_t, val_every, 300, "validation loss every this many steps (and at the end); loss.svg is redrawn then");
ABSL_FLAG(bool, plot_log_scale, false, "draw OUT_DIR/loss.svg with a logarithmic loss axis");
ABSL_FLAG(int64_t, val_batches, 16, "validation batches (fixed windows from the start of the shard)");
ABSL_FLAG(std::string, out_dir, "", "where metrics.csv goes (default: runs/gpt2 in the workspace)");
ABSL_FLAG(std::string, save_checkpoint, "", "checkpoint to write at the end (default: OUT_DIR/checkpoint.safetensors)");
ABSL_FLAG(int64_t, checkpoint_every, 0, "also write OUT_DIR/checkpoints/step_N.safetensors every this many steps (0: never)");
ABSL_FLAG(int64_t, keep_checkpoints, 3, "keep the newest this many of OUT_DIR/checkpoints/ (older ones are deleted)");
ABSL_FLAG(std::string, metrics_out, "", "write the final figures here as one JSON object");
ABSL_FLAG(int64_t, sample_tokens, 120, "tokens to sample at the end (0: none)");
ABSL_FLAG(double, temperature, 0.8, "sampling temperature");
ABSL_FLAG(int64_t, top_k, 40, "sample from the k most likely tokens (0: all)");

namespace ember::models::gpt2 {
namespace {

// The Brown corpus's share of validation documents (every tenth).
constexpr double kValFraction = 0.1;

// --vocab=brown: a byte-level BPE of `size` tokens learnt from the documents of the
// Brown corpus's training split (every one TokenizeDocuments does not hold out for
// validation, so the vocabulary has not seen the validation text), made once.
absl::StatusOr<std::string> EnsureBrownVocab(const std::vector<data::Document>& docs, int64_t size) {
  const std::string path = WorkspacePath(absl::StrCat("runs/data/brown_bpe", size, ".tiktoken"));
  if (std::filesystem::exists(path)) return path;
  std::string text;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!data::IsValidationDocument(i, docs.size(), kValFraction)) text += docs[i].text;
  }
  std::fprintf(stderr, "train: learning a %lld-token BPE from the Brown corpus's training split into %s (once)\n",
               static_cast<long long>(size), path.c_str());
  tokenizer::TrainerOptions options;
  options.vocab_size = static_cast<size_t>(size);
  ASSIGN_OR_RETURN(const tokenizer::Ranks ranks, tokenizer::TrainBpe(text, options));
  RETURN_IF_ERROR(CreateDirectories(std::filesystem::path(path).parent_path().string()));
  RETURN_IF_ERROR(tokenizer::WriteTiktokenRanks(ranks, path));
  return path;
}

// The Brown corpus in `vocab`'s tokens (gpt2, or brown and the vocabulary's path),
// tokenized once into PREFIX_train.bin and PREFIX_val.bin.
absl::Status EnsureBrownShards(const std::vector<data::Document>& docs, const tokenizer::Encoding& encoding,
                               const std::string& train, const std::string& val) {
  if (std::filesystem::exists(train) && std::filesystem::exists(val)) return absl::OkStatus();
  std::fprintf(stderr, "train: tokenizing the Brown corpus with %s into %s (once)\n", encoding.name().c_str(),
               train.c_str());
  const int threads = AvailableCpus();
  ASSIGN_OR_RETURN(data::TokenSplit split, data::TokenizeDocuments(
      docs, [&](const std::string& text) { return encoding.EncodeOrdinary(text, threads); },
      static_cast<uint16_t>(encoding.specials().at("<|endoftext|>")), kValFraction, data::ProgressBar()));
  RETURN_IF_ERROR(CreateDirectories(std::filesystem::path(train).parent_path().string()));
  RETURN_IF_ERROR(data::WriteTokenShard(train, split.train));
  return data::WriteTokenShard(val, split.val);
}

// Bits per byte of a mean loss (nats per token) over the first `tokens` targets of the
// validation shard (positions 1 to tokens, as ValidationLoss's windows): the loss in
// bits over the bytes of text those tokens stand for (a special token stands for none).
double BitsPerByte(double loss, const data::TokenShard& val, int64_t tokens, const tokenizer::Encoding& encoding) {
  int64_t bytes = 0;
  for (int64_t i = 1; i <= tokens && i < val.size(); ++i) {
    const absl::StatusOr<std::string> text = encoding.DecodeBytes({val.tokens()[i]});
    if (text.ok() && !encoding.specials().contains(*text)) bytes += static_cast<int64_t>(text->size());
  }
  return bytes > 0 ? loss * static_cast<double>(tokens) / std::log(2.0) / static_cast<double>(bytes) : std::nan("");
}

// The main job on each device: the defaults of the flags that shape the run. On 2 CPU
// cores, the demo model for 1,800 steps of 32 x 64 tokens (chosen from runs of equal
// time; docs/getting-started.md says which). A GPU has some hundred times that
// arithmetic, so there the model grows to nanoGPT's Shakespeare shape (the small preset:
// 6 layers x 384, 256 positions) with its batch (64 x 256), learning rate (1e-3 to 1e-4)
// and dropout (0.2): 2,000 steps see Brown's 1.4M training tokens about 24 times, which
// without dropout would overfit.
struct MainJob {
  const char* model;
  int64_t batch_size, seq_len, steps, warmup_steps;
  double lr, min_lr, dropout;
};
constexpr MainJob kCpuMainJob{"demo", 32, 64, 1800, 50, 6e-3, 6e-4, 0.0};
constexpr MainJob kGpuMainJob{"small", 64, 256, 2000, 100, 1e-3, 1e-4, 0.2};

// `flag`'s value if given, else the main job's field on this device.
template <typename T, typename F>
T MainJobFlag(const absl::Flag<std::optional<T>>& flag, bool gpu, F MainJob::*field) {
  return absl::GetFlag(flag).value_or(T((gpu ? kGpuMainJob : kCpuMainJob).*field));
}

// Writes OUT_DIR/checkpoints/step_N.safetensors (the collective SaveCheckpoint), then
// rank 0 deletes all but the newest `keep`.
absl::StatusOr<std::string> SaveStepCheckpoint(Trainer& t, const std::string& out_dir, int64_t keep, bool lead) {
  const std::string path = StepCheckpointPath(out_dir, t.step());
  RETURN_IF_ERROR(t.SaveCheckpoint(path));
  if (lead) PruneStepCheckpoints(out_dir, keep);
  return path;
}

// The files `pattern` names: itself, or the sorted matches of a glob (* ? [...]).
absl::StatusOr<std::vector<std::string>> Expand(const std::string& flag, const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) return std::vector<std::string>{pattern};
  glob_t matches;
  const int rc = glob(pattern.c_str(), 0, nullptr, &matches);
  std::vector<std::string> paths;
  for (size_t i = 0; rc == 0 && i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  globfree(&matches);
  if (paths.empty()) return absl::NotFoundError(absl::StrCat("--", flag, "=", pattern, " matches no file"));
  return paths;
}

absl::Status Run() {
  distributed::SetTimeout(absl::GetFlag(FLAGS_dist_timeout));
  distributed::ProcessGroup& world = distributed::World();
  const bool lead = world.rank() == 0;  // the rank that prints and writes
  ASSIGN_OR_RETURN(Device device, cuda::DeviceFromFlag(absl::GetFlag(FLAGS_device)));
  // Several ranks on a machine with GPUs: one each, unless --device names one.
  const std::string device_flag = absl::GetFlag(FLAGS_device);
  if (world.size() > 1 && !device.is_cpu() && (device_flag == "cuda" || device_flag == "auto")) {
    device = Device::Cuda(distributed::LocalRank() % cuda::DeviceCount());
  }
  const bool gpu = !device.is_cpu();
  cuda::SetAllowTf32(absl::GetFlag(FLAGS_tf32));
  // The flags that need no data are checked before the corpus is read (or a vocabulary learnt).
  ASSIGN_OR_RETURN(GPTConfig config,
                   GPTConfig::Preset(MainJobFlag(FLAGS_model, gpu, &MainJob::model)));
  const std::string order = absl::GetFlag(FLAGS_data_order);
  if (order != "random" && order != "sequential") {
    return absl::InvalidArgumentError(absl::StrCat("--data_order=", order, ": expected random or sequential"));
  }
  const std::string out_dir = PathOrWorkspace(absl::GetFlag(FLAGS_out_dir), "runs/gpt2");
  std::string resume = absl::GetFlag(FLAGS_resume);
  const std::string init_from = absl::GetFlag(FLAGS_init_from);
  if (resume == "latest") {
    ASSIGN_OR_RETURN(resume, LatestCheckpoint(out_dir, "checkpoint.safetensors"));
  }
  if (!resume.empty() && !init_from.empty()) return absl::InvalidArgumentError("give --resume or --init_from, not both");
  SamplingOptions sampling;  // for the sample at the end, checked now rather than after the training
  sampling.temperature = absl::GetFlag(FLAGS_temperature);
  sampling.top_k = absl::GetFlag(FLAGS_top_k);
  RETURN_IF_ERROR(sampling.Validate());
  if (lead) RETURN_IF_ERROR(CreateDirectories(out_dir));
  std::string train_path = absl::GetFlag(FLAGS_train_data), val_path = absl::GetFlag(FLAGS_val_data);
  std::string vocab = absl::GetFlag(FLAGS_vocab);
  if (vocab.empty()) vocab = train_path.empty() ? "brown" : "gpt2";
  std::optional<std::vector<data::Document>> brown;
  if (train_path.empty() || vocab == "brown") {
    absl::StatusOr<std::vector<data::Document>> docs = data::BrownDocuments(WorkspacePath(data::kBrownDir));
    if (!docs.ok()) return MissingInput(docs.status());
    brown = *std::move(docs);
  }
  if (vocab == "brown") {  // rank 0 learns it; the others wait and read it
    const int64_t size = absl::GetFlag(FLAGS_vocab_size);
    const std::string path = WorkspacePath(absl::StrCat("runs/data/brown_bpe", size, ".tiktoken"));
    if (lead) RETURN_IF_ERROR(EnsureBrownVocab(*brown, size).status());
    world.Barrier();
    vocab = path;
  }
  // Needed for the default data; for shards of your own only for bits per byte and the
  // sample, so a GPT-2 vocabulary that is not there (no ./setup.sh) just leaves them out.
  std::optional<tokenizer::Encoding> encoding;
  if (absl::StatusOr<tokenizer::Encoding> e = LoadVocab(vocab); e.ok()) {
    encoding = *std::move(e);
  } else if (train_path.empty() || !absl::GetFlag(FLAGS_vocab).empty()) {
    return e.status();
  } else if (lead) {
    std::fprintf(stderr, "train: %s; no bits per byte or sample\n", std::string(e.status().message()).c_str());
  }
  if (train_path.empty()) {
    // runs/data/brown_gpt2_*.bin, or the vocabulary's own name: brown_bpe8192_*.bin
    const std::string prefix = WorkspacePath(absl::StrCat(
        "runs/data/", vocab == "gpt2" ? "brown_gpt2" : std::filesystem::path(vocab).stem().string()));
    train_path = prefix + "_train.bin";
    if (val_path.empty()) val_path = prefix + "_val.bin";
    if (lead) RETURN_IF_ERROR(EnsureBrownShards(*brown, *encoding, train_path, val_path));
    world.Barrier();  // the others read what rank 0 made
  }
  ASSIGN_OR_RETURN(std::vector<std::string> train_paths, Expand("train_data", train_path));
  std::vector<data::TokenShard> train;
  for (const std::string& path : train_paths) {
    ASSIGN_OR_RETURN(data::TokenShard shard, data::TokenShard::Open(path));
    train.push_back(std::move(shard));
  }
  std::optional<data::TokenShard> val;
  if (!val_path.empty()) {
    ASSIGN_OR_RETURN(std::vector<std::string> val_paths, Expand("val_data", val_path));
    ASSIGN_OR_RETURN(data::TokenShard v, data::TokenShard::Open(val_paths.front()));
    val = std::move(v);
  }
  std::vector<const data::TokenShard*> train_shards;
  int64_t train_tokens = 0;
  for (const data::TokenShard& shard : train) {
    train_shards.push_back(&shard);
    train_tokens += shard.size();
  }

  config.dropout = MainJobFlag(FLAGS_dropout, gpu, &MainJob::dropout);
  if (encoding) config.vocab_size = encoding->n_vocab();  // a fresh model's head fits the data's tokens
  for (const auto& [flag, field] : {std::pair{&FLAGS_n_layer, &config.n_layer}, {&FLAGS_n_head, &config.n_head},
                                    {&FLAGS_n_embd, &config.n_embd}, {&FLAGS_block_size, &config.block_size}}) {
    if (absl::GetFlag(*flag) > 0) *field = absl::GetFlag(*flag);
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
  if (encoding) options.vocab = vocab;  // for generate and chat, in the checkpoint
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::Create(
      config, options, train_shards, val ? &*val : nullptr, resume.empty() ? init_from : resume, !resume.empty()));
  Trainer& t = *trainer;
  const GPTConfig& cfg = t.model().config();
  const std::string ranks = world.size() > 1 ? absl::StrCat(world.size(), " ranks x ") : "";
  if (lead) {
    std::fprintf(stderr, "train: %s on %s%s%s%s, %.2fM parameters; %lld training tokens (%s%s)%s; %lld steps of %lld x %s%lld x %lld tokens\n",
                 cfg.ToString().c_str(), ranks.c_str(), options.device.ToString().c_str(),
                 gpu ? (cuda::AllowTf32() ? " (TF32 matmuls)" : " (f32 matmuls)") : "",
                 options.zero_stage == 1 ? " (ZeRO-1)" : "", t.model().NumParameters() / 1e6,
                 static_cast<long long>(train_tokens), train_path.c_str(),
                 train.size() > 1 ? absl::StrCat(": ", train.size(), " shards").c_str() : "",
                 resume.empty() ? "" : absl::StrCat("; resuming at step ", t.step()).c_str(),
                 static_cast<long long>(options.steps), static_cast<long long>(options.grad_accum), ranks.c_str(),
                 static_cast<long long>(options.batch_size), static_cast<long long>(options.seq_len));
  }

  // Each step as a CSV row and as a JSON line with the same keys (val_loss null between
  // validations), so that anything can plot them.
  // Step 0 has the first validation only; a resumed run appends, after its checkpoint's
  // step.
  std::ofstream csv, jsonl;
  if (lead) {
    const auto mode = t.step() > 0 ? std::ios::app : std::ios::trunc;
    for (const char* name : {"/metrics.csv", "/metrics.jsonl"}) {
      if (t.step() > 0) RETURN_IF_ERROR(DropRowsAfter(out_dir + name, t.step()));
    }
    csv.open(out_dir + "/metrics.csv", mode);
    jsonl.open(out_dir + "/metrics.jsonl", mode);
    if (t.step() == 0) csv << "step,loss,val_loss,val_bpb,lr,grad_norm,tokens_per_second,seconds\n";
  }
  // One row of both; NaN is an empty field and a JSON null.
  auto write_row = [&](int64_t step, std::initializer_list<std::pair<const char*, double>> fields) {
    nlohmann::ordered_json row = {{"step", step}};
    csv << step;
    for (const auto& [key, value] : fields) {
      csv << ',' << (std::isnan(value) ? "" : absl::StrCat(value));
      row[key] = std::isnan(value) ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(value);
    }
    csv << '\n';
    jsonl << row.dump() << '\n';
    csv.flush();  // a row a step, as it happens, for whoever watches the files
    jsonl.flush();
  };
  const int64_t tokens_per_step = options.grad_accum * world.size() * options.batch_size * options.seq_len;
  const int64_t val_every = std::max<int64_t>(1, absl::GetFlag(FLAGS_val_every));
  // loss.svg: the whole run so far (a resumed run's earlier steps from its CSV).
  LossCurves curves = t.step() > 0 ? ReadLossCurves(out_dir + "/metrics.csv") : LossCurves{};
  curves.tokens_per_step = static_cast<double>(tokens_per_step);
  curves.title = absl::StrFormat("GPT-2, %lld layers x %lld, %.2fM parameters", static_cast<long long>(cfg.n_layer),
                                 static_cast<long long>(cfg.n_embd), t.model().NumParameters() / 1e6);
  const std::string plot = out_dir + "/loss.svg";
  GetCpuAllocator().ResetPeak();
  double train_seconds = 0, last_loss = std::nan(""), val_loss = std::nan(""), comm_seconds = 0, comm_wait = 0;
  // The validation windows' targets, for bits per byte (ValidationLoss's first batches).
  const int64_t val_tokens = val ? std::min(options.val_batches, data::WindowCount(*val, options.seq_len) /
                                                                     (options.batch_size * world.size())) *
                                       options.batch_size * world.size() * options.seq_len
                                 : 0;
  // Not for a checkpoint of another vocabulary.
  const bool bpb = val && encoding && cfg.vocab_size == encoding->n_vocab();
  auto val_bpb = [&](double loss) { return bpb ? BitsPerByte(loss, *val, val_tokens, *encoding) : std::nan(""); };
  double val_bits = std::nan("");
  const int64_t first = t.step();
  if (first == 0 && val) {
    val_loss = t.ValidationLoss();
    val_bits = val_bpb(val_loss);
    curves.val.emplace_back(0, val_loss);
    if (lead) {
      const double none = std::nan("");
      write_row(0, {{"loss", none}, {"val_loss", val_loss}, {"val_bpb", val_bits}, {"lr", none}, {"grad_norm", none},
                    {"tokens_per_second", none}, {"seconds", none}});
      std::fprintf(stderr, "step 0: val loss %.4f (ln %lld = %.4f), val_bpb %.3f\n", val_loss,
                   static_cast<long long>(cfg.vocab_size), std::log(static_cast<double>(cfg.vocab_size)), val_bits);
    }
  }
  const int64_t checkpoint_every = absl::GetFlag(FLAGS_checkpoint_every);
  CatchStopSignals();
  while (t.step() < options.steps) {
    const StepResult r = t.Step();
    train_seconds += r.seconds;
    comm_seconds += r.comm_seconds;
    comm_wait += r.comm_wait_seconds;
    last_loss = r.loss;
    curves.train.emplace_back(r.step + 1, r.loss);
    const int64_t done = r.step + 1 - first, left = options.steps - r.step - 1;
    const double rate = done * tokens_per_step / train_seconds;
    if (lead) ShowProgress("step", r.step + 1, options.steps, first,
                 absl::StrFormat("loss %.4f | lr %.2e | norm %.2f", r.loss, r.lr, r.grad_norm), rate, "tok",
                 train_seconds);
    double step_val = std::nan("");
    if (val && ((r.step + 1) % val_every == 0 || left == 0)) {
      step_val = val_loss = t.ValidationLoss();
      val_bits = val_bpb(val_loss);
      curves.val.emplace_back(r.step + 1, val_loss);
      if (lead) {
        EndProgress();
        std::fprintf(stderr, "step %lld: val loss %.4f, val_bpb %.3f\n", static_cast<long long>(r.step + 1), val_loss,
                     val_bits);
        RETURN_IF_ERROR(WriteLossSvg(plot, curves, absl::GetFlag(FLAGS_plot_log_scale)));
      }
    }
    if (lead) {
      const double validated_bits = std::isnan(step_val) ? std::nan("") : val_bits;
      write_row(r.step + 1, {{"loss", r.loss}, {"val_loss", step_val}, {"val_bpb", validated_bits}, {"lr", r.lr},
                             {"grad_norm", r.grad_norm}, {"tokens_per_second", tokens_per_step / r.seconds},
                             {"seconds", r.seconds}});
    }
    // Every rank stops at the same step, whichever of them got the signal.
    bool stop = StopSignal() != 0;
    if (world.size() > 1) stop = world.AllReduce(stop ? 1.0 : 0.0) > 0;
    if (stop || (checkpoint_every > 0 && t.step() % checkpoint_every == 0 && t.step() < options.steps)) {
      ASSIGN_OR_RETURN(const std::string path,
                       SaveStepCheckpoint(t, out_dir, absl::GetFlag(FLAGS_keep_checkpoints), lead));
      if (stop) {
        if (lead) {
          EndProgress();
          std::fprintf(stderr, "train: stopped by signal %d after step %lld; wrote %s (continue with --resume=latest)\n",
                       StopSignal(), static_cast<long long>(t.step()), path.c_str());
        }
        return absl::OkStatus();  // main exits with 128 + the signal
      }
    }
  }
  if (lead) EndProgress();
  const std::string checkpoint =
      absl::GetFlag(FLAGS_save_checkpoint).empty() ? out_dir + "/checkpoint.safetensors" : absl::GetFlag(FLAGS_save_checkpoint);
  RETURN_IF_ERROR(t.SaveCheckpoint(checkpoint));
  const double tokens_per_second = train_seconds > 0 ? (t.step() - first) * tokens_per_step / train_seconds : 0;
  const int64_t peak = options.device.is_cpu() ? GetCpuAllocator().peak_bytes()
                                                : cuda::GetMemoryStats(options.device.index).peak_bytes;
  if (!lead) return absl::OkStatus();
  // On a GPU, llm.c's model FLOPs utilisation (mfu.h): each GPU's share of the tokens,
  // against its dense bf16 peak; not reported for a GPU mfu.h does not know.
  double mfu = std::nan("");
  std::string mfu_text;
  if (!options.device.is_cpu()) {
    const std::string name = cuda::DeviceName(options.device.index);
    if (const double peak_flops = Bf16PeakFlops(name); peak_flops > 0) {
      mfu = FlopsPerToken(t.model().NumParameters(), cfg, options.seq_len) * tokens_per_second /
            static_cast<double>(world.size()) / peak_flops;
      mfu_text = absl::StrFormat(", MFU %.1f%% (of the %s's bf16 peak)", 100 * mfu, name);
    }
  }
  std::fprintf(stderr, "train: %lld steps in %s, %.0f tokens/s%s, peak tensor memory %.0f MB%s; wrote %s and %s/{metrics.csv,metrics.jsonl,loss.svg}\n",
               static_cast<long long>(t.step() - first), FormatDuration(train_seconds).c_str(), tokens_per_second,
               mfu_text.c_str(), peak / 1e6, world.size() > 1 ? " (rank 0)" : "", checkpoint.c_str(), out_dir.c_str());
  if (comm_seconds > 0) {
    const double steps_done = static_cast<double>(t.step() - first);
    std::fprintf(stderr, "train: gradient all-reduce %.3f s per step, %.0f%% of it hidden behind backward (waited %.3f s per step)\n",
                 comm_seconds / steps_done, 100 * (1 - comm_wait / comm_seconds), comm_wait / steps_done);
  }
  if (const std::string path = absl::GetFlag(FLAGS_metrics_out); !path.empty()) {
    RETURN_IF_ERROR(WriteMetricsJson(
        path, {{"train_loss", last_loss}, {"val_loss", val_loss}, {"val_bpb", val_bits},
               {"tokens_per_second", tokens_per_second}, {"mfu", mfu},
               {"train_seconds", train_seconds}, {"peak_memory_bytes", peak}, {"steps", t.step()},
               {"parameters", t.model().NumParameters()}}));
  }

  if (const int64_t n = absl::GetFlag(FLAGS_sample_tokens); n > 0 && encoding && cfg.vocab_size == encoding->n_vocab()) {
    Generator gen(options.seed);
    const int64_t eot = encoding->specials().at("<|endoftext|>");
    const std::vector<int64_t> ids = Generate(t.model(), {eot}, n, sampling, gen);
    std::vector<tokenizer::Rank> text_ids;
    for (size_t i = 1; i < ids.size(); ++i) text_ids.push_back(static_cast<tokenizer::Rank>(ids[i]));
    std::printf("---- sample (%lld tokens, temperature %.2f, top-k %lld) ----\n%s\n", static_cast<long long>(n),
                sampling.temperature, static_cast<long long>(sampling.top_k), encoding->Decode(text_ids)->c_str());
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace ember::models::gpt2

int main(int argc, char** argv) {
  const int code = ember::RunMain(argc, argv, "train", "trains GPT-2 on token shards; see models/gpt2/train.cc's header",
                                  &ember::models::gpt2::Run);
  return ember::models::ExitCodeAfterSignal(code);
}
