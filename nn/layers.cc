#include "nn/layers.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "base/status.h"
#include "nn/init.h"
#include "nn/registry.h"
#include "tensor/creation.h"

namespace ember::nn {

namespace ag = autograd;

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, Generator& gen, DType dtype)
    : in_(in_features), out_(out_features) {
  EMBER_CHECK(in_features > 0 && out_features > 0, "Linear: sizes must be positive, got ",
              in_features, " and ", out_features);
  const double bound = 1 / std::sqrt(static_cast<double>(in_features));
  weight_ = RegisterParameter("weight", Empty({out_features, in_features}, dtype));
  InitKaimingUniform(weight_, std::sqrt(5.0), FanMode::kFanIn, gen);
  if (bias) {
    bias_ = RegisterParameter("bias", Empty({out_features}, dtype));
    InitUniform(bias_, -bound, bound, gen);
  }
}

Tensor Linear::Forward(const Tensor& x) {
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) == in_, "Linear(in_features=", in_, "): input of shape ",
              ShapeToString(x.shape()), " has ", x.dim() ? x.size(-1) : 0, " features");
  return ag::Linear(x, weight_, bias_);
}

std::string Linear::ToString() const {
  return absl::StrCat("Linear(in_features=", in_, ", out_features=", out_,
                      ", bias=", bias_.defined() ? "True" : "False", ")");
}

Embedding::Embedding(int64_t num_embeddings, int64_t dim, Generator& gen, DType dtype) {
  EMBER_CHECK(num_embeddings > 0 && dim > 0, "Embedding: sizes must be positive, got ",
              num_embeddings, " and ", dim);
  weight_ = RegisterParameter("weight", Empty({num_embeddings, dim}, dtype));
  InitNormal(weight_, 0, 1, gen);
}

Tensor Embedding::Forward(const Tensor& ids) { return ag::Embedding(weight_, ids); }

std::string Embedding::ToString() const {
  return absl::StrCat("Embedding(", weight_.size(0), ", ", weight_.size(1), ")");
}

LayerNorm::LayerNorm(int64_t dim, double eps, bool bias, DType dtype) : eps_(eps) {
  weight_ = RegisterParameter("weight", Ones({dim}, dtype));
  if (bias) bias_ = RegisterParameter("bias", Zeros({dim}, dtype));
}

Tensor LayerNorm::Forward(const Tensor& x) { return ag::LayerNorm(x, weight_, bias_, eps_); }

std::string LayerNorm::ToString() const {
  return absl::StrCat("LayerNorm((", weight_.size(0), ",), eps=", eps_, ")");
}

Gelu::Gelu(std::string approximate) : tanh_(approximate == "tanh") {
  EMBER_CHECK(approximate == "tanh" || approximate == "none",
              "GELU: approximate must be \"tanh\" or \"none\", got \"", approximate, "\"");
}
Tensor Gelu::Forward(const Tensor& x) { return tanh_ ? ag::GeluTanh(x) : ag::GeluErf(x); }
std::string Gelu::ToString() const {
  return absl::StrCat("GELU(approximate='", tanh_ ? "tanh" : "none", "')");
}

Tensor Relu::Forward(const Tensor& x) { return ag::Relu(x); }
Tensor Tanh::Forward(const Tensor& x) { return ag::Tanh(x); }
Tensor Sigmoid::Forward(const Tensor& x) { return ag::Sigmoid(x); }
Tensor Softmax::Forward(const Tensor& x) { return ag::Softmax(x); }

Dropout::Dropout(double p, Generator& gen) : p_(p), gen_(&gen) {
  EMBER_CHECK(p >= 0 && p <= 1, "Dropout: p must be in [0, 1], got ", p);
}
Tensor Dropout::Forward(const Tensor& x) { return ag::Dropout(x, p_, is_training(), *gen_); }
std::string Dropout::ToString() const { return absl::StrCat("Dropout(p=", p_, ")"); }

namespace {
std::string Pair(const std::array<int64_t, 2>& p) { return absl::StrCat("(", p[0], ", ", p[1], ")"); }
}  // namespace

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel_size,
               const Conv2dOptions& options, Generator& gen, DType dtype)
    : in_(in_channels),
      out_(out_channels),
      kernel_(kernel_size),
      params_{options.stride, options.padding, options.dilation} {
  EMBER_CHECK(in_channels > 0 && out_channels > 0 && kernel_size[0] > 0 && kernel_size[1] > 0,
              "Conv2d: channels and kernel size must be positive, got ", in_channels, ", ",
              out_channels, " and ", Pair(kernel_size));
  weight_ = RegisterParameter("weight", Empty({out_channels, in_channels, kernel_size[0],
                                               kernel_size[1]}, dtype));
  InitKaimingUniform(weight_, std::sqrt(5.0), FanMode::kFanIn, gen);
  if (options.bias) {
    const double bound = 1 / std::sqrt(static_cast<double>(in_channels * kernel_size[0] * kernel_size[1]));
    bias_ = RegisterParameter("bias", Empty({out_channels}, dtype));
    InitUniform(bias_, -bound, bound, gen);
  }
}

