#ifndef EMBER_MODELS_GPT2_TRAINER_H_
#define EMBER_MODELS_GPT2_TRAINER_H_

// Training GPT-2 on token shards as nanoGPT does: AdamW with weight decay on the
// matrices and embeddings only, linear warmup then cosine decay of the learning rate,
// gradient clipping and accumulation, validation loss on fixed windows, and
// checkpoints that resume bit for bit.
//
// A checkpoint is one safetensors file: the model's parameters under their GPT-2 names
// (so it loads as a plain GPT-2 state dict), the optimizer state under "optimizer.",
// and in its metadata the config, the step, the random generators' states and the
// batch's shape (ranks x batch_size).
//
// Data parallel (mpirun -np N): the trainer runs on every rank of distributed::World(),
// each with batch_size rows of a global batch of N x batch_size (batches.h: N ranks read
// exactly what one process of batch N B reads), and, with the gradients averaged over
// ranks (distributed::GradientAverager, or ZeRO-1's reduce-scatter), takes the same
// steps. Dropout draws from a stream of its own on each rank. Checkpoints hold the whole
// state, and a run resumes on any number of ranks whose global batch is the saved one's.
//
// A network spec (TrainOptions::model_spec, nn/network_json.h) trains in GPT-2's place: any
// network from ids [B, T] to logits [B, T, V] (models/gpt2/tiny.json is the tiny GPT,
// which takes the class's steps exactly), with everything above; it shards with FSDP
// (each layer a unit) but has no tensor-parallel layers. Its checkpoints hold the spec
// instead of a config.
//
// Sharded (TrainOptions::mesh, distributed/mesh.h): the ranks form a mesh of a "data"
// axis, whose ranks split the batch as above, and a "model" axis, whose ranks share one
// batch and split every block's attention heads and MLP (tensor parallel,
// distributed/tensor_parallel.h). With `fsdp` the data axis also splits the parameters
// (distributed/fsdp.h: each rank holds its shards, their gradients and AdamW's state,
// and gathers a block's weights while it computes). The model goes over the mesh as a
// distributed::ShardedModel by its package's plan (GPT-2's Gpt2ShardingPlan), so the
// step is the same code for every strategy; each rank draws only its shards, with the
// numbers one process would draw. A checkpoint is one safetensors file of whole tensors
// that every rank writes its own shards into at once (nothing gathered; a share several
// ranks hold written by the first), so a run saved on one mesh resumes on another, or in
// one process, each rank reading only the pages of its slices (the file is mapped).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/shards.h"
#include "distributed/mesh.h"
#include "distributed/process_group.h"
#include "distributed/sharded_model.h"
#include "distributed/zero.h"
#include "models/gpt2/batches.h"
#include "models/gpt2/conversations.h"
#include "models/gpt2/model.h"
#include "models/gpt2/weights.h"
#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "tensor/random.h"

namespace ember::models::gpt2 {

// The defaults are the main job's (the demo model on the Brown corpus); train's flags
// take theirs from here.
struct TrainOptions {
  int64_t batch_size = 8;
  int64_t seq_len = 128;
  int64_t grad_accum = 1;  // micro-batches per step
  int64_t steps = 200;
  double lr = 1e-3;
  double min_lr = 1e-4;
  int64_t warmup_steps = 20;
  double weight_decay = 0.1;
  double beta1 = 0.9, beta2 = 0.95;
  double grad_clip = 1.0;   // 0: off
  bool sequential = false;  // llm.c's data order instead of random windows
  uint64_t seed = 1337;
  int64_t val_batches = 8;        // validation windows: the first val_batches x batch_size
  Device device = Device::Cpu();  // where the model, its gradients and AdamW's state live
  int zero_stage = 0;             // 1: AdamW's state split across the ranks (ZeRO-1)
  // The ranks' mesh: "data:N,model:M" (either axis may be left out; "" is data parallel
  // over every rank), and whether its data axis shards the parameters (FSDP).
  std::string mesh;
  bool fsdp = false;
  // The products' dtype: kBF16 runs each forward and its loss under autocast
  // (autograd/autocast.h); the parameters, their gradients and AdamW stay f32.
  DType dtype = DType::kF32;
  // The data's tokenizer ("gpt2" or a .tiktoken path; text_stream.h's LoadVocab), kept in
  // checkpoints so that generate and chat decode with it. Empty: not recorded.
  std::string vocab;
  // A network spec's JSON to train instead of GPT(config) (initialised from seed; its
  // own dropout). Empty: GPT-2, or the spec a checkpoint started from holds.
  std::string model_spec;
};

struct StepResult {
  int64_t step;  // the step just taken, from 0
  double loss;   // mean over its micro-batches
  double lr;
  double grad_norm;  // before clipping
  double seconds;
  // Data parallel without ZeRO: the gradient all-reduces' time on the communication
  // thread, and the part of it the step waited for (the rest was hidden behind backward).
  double comm_seconds = 0, comm_wait_seconds = 0;
};

class Trainer {
 public:
  // A fresh model from `config` (initialised from options.seed), or, with a checkpoint
  // path, the model and everything needed to continue from it (`resume`) or just its
  // weights and config (`!resume`, for fine-tuning; any file ReadWeights reads). Shards
  // must outlive the trainer; val may be null. The batches come from the training
  // shards, or from conversations (conversations.h) when given, whose loss is then the
  // mean over the bot's tokens only, in batches.h's orders; the conversations must
  // outlive the trainer too. Validation uses the val shard's first windows.
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(
      const GPTConfig& config, const TrainOptions& options,
      std::vector<const data::TokenShard*> train, const data::TokenShard* val,
      const std::string& checkpoint = "", bool resume = false,
      const std::vector<Conversation>* conversations = nullptr);

