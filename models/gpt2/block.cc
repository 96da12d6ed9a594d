#include "models/gpt2/block.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "base/status.h"
#include "distributed/tensor_parallel.h"
#include "nn/registry.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"

namespace ember::models::gpt2 {

namespace ag = autograd;

Mlp::Mlp(int64_t dim, int64_t hidden, double dropout, Generator& gen)
    : c_fc_(RegisterModule("c_fc", std::make_shared<nn::Linear>(dim, hidden, true, gen))),
      c_proj_(RegisterModule("c_proj", std::make_shared<nn::Linear>(hidden, dim, true, gen))),
      dropout_(RegisterModule("dropout", std::make_shared<nn::Dropout>(dropout, gen))) {}

namespace {

// c_proj(x), or, tensor parallel, the sum over the group of this rank's share of it and
// then the bias (which every rank holds whole).
Tensor RowParallel(nn::Linear& c_proj, const Tensor& x, distributed::ProcessGroup* tp) {
  if (tp == nullptr) return c_proj.Forward(x);
  return distributed::FromTensorParallel(ag::Linear(x, c_proj.weight(), Tensor()), *tp) +
         c_proj.bias();
}

}  // namespace

Tensor Mlp::Forward(const Tensor& x) {
  const Tensor in = tp_ != nullptr ? distributed::ToTensorParallel(x, *tp_) : x;
  return dropout_->Forward(RowParallel(*c_proj_, ag::GeluTanh(c_fc_->Forward(in)), tp_));
}

std::string Mlp::ToString() const {
  return absl::StrCat("MLP(c_fc=", c_fc_->ToString(), ", c_proj=", c_proj_->ToString(), ")");
}

CausalSelfAttention::CausalSelfAttention(int64_t dim, int64_t heads, double dropout, Generator& gen,
                                         double attn_dropout)
    : dim_(dim), heads_(heads), attn_dropout_(attn_dropout), gen_(gen) {
  EMBER_CHECK(attn_dropout >= 0 && attn_dropout < 1, "CausalSelfAttention: attn_dropout ",
              attn_dropout, " is not in [0, 1)");
  EMBER_CHECK(heads > 0 && dim % heads == 0, "CausalSelfAttention: ", heads,
              " heads do not divide dimension ", dim);
  c_attn_ = RegisterModule("c_attn", std::make_shared<nn::Linear>(dim, 3 * dim, true, gen));
  c_proj_ = RegisterModule("c_proj", std::make_shared<nn::Linear>(dim, dim, true, gen));
  dropout_ = RegisterModule("dropout", std::make_shared<nn::Dropout>(dropout, gen));
}

Tensor CausalSelfAttention::Forward(const Tensor& x) { return Forward(x, {}); }

Tensor CausalSelfAttention::Forward(const Tensor& x, const AttentionCaches& caches) {
  EMBER_CHECK(x.dim() == 3 && x.size(2) == dim_, "CausalSelfAttention(", dim_,
              "): input must be [batch, time, ", dim_, "], got ", ShapeToString(x.shape()));
  const int64_t batch = x.size(0), time = x.size(1);
  // This rank's heads (all of them unless tensor parallel): c_attn's rows are theirs.
  const int64_t width = c_attn_->weight().size(0) / 3, head_dim = dim_ / heads_;
  const int64_t local_heads = width / head_dim;
  const Tensor in = tp_ != nullptr ? distributed::ToTensorParallel(x, *tp_) : x;
  const std::vector<Tensor> qkv = ag::Split(c_attn_->Forward(in), width, -1);
  auto heads = [&](const Tensor& t) {  // [B, T, width] -> [B, local heads, T, C / heads]
    return ag::Transpose(ag::View(t, {batch, time, local_heads, head_dim}), 1, 2);
  };
  const Tensor q = heads(qkv[0]), k = heads(qkv[1]), v = heads(qkv[2]);
  Tensor y;
  if (!caches.empty()) {
    EMBER_CHECK(static_cast<int64_t>(caches.size()) == batch,
                "CausalSelfAttention: ", caches.size(), " caches for a batch of ", batch);
    std::vector<Tensor> rows;
    for (int64_t b = 0; b < batch; ++b) {
      AttentionCache& cache = *caches[b];
      if (!cache.k.defined()) {
        cache.k = Empty({1, local_heads, cache.capacity, head_dim}, x.dtype(), x.device());
        cache.v = Empty({1, local_heads, cache.capacity, head_dim}, x.dtype(), x.device());
      }
      EMBER_CHECK(cache.k.dtype() == x.dtype(), "CausalSelfAttention: a cache of ",
                  DTypeName(cache.k.dtype()), " for ", DTypeName(x.dtype()));
      const int64_t end = cache.length + time;
      EMBER_CHECK(end <= cache.capacity, "CausalSelfAttention: ", time,
                  " more positions overflow a cache of ", cache.length, " / ", cache.capacity);
      cache.k.Slice(2, cache.length, end).CopyFrom(ag::Detach(k).Slice(0, b, b + 1));
      cache.v.Slice(2, cache.length, end).CopyFrom(ag::Detach(v).Slice(0, b, b + 1));
      cache.length = end;
      rows.push_back(ag::CausalAttention(ag::Detach(q).Slice(0, b, b + 1), cache.k.Slice(2, 0, end),
                                         cache.v.Slice(2, 0, end), 0, gen_));
    }
    y = batch == 1 ? rows.front() : ag::Cat(rows, 0);
  } else {
    const double p = is_training() ? attn_dropout_ : 0;
    if (p > 0 && tp_ != nullptr) {
      // Each rank its part of the stream: rank r's masks start r x (its weights) words in,
      // and the stream moves past all ranks' (the heads of one process).
      const uint64_t start = gen_.offset(),
                     words = static_cast<uint64_t>(batch * local_heads * time * k.size(2));
      gen_.set_offset(start + static_cast<uint64_t>(tp_->rank()) * words);
      y = ag::CausalAttention(q, k, v, p, gen_);
      gen_.set_offset(start + static_cast<uint64_t>(tp_->size()) * words);
    } else {
      y = ag::CausalAttention(q, k, v, p, gen_);
    }
  }
  const Tensor merged = ag::Reshape(ag::Transpose(y, 1, 2), {batch, time, width});
  return dropout_->Forward(RowParallel(*c_proj_, merged, tp_));
}

Tensor CausalSelfAttention::Weights(const Tensor& x) {
  const ag::NoGradGuard values;
  const int64_t batch = x.size(0), time = x.size(1);
  const int64_t width = c_attn_->weight().size(0) / 3, head_dim = dim_ / heads_;
  const std::vector<Tensor> qkv = ag::Split(c_attn_->Forward(x), width, -1);
  auto heads = [&](const Tensor& t) {
    return ag::Transpose(ag::View(t, {batch, time, width / head_dim, head_dim}), 1, 2);
  };
  const Tensor scores = ag::Mul(ag::Matmul(heads(qkv[0]), ag::Transpose(heads(qkv[1]), -2, -1)),
                                1.0 / std::sqrt(static_cast<double>(head_dim)));
  const Tensor rows = Arange(time).View({time, 1}), cols = Arange(time).View({1, time});
  return ag::Softmax(ag::MaskedFill(scores.To(DType::kF32), ops::Gt(cols, rows), -INFINITY));
}

std::string CausalSelfAttention::ToString() const {
  return absl::StrCat("CausalSelfAttention(dim=", dim_, ", heads=", heads_, ")");
}

Block::Block(int64_t dim, int64_t heads, double dropout, Generator& gen, double attn_dropout)
    : ln_1_(RegisterModule("ln_1", std::make_shared<nn::LayerNorm>(dim))),
      attn_(RegisterModule(
          "attn", std::make_shared<CausalSelfAttention>(dim, heads, dropout, gen, attn_dropout))),
      ln_2_(RegisterModule("ln_2", std::make_shared<nn::LayerNorm>(dim))),
      mlp_(RegisterModule("mlp", std::make_shared<Mlp>(dim, 4 * dim, dropout, gen))) {}

Tensor Block::Forward(const Tensor& x) { return Forward(x, {}); }

// h = x + attn(ln_1(x)), out = h + mlp(ln_2(h)); the first add is fused with ln_2 (the
// second stays an add: the next block's ln_1 is behind its own forward hooks).
Tensor Block::Forward(const Tensor& x, const AttentionCaches& caches) {
  const auto [h, normed] = ln_2_->Forward(x, attn_->Forward(ln_1_->Forward(x), caches));
  return h + mlp_->Forward(normed);
}

Tensor Block::AttentionWeights(const Tensor& x) {
  const ag::NoGradGuard values;
  return attn_->Weights(ln_1_->Forward(x));
}

void Block::SetTensorParallel(distributed::ProcessGroup* group) {
  attn_->SetTensorParallel(group);
  mlp_->SetTensorParallel(group);
}

std::string Block::ToString() const {
  return absl::StrCat("Block(", attn_->ToString(), ", ", mlp_->ToString(), ")");
}

void SetGpt2Specs(nn::Module& model, int64_t layers) {
  EMBER_CHECK(layers > 0, "gpt2 specs: layers must be positive, got ", layers);
  // Each parameter's axes by the end of its name: {weight's, bias's}.
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kAxes = {
      {"wte.weight", {"vocab", "embed"}},
      {"wpe.weight", {"positions", "embed"}},
      {"attn.c_attn.weight", {"qkv", "embed"}},  // q, k and v: 3 parts along "qkv"
      {"attn.c_attn.bias", {"qkv"}},
      {"attn.c_proj.weight", {"embed", "heads"}},
      {"mlp.c_fc.weight", {"mlp", "embed"}},
      {"mlp.c_fc.bias", {"mlp"}},
      {"mlp.c_proj.weight", {"embed", "mlp"}},
  };
  for (const auto& [name, spec] : model.NamedParameterSpecs()) {
    if (absl::EndsWith(name, ".bias")) {
      model.SetInitializer(name, nn::Initializer::Zeros());
    } else if (spec.shape.size() >= 2) {
      const bool residual = absl::EndsWith(name, "c_proj.weight");
      model.SetInitializer(
          name, nn::Initializer::Normal(0, residual ? 0.02 / std::sqrt(2.0 * layers) : 0.02));
    } else {
      model.SetInitializer(name, nn::Initializer::Ones());
    }
    std::vector<std::string> axes(spec.shape.size(), "embed");  // LayerNorms, c_proj's bias
    for (const auto& [suffix, named] : kAxes) {
      if (absl::EndsWith(name, suffix)) axes = named;
    }
    const bool fused =
        absl::EndsWith(name, "attn.c_attn.weight") || absl::EndsWith(name, "attn.c_attn.bias");
    std::vector<int64_t> parts;
    if (fused) {
      parts.assign(axes.size(), 1);
      parts[0] = 3;
    }
    model.SetAxes(name, axes, parts);
  }
}

distributed::ShardingRules Gpt2ShardingRules(bool fsdp) {
  std::vector<std::pair<std::string, std::string>> rules = {
      {"qkv", "model"}, {"heads", "model"}, {"mlp", "model"}};
  if (fsdp) rules.emplace_back("embed", "data");
  return distributed::ShardingRules(std::move(rules));
}

// GPT-2's layers and initialisation for network specs (nn/network_json.h), under Hugging Face's
// class names, with GPTConfig's argument names.
namespace {

// n_embd and n_head, checked as CausalSelfAttention would, with the parameters' budget.
absl::StatusOr<std::pair<int64_t, int64_t>> WidthAndHeads(const nn::LayerArgs& a) {
  ASSIGN_OR_RETURN(const int64_t dim, a.Int("n_embd"));
  ASSIGN_OR_RETURN(const int64_t heads, a.Int("n_head"));
  if (dim < 1 || heads < 1 || dim % heads != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("n_head ", heads, " does not divide n_embd ", dim));
  }
  RETURN_IF_ERROR(a.CheckParameters({12, dim, dim}));
  return std::pair{dim, heads};
}

}  // namespace

