#include "nn/layers.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "autograd/autocast.h"
#include "autograd/autograd.h"
#include "base/error.h"
#include "base/status.h"
#include "nn/registry.h"
#include "tensor/creation.h"

namespace ember::nn {

namespace ag = autograd;

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, Generator& gen, DType dtype)
    : in_(in_features), out_(out_features) {
  EMBER_CHECK(in_features > 0 && out_features > 0, "Linear: sizes must be positive, got ",
              in_features, " and ", out_features);
  // torch.nn.Linear's defaults: kaiming_uniform(a = sqrt 5), i.e. U(+-1/sqrt(in)), and
  // the bias U(+-1/sqrt(in)).
  const double bound = 1 / std::sqrt(static_cast<double>(in_features));
  weight_ = RegisterParameter("weight",
                              {{out_features, in_features},
                               dtype,
                               Initializer::KaimingUniform(std::sqrt(5.0)),
                               {"out", "in"}},
                              gen);
  if (bias)
    bias_ = RegisterParameter(
        "bias", {{out_features}, dtype, Initializer::Uniform(-bound, bound), {"out"}}, gen);
}

void PackedForInference::Pack(const Tensor& w, ops::PackedFormat format) {
  packed_ = ops::PackWeight(w, format);
  source_ = w.raw_data();
  version_ = w.storage().version();
}

Tensor PackedForInference::Forward(const Tensor& x, const Tensor& w, const Tensor& bias) const {
  if (!packed() || ag::GradModeEnabled() || w.raw_data() != source_ ||
      w.storage().version() != version_) {
    return Tensor();
  }
  return ops::PackedLinear(ag::internal::ForProduct(x), packed_, bias);
}

Tensor Linear::Forward(const Tensor& x) {
  EMBER_CHECK(x.dim() >= 1 && x.size(-1) == in_, "Linear(in_features=", in_, "): input of shape ",
              ShapeToString(x.shape()), " has ", x.dim() ? x.size(-1) : 0, " features");
  if (Tensor y = packed_.Forward(x, weight_, bias_); y.defined()) return y;
  return ag::Linear(x, weight_, bias_);
}

std::vector<Linear*> FindLinears(Module& module) {
  std::vector<Linear*> found;
  if (auto* linear = dynamic_cast<Linear*>(&module)) found.push_back(linear);
  for (const auto& [name, child] : module.Children()) {
    const std::vector<Linear*> below = FindLinears(*child);
    found.insert(found.end(), below.begin(), below.end());
  }
  return found;
}

std::string Linear::ToString() const {
  return absl::StrCat("Linear(in_features=", in_, ", out_features=", out_,
                      ", bias=", bias_.defined() ? "True" : "False", ")");
}

Embedding::Embedding(int64_t num_embeddings, int64_t dim, Generator& gen, DType dtype) {
  EMBER_CHECK(num_embeddings > 0 && dim > 0, "Embedding: sizes must be positive, got ",
              num_embeddings, " and ", dim);
  weight_ = RegisterParameter(
      "weight", {{num_embeddings, dim}, dtype, Initializer::Normal(0, 1), {"vocab", "embed"}}, gen);
}

Tensor Embedding::Forward(const Tensor& ids) { return ag::Embedding(weight_, ids); }

std::string Embedding::ToString() const {
  return absl::StrCat("Embedding(", weight_.size(0), ", ", weight_.size(1), ")");
}

PositionEmbedding::PositionEmbedding(int64_t num_positions, int64_t dim, Generator& gen,
                                     DType dtype) {
  EMBER_CHECK(num_positions > 0 && dim > 0, "PositionEmbedding: sizes must be positive, got ",
              num_positions, " and ", dim);
  weight_ = RegisterParameter(
      "weight", {{num_positions, dim}, dtype, Initializer::Normal(0, 1), {"positions", "embed"}},
      gen);
}

