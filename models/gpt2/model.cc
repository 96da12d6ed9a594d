#include "models/gpt2/model.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {
namespace ag = autograd;
namespace {

struct Named {
  const char* name;
  GPTConfig config;
};

const std::vector<Named>& Presets() {
  // {vocab, positions, layers, heads, width, dropout}
  static const auto* presets = new std::vector<Named>{
      {"gpt2", {50257, 1024, 12, 12, 768, 0.0}},
      {"gpt2-medium", {50257, 1024, 24, 16, 1024, 0.0}},
      {"gpt2-large", {50257, 1024, 36, 20, 1280, 0.0}},
      {"gpt2-xl", {50257, 1024, 48, 25, 1600, 0.0}},
      {"small", {50257, 256, 6, 6, 384, 0.0}},
      {"demo", {50257, 64, 3, 4, 128, 0.0}},
      {"tiny", {50257, 32, 2, 4, 64, 0.0}},
  };
  return *presets;
}

}  // namespace

absl::StatusOr<GPTConfig> GPTConfig::Preset(absl::string_view name) {
  for (const Named& p : Presets()) {
    if (name == p.name) return p.config;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown model preset \"", name, "\"; known: ", absl::StrJoin(PresetNames(), ", ")));
}

std::vector<std::string> GPTConfig::PresetNames() {
  std::vector<std::string> names;
  for (const Named& p : Presets()) names.emplace_back(p.name);
  return names;
}

absl::Status GPTConfig::Validate() const {
  for (const auto& [field, value] : {std::pair<const char*, int64_t>{"vocab_size", vocab_size},
                                     {"block_size", block_size},
                                     {"n_layer", n_layer},
                                     {"n_head", n_head},
                                     {"n_embd", n_embd}}) {
    if (value < 1)
      return absl::InvalidArgumentError(
          absl::StrCat("GPTConfig.", field, " = ", value, " must be >= 1"));
  }
  if (n_embd % n_head != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("GPTConfig.n_embd = ", n_embd, " is not divisible by n_head = ", n_head));
  }
  for (const auto& [field, value] :
       {std::pair<const char*, double>{"dropout", dropout}, {"attn_dropout", attn_dropout}}) {
    if (!(value >= 0 && value < 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("GPTConfig.", field, " = ", value, " is not in [0, 1)"));
    }
  }
  return absl::OkStatus();
}

int64_t GPTConfig::NumParameters() const {
  for (const int64_t size : {vocab_size, block_size, n_layer, n_embd}) {
    if (size > (int64_t{1} << 31)) return INT64_MAX;  // then the sum below fits in 128 bits
  }
  const __int128 C = n_embd, L = n_layer;
  const __int128 n =
      (static_cast<__int128>(vocab_size) + block_size) * C + L * (12 * C * C + 13 * C) + 2 * C;
  return n > INT64_MAX ? INT64_MAX : static_cast<int64_t>(n);
}

std::string GPTConfig::ToString() const {
  return absl::StrCat("GPTConfig(vocab_size=", vocab_size, ", block_size=", block_size,
                      ", n_layer=", n_layer, ", n_head=", n_head, ", n_embd=", n_embd,
                      ", dropout=", dropout,
                      attn_dropout > 0 ? absl::StrCat(", attn_dropout=", attn_dropout) : "", ")");
}

GPT::GPT(const GPTConfig& config, Generator& gen) : config_(config) {
  const absl::Status valid = config.Validate();
  EMBER_CHECK(valid.ok(), valid.message());
  const bool deferred = nn::MetaDeviceGuard::Active();
  {
    // The layers declare their parameters; GPT-2's specs replace their initialisers,
    // then the parameters are made once, from gen (unless the caller wants a meta model).
    nn::MetaDeviceGuard declare_only;
    wte_ = RegisterModule("wte",
                          std::make_shared<nn::Embedding>(config.vocab_size, config.n_embd, gen));
    wpe_ = RegisterModule("wpe",
                          std::make_shared<nn::Embedding>(config.block_size, config.n_embd, gen));
    drop_ = RegisterModule("drop", std::make_shared<nn::Dropout>(config.dropout, gen));
    h_ = RegisterModule("h", std::make_shared<nn::Sequential>());
    for (int64_t i = 0; i < config.n_layer; ++i) {
      blocks_.push_back(std::make_shared<Block>(config.n_embd, config.n_head, config.dropout, gen,
                                                config.attn_dropout));
      h_->Append(blocks_.back());
    }
    ln_f_ = RegisterModule("ln_f", std::make_shared<nn::LayerNorm>(config.n_embd));
  }
  SetGpt2Specs(*this, config.n_layer);
  if (!deferred) {
    nn::Materialize(*this, Device::Cpu(), gen);
    PadVocabulary();
  }
}