  StepResult Step();
  // The mean loss over the validation windows (no gradients): the first val_batches
  // global batches, split over the ranks as training batches are.
  double ValidationLoss();
  // Collective: every rank calls it, rank 0 writes the file, and every rank returns
  // its error.
  absl::Status SaveCheckpoint(const std::string& path) const;

  int64_t step() const { return step_; }
  // The model: whole on this rank unless its parameters are split
  // (sharded_model().split()), when its blocks hold this rank's shares (tensor parallel)
  // or nothing between uses (FSDP); generating then needs the checkpoint.
  nn::Module& model() { return *model_; }
  // The model as GPT-2, or null when a network spec is trained.
  GPT* gpt() { return gpt_; }
  // The logits' size: the model's vocabulary.
  int64_t vocab_size() const { return vocab_size_; }
  const distributed::Mesh& mesh() const { return mesh_; }
  // The model over the mesh: its placement, FSDP's and data parallel's figures.
  const distributed::ShardedModel& sharded_model() const { return *sharded_; }
  const TrainOptions& options() const { return options_; }

 private:
  Trainer(const GPTConfig& config, const TrainOptions& options,
          std::vector<const data::TokenShard*> train,
          const std::vector<Conversation>* conversations, const data::TokenShard* val,
          distributed::Mesh mesh);
  // With a spec: the network built from it (a one-line error naming the layer
  // otherwise) and its vocabulary found by running it on seq_len zeros.
  absl::Status BuildSpec();
  // The mean next-token cross entropy of the model's logits on x against y.
  Tensor Loss(const Tensor& x, const Tensor& y);
  // The model over the mesh (distributed::ShardedModel, by GPT-2's plan or a spec's) and
  // the optimizer over what it steps.
  absl::Status Shard();
  // The run's position from a checkpoint's metadata, which must be of this run's global
  // batch.
  absl::Status Resume(const Weights& weights, const std::string& checkpoint);
  // Whole parameters (and AdamW's whole state, with `optimizer`) into this rank's
  // shards; errors name the checkpoint's problem.
  absl::Status LoadState(const Weights& weights, bool optimizer);

  TrainOptions options_;
  Generator model_gen_;  // initialisation, then dropout; outlives the model
  std::shared_ptr<nn::Module> model_;
  GPT* gpt_ = nullptr;  // model_ as GPT-2 (null for a spec)
  int64_t vocab_size_;
  const data::TokenShard* val_;
  distributed::ProcessGroup& world_;
  distributed::Mesh mesh_;
  int data_ranks_, data_rank_;  // the data axis: how many batches, and which is this rank's
  std::unique_ptr<distributed::ShardedModel> sharded_;
  std::unique_ptr<optim::Optimizer> optimizer_;   // without ZeRO
  std::unique_ptr<distributed::ZeroAdamW> zero_;  // with ZeRO-1
  optim::LrSchedule schedule_;
  TrainingBatches batches_;
  int64_t step_ = 0;
};

}  // namespace ember::models::gpt2

#endif  // EMBER_MODELS_GPT2_TRAINER_H_