Tensor PositionEmbedding::Forward(const Tensor& x) {
  EMBER_CHECK(x.dim() >= 2 && x.size(-1) == weight_.size(1) && x.size(-2) <= weight_.size(0),
              ToString(), ": input of shape ", ShapeToString(x.shape()),
              " is not [..., T <= ", weight_.size(0), ", ", weight_.size(1), "]");
  // The rows looked up as GPT's wpe(arange(T)), so that the gradient sums the same way.
  return ag::Add(x, ag::Embedding(weight_, Arange(0, x.size(-2)).To(x.device())));
}

std::string PositionEmbedding::ToString() const {
  return absl::StrCat("PositionEmbedding(", weight_.size(0), ", ", weight_.size(1), ")");
}

LayerNorm::LayerNorm(int64_t dim, double eps, bool bias, DType dtype) : eps_(eps) {
  weight_ = RegisterParameter("weight", {{dim}, dtype, Initializer::Ones(), {"embed"}});
  if (bias) bias_ = RegisterParameter("bias", {{dim}, dtype, Initializer::Zeros(), {"embed"}});
}

Tensor LayerNorm::Forward(const Tensor& x) { return ag::LayerNorm(x, weight_, bias_, eps_); }

std::pair<Tensor, Tensor> LayerNorm::Forward(const Tensor& x, const Tensor& residual) {
  return ag::AddLayerNorm(x, residual, weight_, bias_, eps_);
}

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
std::string Pair(const std::array<int64_t, 2>& p) {
  return absl::StrCat("(", p[0], ", ", p[1], ")");
}
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
  weight_ = RegisterParameter("weight",
                              {{out_channels, in_channels, kernel_size[0], kernel_size[1]},
                               dtype,
                               Initializer::KaimingUniform(std::sqrt(5.0)),
                               {"out_channels", "in_channels", "kernel_height", "kernel_width"}},
                              gen);
  if (options.bias) {
    const double bound =
        1 / std::sqrt(static_cast<double>(in_channels * kernel_size[0] * kernel_size[1]));
    bias_ = RegisterParameter(
        "bias", {{out_channels}, dtype, Initializer::Uniform(-bound, bound), {"out_channels"}},
        gen);
  }
}

Tensor Conv2d::Forward(const Tensor& x) { return ag::Conv2d(x, weight_, bias_, params_); }

std::string Conv2d::ToString() const {
  std::string s = absl::StrCat("Conv2d(", in_, ", ", out_, ", kernel_size=", Pair(kernel_),
                               ", stride=", Pair(params_.stride));
  if (params_.padding != std::array<int64_t, 2>{0, 0})
    absl::StrAppend(&s, ", padding=", Pair(params_.padding));
  if (params_.dilation != std::array<int64_t, 2>{1, 1})
    absl::StrAppend(&s, ", dilation=", Pair(params_.dilation));
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
  return absl::StrCat("MaxPool2d(kernel_size=", Pair(params_.kernel),
                      ", stride=", Pair(params_.stride), ", padding=", Pair(params_.padding),
                      ", dilation=", Pair(params_.dilation), ")");
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
  for (const auto& [name, module] : Children()) y = (*module)(y);  // with its hooks, as torch
  return y;
}

std::string Sequential::ToString() const {
  std::string out = "Sequential(\n";
  for (const auto& [name, module] : Children()) {
    absl::StrAppend(&out, "  (", name, "): ", module->ToString(), "\n");
  }
  return out + ")";
}

// The layers a model spec (nn/network_json.h) can name, with PyTorch's argument names and
// defaults.

EMBER_REGISTER_LAYER(
    Linear,
    [](const LayerArgs& a) -> LayerOr {
      ASSIGN_OR_RETURN(const int64_t in, a.Int("in_features"));
      ASSIGN_OR_RETURN(const int64_t out, a.Int("out_features"));
      RETURN_IF_ERROR(a.CheckParameters({out, in}));
      ASSIGN_OR_RETURN(const bool bias, a.Bool("bias", true));
      return std::make_shared<Linear>(in, out, bias, a.gen());
    },
    LayerSizes::From("in_features", "out_features"));