Tensor Conv2d::Forward(const Tensor& x) { return ag::Conv2d(x, weight_, bias_, params_); }

std::string Conv2d::ToString() const {
  std::string s = absl::StrCat("Conv2d(", in_, ", ", out_, ", kernel_size=", Pair(kernel_),
                               ", stride=", Pair(params_.stride));
  if (params_.padding != std::array<int64_t, 2>{0, 0}) absl::StrAppend(&s, ", padding=", Pair(params_.padding));
  if (params_.dilation != std::array<int64_t, 2>{1, 1}) absl::StrAppend(&s, ", dilation=", Pair(params_.dilation));
  if (!bias_.defined()) absl::StrAppend(&s, ", bias=False");
  return s + ")";
}

MaxPool2d::MaxPool2d(std::array<int64_t, 2> kernel_size, std::array<int64_t, 2> stride,
                     std::array<int64_t, 2> padding, std::array<int64_t, 2> dilation)
    : params_{kernel_size, stride, padding, dilation} {
  for (int d = 0; d < 2; ++d) {
    if (params_.stride[d] == 0) params_.stride[d] = kernel_size[d];
  }
}

Tensor MaxPool2d::Forward(const Tensor& x) { return ag::MaxPool2d(x, params_); }

std::string MaxPool2d::ToString() const {
  return absl::StrCat("MaxPool2d(kernel_size=", Pair(params_.kernel), ", stride=", Pair(params_.stride),
                      ", padding=", Pair(params_.padding), ", dilation=", Pair(params_.dilation), ")");
}

Flatten::Flatten(int64_t start_dim, int64_t end_dim) : start_(start_dim), end_(end_dim) {}
Tensor Flatten::Forward(const Tensor& x) { return ag::Flatten(x, start_, end_); }
std::string Flatten::ToString() const {
  return absl::StrCat("Flatten(start_dim=", start_, ", end_dim=", end_, ")");
}

Sequential::Sequential(std::vector<std::shared_ptr<Module>> modules) {
  for (auto& m : modules) Append(std::move(m));
}

void Sequential::Append(std::shared_ptr<Module> module) {
  EMBER_CHECK(module != nullptr, "Sequential: null module");
  RegisterModule(std::to_string(size()), std::move(module));
}

Tensor Sequential::Forward(const Tensor& x) {
  Tensor y = x;
  for (const auto& [name, module] : Children()) y = module->Forward(y);
  return y;
}

std::string Sequential::ToString() const {
  std::string out = "Sequential(\n";
  for (const auto& [name, module] : Children()) {
    absl::StrAppend(&out, "  (", name, "): ", module->ToString(), "\n");
  }
  return out + ")";
}

Mlp::Mlp(int64_t dim, int64_t hidden, double dropout, Generator& gen)
    : c_fc_(RegisterModule("c_fc", std::make_shared<Linear>(dim, hidden, true, gen))),
      c_proj_(RegisterModule("c_proj", std::make_shared<Linear>(hidden, dim, true, gen))),
      dropout_(RegisterModule("dropout", std::make_shared<Dropout>(dropout, gen))) {}

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
  c_attn_ = RegisterModule("c_attn", std::make_shared<Linear>(dim, 3 * dim, true, gen));
  c_proj_ = RegisterModule("c_proj", std::make_shared<Linear>(dim, dim, true, gen));
  dropout_ = RegisterModule("dropout", std::make_shared<Dropout>(dropout, gen));
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
      cache->k = Empty({batch, heads_, cache->capacity, dim_ / heads_}, x.dtype());
      cache->v = Empty({batch, heads_, cache->capacity, dim_ / heads_}, x.dtype());
    }
    EMBER_CHECK(cache->k.size(0) == batch && cache->k.dtype() == x.dtype(), "CausalSelfAttention: a cache of ",
                cache->k.size(0), " sequences (", DTypeName(cache->k.dtype()), ") for a batch of ", batch, " (",
                DTypeName(x.dtype()), ")");
    const int64_t end = cache->length + time;
    EMBER_CHECK(end <= cache->capacity, "CausalSelfAttention: ", time, " more positions overflow a cache of ",
                cache->length, " / ", cache->capacity);
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
    : ln_1_(RegisterModule("ln_1", std::make_shared<LayerNorm>(dim))),
      attn_(
          RegisterModule("attn", std::make_shared<CausalSelfAttention>(dim, heads, dropout, gen))),
      ln_2_(RegisterModule("ln_2", std::make_shared<LayerNorm>(dim))),
      mlp_(RegisterModule("mlp", std::make_shared<Mlp>(dim, 4 * dim, dropout, gen))) {}

