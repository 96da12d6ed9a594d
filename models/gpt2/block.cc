#include "models/gpt2/block.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "tensor/creation.h"

namespace ember::models::gpt2 {

namespace ag = autograd;

Mlp::Mlp(int64_t dim, int64_t hidden, double dropout, Generator& gen)
    : c_fc_(RegisterModule("c_fc", std::make_shared<nn::Linear>(dim, hidden, true, gen))),
      c_proj_(RegisterModule("c_proj", std::make_shared<nn::Linear>(hidden, dim, true, gen))),
      dropout_(RegisterModule("dropout", std::make_shared<nn::Dropout>(dropout, gen))) {}

Tensor Mlp::Forward(const Tensor& x) {
  return dropout_->Forward(c_proj_->Forward(ag::GeluTanh(c_fc_->Forward(x))));
}

std::string Mlp::ToString() const {
  return absl::StrCat("MLP(c_fc=", c_fc_->ToString(), ", c_proj=", c_proj_->ToString(), ")");
}

CausalSelfAttention::CausalSelfAttention(int64_t dim, int64_t heads, double dropout, Generator& gen)
    : dim_(dim), heads_(heads) {
  EMBER_CHECK(heads > 0 && dim % heads == 0, "CausalSelfAttention: ", heads,
              " heads do not divide dimension ", dim);
  c_attn_ = RegisterModule("c_attn", std::make_shared<nn::Linear>(dim, 3 * dim, true, gen));
  c_proj_ = RegisterModule("c_proj", std::make_shared<nn::Linear>(dim, dim, true, gen));
  dropout_ = RegisterModule("dropout", std::make_shared<nn::Dropout>(dropout, gen));
}

Tensor CausalSelfAttention::Forward(const Tensor& x) { return Forward(x, nullptr); }

Tensor CausalSelfAttention::Forward(const Tensor& x, AttentionCache* cache) {
  EMBER_CHECK(x.dim() == 3 && x.size(2) == dim_, "CausalSelfAttention(", dim_,
              "): input must be [batch, time, ", dim_, "], got ", ShapeToString(x.shape()));
  const int64_t batch = x.size(0), time = x.size(1);
  const std::vector<Tensor> qkv = ag::Split(c_attn_->Forward(x), dim_, -1);
  auto heads = [&](const Tensor& t) {  // [B, T, C] -> [B, heads, T, C / heads]
    return ag::Transpose(ag::View(t, {batch, time, heads_, dim_ / heads_}), 1, 2);
  };
  Tensor k = heads(qkv[1]), v = heads(qkv[2]);
  if (cache != nullptr) {
    if (!cache->k.defined()) {
      cache->k = Empty({batch, heads_, cache->capacity, dim_ / heads_}, x.dtype(), x.device());
      cache->v = Empty({batch, heads_, cache->capacity, dim_ / heads_}, x.dtype(), x.device());
    }
    EMBER_CHECK(cache->k.size(0) == batch && cache->k.dtype() == x.dtype(),
                "CausalSelfAttention: a cache of ", cache->k.size(0), " sequences (",
                DTypeName(cache->k.dtype()), ") for a batch of ", batch, " (", DTypeName(x.dtype()),
                ")");
    const int64_t end = cache->length + time;
    EMBER_CHECK(end <= cache->capacity, "CausalSelfAttention: ", time,
                " more positions overflow a cache of ", cache->length, " / ", cache->capacity);
    cache->k.Slice(2, cache->length, end).CopyFrom(ag::Detach(k));
    cache->v.Slice(2, cache->length, end).CopyFrom(ag::Detach(v));
    cache->length = end;
    k = cache->k.Slice(2, 0, end);
    v = cache->v.Slice(2, 0, end);
  }
  const Tensor y = ag::CausalAttention(heads(qkv[0]), k, v);
  const Tensor merged = ag::Reshape(ag::Transpose(y, 1, 2), {batch, time, dim_});
  return dropout_->Forward(c_proj_->Forward(merged));
}

std::string CausalSelfAttention::ToString() const {
  return absl::StrCat("CausalSelfAttention(dim=", dim_, ", heads=", heads_, ")");
}

Block::Block(int64_t dim, int64_t heads, double dropout, Generator& gen)
    : ln_1_(RegisterModule("ln_1", std::make_shared<nn::LayerNorm>(dim))),
      attn_(
          RegisterModule("attn", std::make_shared<CausalSelfAttention>(dim, heads, dropout, gen))),
      ln_2_(RegisterModule("ln_2", std::make_shared<nn::LayerNorm>(dim))),
      mlp_(RegisterModule("mlp", std::make_shared<Mlp>(dim, 4 * dim, dropout, gen))) {}

Tensor Block::Forward(const Tensor& x) { return Forward(x, nullptr); }

Tensor Block::Forward(const Tensor& x, AttentionCache* cache) {
  const Tensor h = x + attn_->Forward(ln_1_->Forward(x), cache);
  return h + mlp_->Forward(ln_2_->Forward(h));
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
      {"attn.c_attn.weight", {"qkv", "embed"}},
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
    model.SetAxes(name, axes);
  }
}

}  // namespace ember::models::gpt2