EMBER_REGISTER_LAYER(Conv2d, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const int64_t in, a.Int("in_channels"));
  ASSIGN_OR_RETURN(const int64_t out, a.Int("out_channels"));
  ASSIGN_OR_RETURN(const auto kernel, a.Pair("kernel_size"));
  RETURN_IF_ERROR(a.CheckParameters({out, in, kernel[0], kernel[1]}));
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

EMBER_REGISTER_LAYER(
    Embedding,
    [](const LayerArgs& a) -> LayerOr {
      ASSIGN_OR_RETURN(const int64_t num, a.Int("num_embeddings"));
      ASSIGN_OR_RETURN(const int64_t dim, a.Int("embedding_dim"));
      RETURN_IF_ERROR(a.CheckParameters({num, dim}));
      return std::make_shared<Embedding>(num, dim, a.gen());
    },
    LayerSizes::From("", "embedding_dim"));

EMBER_REGISTER_LAYER(
    PositionEmbedding,
    [](const LayerArgs& a) -> LayerOr {
      ASSIGN_OR_RETURN(const int64_t num, a.Int("num_positions"));
      ASSIGN_OR_RETURN(const int64_t dim, a.Int("embedding_dim"));
      RETURN_IF_ERROR(a.CheckParameters({num, dim}));
      return std::make_shared<PositionEmbedding>(num, dim, a.gen());
    },
    LayerSizes::Same("embedding_dim"));

EMBER_REGISTER_LAYER(
    LayerNorm,
    [](const LayerArgs& a) -> LayerOr {
      ASSIGN_OR_RETURN(const int64_t dim, a.Int("normalized_shape"));
      ASSIGN_OR_RETURN(const double eps, a.Float("eps", 1e-5));
      return std::make_shared<LayerNorm>(dim, eps);
    },
    LayerSizes::Same("normalized_shape"));

EMBER_REGISTER_LAYER(
    GELU,
    [](const LayerArgs& a) -> LayerOr {
      ASSIGN_OR_RETURN(const std::string approximate, a.String("approximate", "none"));
      return std::make_shared<Gelu>(approximate);
    },
    LayerSizes::Same());

EMBER_REGISTER_LAYER(
    ReLU, [](const LayerArgs&) -> LayerOr { return std::make_shared<Relu>(); }, LayerSizes::Same());
EMBER_REGISTER_LAYER(
    Tanh, [](const LayerArgs&) -> LayerOr { return std::make_shared<Tanh>(); }, LayerSizes::Same());
EMBER_REGISTER_LAYER(
    Sigmoid, [](const LayerArgs&) -> LayerOr { return std::make_shared<Sigmoid>(); },
    LayerSizes::Same());

EMBER_REGISTER_LAYER(
    Softmax,
    [](const LayerArgs& a) -> LayerOr {
      ASSIGN_OR_RETURN(const int64_t dim, a.Int("dim", -1));
      if (dim != -1) {
        return absl::InvalidArgumentError(
            absl::StrCat("Softmax runs over the last dimension (dim -1), got dim ", dim));
      }
      return std::make_shared<Softmax>();
    },
    LayerSizes::Same());

EMBER_REGISTER_LAYER(
    Dropout,
    [](const LayerArgs& a) -> LayerOr {
      ASSIGN_OR_RETURN(const double p, a.Float("p", 0.5));
      return std::make_shared<Dropout>(p, a.gen());
    },
    LayerSizes::Same());

EMBER_REGISTER_LAYER(Flatten, [](const LayerArgs& a) -> LayerOr {
  ASSIGN_OR_RETURN(const int64_t start, a.Int("start_dim", 1));
  ASSIGN_OR_RETURN(const int64_t end, a.Int("end_dim", -1));
  return std::make_shared<Flatten>(start, end);
});

}  // namespace ember::nn