void GPT::PadVocabulary() {
  const Tensor& w = wte_->weight();
  const int64_t v = config_.vocab_size, vp = config_.padded_vocab_size();
  if (vp == v || w.device() == Device::Meta() || Padded()) return;
  const Tensor table = Zeros({vp, config_.n_embd}, w.dtype(), w.device());
  table.Narrow(0, 0, v).CopyFrom(w);
  w.SetData(table.Narrow(0, 0, v));
  padded_wte_ = table;
}

bool GPT::Padded() const {
  const Tensor& w = wte_->weight();
  return padded_wte_.defined() && w.raw_data() == padded_wte_.raw_data() &&
         w.device() == padded_wte_.device() && w.dtype() == padded_wte_.dtype() &&
         w.shape() == Shape{config_.vocab_size, config_.n_embd};
}

Tensor GPT::PaddedTable() const {
  if (!Padded()) return Tensor();
  const Tensor& w = wte_->weight();
  const int64_t v = config_.vocab_size;
  return ag::Record("pad_vocabulary", ag::Detach(padded_wte_), {w},
                    [v](const Tensor& g) { return std::vector<Tensor>{g.Narrow(0, 0, v)}; });
}

Tensor GPT::Forward(const Tensor& ids) { return Forward(ids, std::vector<KVCache*>()); }

Tensor GPT::Forward(const Tensor& ids, const std::vector<KVCache*>& caches) {
  // The head shares wte: logits = x wte^T (one Linear node: wte's gradient comes out
  // [V, C], not as a transposed view to copy).
  const Tensor hidden = Hidden(ids, caches);
  if (Tensor logits = head_.Forward(hidden, wte_->weight(), Tensor()); logits.defined()) {
    return logits;
  }
  return ag::Linear(hidden, wte_->weight(), Tensor());
}

void GPT::PackForInference(ops::PackedFormat format) {
  EMBER_CHECK(wte_->weight().device() == Device::Cpu(), "GPT: packed weights are for the CPU; ",
              "the model is on ", wte_->weight().device().ToString());
  for (nn::Linear* linear : nn::FindLinears(*this)) linear->Pack(format);
  head_.Pack(wte_->weight(), format);
}

int64_t GPT::DecodeWeightBytes() {
  int64_t bytes = 2 * config_.n_embd * 4;  // a row of wte and of wpe
  auto product = [&](const nn::PackedForInference& packed, const Tensor& w) {
    const Tensor& read = packed.packed() ? packed.weight().data : w;
    bytes += read.numel() * ItemSize(read.dtype());
  };
  for (nn::Linear* linear : nn::FindLinears(*this)) product(linear->packed(), linear->weight());
  product(head_, wte_->weight());
  return bytes;
}