EMBER_REGISTER_LAYER(
    GPT2Block,
    [](const nn::LayerArgs& a) -> nn::LayerOr {
      ASSIGN_OR_RETURN(const auto size, WidthAndHeads(a));
      ASSIGN_OR_RETURN(const double dropout, a.Float("dropout", 0));
      ASSIGN_OR_RETURN(const double attn_dropout, a.Float("attn_dropout", 0));
      return std::make_shared<Block>(size.first, size.second, dropout, a.gen(), attn_dropout);
    },
    nn::LayerSizes::Same("n_embd"));

EMBER_REGISTER_LAYER(
    GPT2Attention,
    [](const nn::LayerArgs& a) -> nn::LayerOr {
      ASSIGN_OR_RETURN(const auto size, WidthAndHeads(a));
      ASSIGN_OR_RETURN(const double dropout, a.Float("dropout", 0));
      ASSIGN_OR_RETURN(const double attn_dropout, a.Float("attn_dropout", 0));
      return std::make_shared<CausalSelfAttention>(size.first, size.second, dropout, a.gen(),
                                                   attn_dropout);
    },
    nn::LayerSizes::Same("n_embd"));

EMBER_REGISTER_LAYER(
    GPT2MLP,
    [](const nn::LayerArgs& a) -> nn::LayerOr {
      ASSIGN_OR_RETURN(const int64_t dim, a.Int("n_embd"));
      ASSIGN_OR_RETURN(const int64_t hidden, a.Int("n_inner", 4 * dim));
      RETURN_IF_ERROR(a.CheckParameters({2, hidden, dim}));
      ASSIGN_OR_RETURN(const double dropout, a.Float("dropout", 0));
      return std::make_shared<Mlp>(dim, hidden, dropout, a.gen());
    },
    nn::LayerSizes::Same("n_embd"));

// SetGpt2Specs with L the number of attention layers (c_attn weights; at least 1).
EMBER_REGISTER_INIT_SCHEME(gpt2, [](nn::Module& model) {
  int64_t layers = 0;
  for (const auto& [name, spec] : model.NamedParameterSpecs()) {
    layers += absl::EndsWith(name, "attn.c_attn.weight") ? 1 : 0;
  }
  SetGpt2Specs(model, std::max<int64_t>(layers, 1));
});

}  // namespace ember::models::gpt2