Tensor Block::Forward(const Tensor& x) { return Forward(x, nullptr); }

Tensor Block::Forward(const Tensor& x, AttentionCache* cache) {
  const Tensor h = x + attn_->Forward(ln_1_->Forward(x), cache);
  return h + mlp_->Forward(ln_2_->Forward(h));
}

std::string Block::ToString() const {
  return absl::StrCat("Block(", attn_->ToString(), ", ", mlp_->ToString(), ")");
}

// The layers a model spec (nn/spec.h) can name, with PyTorch's argument names and
// defaults.

EMBER_REGISTER_LAYER(Linear, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const int64_t in, a.Int("in_features"));
  ASSIGN_OR_RETURN(const int64_t out, a.Int("out_features"));
  ASSIGN_OR_RETURN(const bool bias, a.Bool("bias", true));
  return std::make_shared<Linear>(in, out, bias, a.gen());
});

EMBER_REGISTER_LAYER(Conv2d, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const int64_t in, a.Int("in_channels"));
  ASSIGN_OR_RETURN(const int64_t out, a.Int("out_channels"));
  ASSIGN_OR_RETURN(const auto kernel, a.Pair("kernel_size"));
  Conv2dOptions options;
  ASSIGN_OR_RETURN(options.stride, a.Pair("stride", {1, 1}));
  ASSIGN_OR_RETURN(options.padding, a.Pair("padding", {0, 0}));
  ASSIGN_OR_RETURN(options.dilation, a.Pair("dilation", {1, 1}));
  ASSIGN_OR_RETURN(options.bias, a.Bool("bias", true));
  return std::make_shared<Conv2d>(in, out, kernel, options, a.gen());
});

EMBER_REGISTER_LAYER(MaxPool2d, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const auto kernel, a.Pair("kernel_size"));
  ASSIGN_OR_RETURN(const auto stride, a.Pair("stride", kernel));
  ASSIGN_OR_RETURN(const auto padding, a.Pair("padding", {0, 0}));
  ASSIGN_OR_RETURN(const auto dilation, a.Pair("dilation", {1, 1}));
  return std::make_shared<MaxPool2d>(kernel, stride, padding, dilation);
});

EMBER_REGISTER_LAYER(Embedding, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const int64_t num, a.Int("num_embeddings"));
  ASSIGN_OR_RETURN(const int64_t dim, a.Int("embedding_dim"));
  return std::make_shared<Embedding>(num, dim, a.gen());
});

EMBER_REGISTER_LAYER(LayerNorm, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const int64_t dim, a.Int("normalized_shape"));
  ASSIGN_OR_RETURN(const double eps, a.Float("eps", 1e-5));
  return std::make_shared<LayerNorm>(dim, eps);
});

EMBER_REGISTER_LAYER(GELU, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const std::string approximate, a.String("approximate", "none"));
  return std::make_shared<Gelu>(approximate);
});

EMBER_REGISTER_LAYER(ReLU, [](const LayerArgs&) -> LayerOr { return std::make_shared<Relu>(); });
EMBER_REGISTER_LAYER(Tanh, [](const LayerArgs&) -> LayerOr { return std::make_shared<Tanh>(); });
EMBER_REGISTER_LAYER(Sigmoid, [](const LayerArgs&) -> LayerOr { return std::make_shared<Sigmoid>(); });

EMBER_REGISTER_LAYER(Softmax, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const int64_t dim, a.Int("dim", -1));
  if (dim != -1) {
    return absl::InvalidArgumentError(absl::StrCat("Softmax runs over the last dimension (dim -1), got dim ", dim));
  }
  return std::make_shared<Softmax>();
});

EMBER_REGISTER_LAYER(Dropout, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const double p, a.Float("p", 0.5));
  return std::make_shared<Dropout>(p, a.gen());
});

EMBER_REGISTER_LAYER(Flatten, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const int64_t start, a.Int("start_dim", 1));
  ASSIGN_OR_RETURN(const int64_t end, a.Int("end_dim", -1));
  return std::make_shared<Flatten>(start, end);
});

}  // namespace ember::nn