Tensor GPT::Hidden(const Tensor& ids, const std::vector<KVCache*>& caches) {
  EMBER_CHECK(ids.dim() == 2, "GPT: ids must be [batch, time], got ", ShapeToString(ids.shape()));
  const int64_t batch = ids.size(0), t = ids.size(1);
  EMBER_CHECK(caches.empty() || static_cast<int64_t>(caches.size()) == batch,
              "GPT: ", caches.size(), " caches for a batch of ", batch);
  // Position p of row b is starts[b] + p: 0 without caches, else that sequence's length.
  std::vector<int64_t> starts(caches.empty() ? 1 : caches.size(), 0);
  for (size_t b = 0; b < caches.size(); ++b) {
    EMBER_CHECK(static_cast<int64_t>(caches[b]->layers.size()) == config_.n_layer,
                "GPT: a cache of ", caches[b]->layers.size(), " layers for ", config_.n_layer);
    starts[b] = caches[b]->length();
  }
  std::vector<int64_t> positions;
  for (const int64_t start : starts) {
    EMBER_CHECK(start + t <= config_.block_size, "GPT: a sequence of ", start + t,
                " tokens is longer than block_size ", config_.block_size);
    for (int64_t p = 0; p < t; ++p) positions.push_back(start + p);
  }
  // x = wte[ids] + wpe[positions] ([T] broadcast over the batch, or [B, T]).
  const Tensor pos =
      FromVector(positions, caches.empty() ? Shape{t} : Shape{batch, t}).To(ids.device());
  Tensor x = drop_->Forward(wte_->Forward(ids) + wpe_->Forward(pos));
  for (int64_t i = 0; i < config_.n_layer; ++i) {
    AttentionCaches layer;
    for (KVCache* cache : caches) layer.push_back(&cache->layers[i]);
    x = caches.empty() ? (*blocks_[i])(x) : blocks_[i]->Forward(x, layer);
  }
  return ln_f_->Forward(x);
}

std::vector<Tensor> GPT::AttentionWeights(const Tensor& ids) {
  const ag::NoGradGuard values;
  EMBER_CHECK(ids.dim() == 2 && ids.size(1) <= config_.block_size,
              "GPT: attention weights of ids [batch, time <= ", config_.block_size, "], got ",
              ShapeToString(ids.shape()));
  Tensor x = wte_->Forward(ids) + wpe_->Forward(Arange(0, ids.size(1)).To(ids.device()));
  std::vector<Tensor> weights;
  for (const std::shared_ptr<Block>& block : blocks_) {
    weights.push_back(block->AttentionWeights(x));
    x = block->Forward(x);
  }
  return weights;
}

KVCache GPT::NewCache() const {
  return KVCache{std::vector<AttentionCache>(static_cast<size_t>(config_.n_layer),
                                             AttentionCache(config_.block_size))};
}

Tensor GPT::Loss(const Tensor& ids, const Tensor& targets) {
  const int64_t v = config_.vocab_size;
  if (head_.packed() && !ag::GradModeEnabled()) {  // evaluating packed weights
    const Tensor hidden = Hidden(ids, {});
    if (Tensor logits = head_.Forward(hidden, wte_->weight(), Tensor()); logits.defined()) {
      return ag::CrossEntropy(ag::Reshape(logits, {-1, v}), targets.Reshape({-1}));
    }
  }
  const Tensor table = PaddedTable();
  if (!table.defined()) {
    return ag::CrossEntropy(ag::Reshape(Forward(ids), {-1, v}), targets.Reshape({-1}));
  }
  // logits [B, T, Vp], of which the first V columns are the vocabulary's.
  const Tensor logits = ag::Linear(Hidden(ids, {}), table, Tensor());
  return ag::CrossEntropy(ag::Reshape(logits, {-1, config_.padded_vocab_size()}),
                          targets.Reshape({-1}), -100, v);
}

void GPT::SetTensorParallel(distributed::ProcessGroup* group) {
  for (const std::shared_ptr<Block>& block : blocks_) block->SetTensorParallel(group);
}

distributed::ShardingPlan Gpt2ShardingPlan(GPT& gpt) {
  distributed::ShardingPlan plan;
  plan.rules = Gpt2ShardingRules(/*fsdp=*/true);
  for (const std::shared_ptr<Block>& block : gpt.blocks()) plan.units.push_back(block.get());
  plan.tensor_parallel = [&gpt](distributed::ProcessGroup& group) {
    gpt.SetTensorParallel(&group);
  };
  return plan;
}

std::string GPT::ToString() const { return absl::StrCat("GPT(", config_.ToString(), ")"); }

}  // namespace ember::models::gpt2
