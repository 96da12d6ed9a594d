// Layers, losses, optimizers and checkpoints in `ember._ember`, for ember.nn,
// ember.nn.functional, ember.optim and ember.save/load (python/ember/): the functional
// forms of the layers over ember::autograd, the C++ layers' initial parameters (so that
// a Python Linear starts as the C++ one and PyTorch's does), the C++ optimizers, and
// safetensors files. An optimizer's step releases the GIL.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "autograd/autograd.h"
#include "nn/layers.h"
#include "nn/loss.h"
#include "nn/module.h"
#include "nn/network_json.h"
#include "nn/safetensors.h"
#include "optim/optimizer.h"
#include "python/status.h"
#include "tensor/creation.h"

namespace py = pybind11;

namespace ember::python {
namespace {

namespace ag = ::ember::autograd;

Tensor Or(const std::optional<Tensor>& t) { return t.value_or(Tensor()); }

// An int or a pair, as PyTorch's kernel_size, stride, padding and dilation.
std::array<int64_t, 2> Pair(const py::object& value) {
  if (py::isinstance<py::int_>(value)) return {value.cast<int64_t>(), value.cast<int64_t>()};
  const auto v = value.cast<std::vector<int64_t>>();
  if (v.size() != 2)
    throw py::value_error(absl::StrCat("expected an int or two ints, got ", v.size()));
  return {v[0], v[1]};
}

py::dict Parameters(const nn::Module& module) {
  py::dict out;
  for (const auto& [name, t] : module.NamedParameters()) out[py::str(name)] = t;
  return out;
}

int64_t LastDim(int64_t dim, const Tensor& x, const char* op) {
  EMBER_CHECK(dim == -1 || dim == x.dim() - 1, op, ": only over the last dimension (dim=-1), not ",
              dim);
  return dim;
}

void BindFunctional(py::module_& m) {
  py::module_ f = m.def_submodule("functional", "torch.nn.functional's names over ember::autograd");
  f.def(
      "linear",
      [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
        py::gil_scoped_release release;
        return ag::Linear(x, w, Or(b));
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none());
  // The fused recurrent steps behind nn.LSTM/GRU and their cells (torch's private
  // _thnn_fused_lstm_cell and _thnn_fused_gru_cell, after the two products).
  f.def("_lstm_cell", &ag::LstmCell, py::arg("gates_x"), py::arg("gates_h"), py::arg("c"));
  f.def("_gru_cell", &ag::GruCell, py::arg("gates_x"), py::arg("gates_h"), py::arg("h"));
  f.def(
      "embedding",
      [](const Tensor& ids, const Tensor& weight) { return ag::Embedding(weight, ids); },
      py::arg("input"), py::arg("weight"));
  f.def(
      "layer_norm",
      [](const Tensor& x, const std::vector<int64_t>& shape, const std::optional<Tensor>& w,
         const std::optional<Tensor>& b, double eps) {
        EMBER_CHECK(shape.size() == 1 && x.dim() >= 1 && shape[0] == x.size(-1),
                    "layer_norm: normalized_shape must be the last dimension [",
                    x.dim() ? x.size(-1) : 0, "]");
        const Tensor weight = w ? *w : Ones({shape[0]}, x.dtype());
        return ag::LayerNorm(x, weight, Or(b), eps);
      },
      py::arg("input"), py::arg("normalized_shape"), py::arg("weight") = py::none(),
      py::arg("bias") = py::none(), py::arg("eps") = 1e-5);
  f.def(
      "conv2d",
      [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, const py::object& stride,
         const py::object& padding, const py::object& dilation) {
        ops::Conv2dParams params;
        params.stride = Pair(stride), params.padding = Pair(padding),
        params.dilation = Pair(dilation);
        py::gil_scoped_release release;
        return ag::Conv2d(x, w, Or(b), params);
      },
      py::arg("input"), py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
      py::arg("padding") = 0, py::arg("dilation") = 1);
  f.def(
      "max_pool2d",
      [](const Tensor& x, const py::object& kernel, const py::object& stride,
         const py::object& padding, const py::object& dilation) {
        ops::MaxPool2dParams params;
        params.kernel = Pair(kernel);
        params.stride = stride.is_none() ? params.kernel : Pair(stride);
        params.padding = Pair(padding), params.dilation = Pair(dilation);
        return ag::MaxPool2d(x, params);
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::none(),
      py::arg("padding") = 0, py::arg("dilation") = 1);
  f.def("relu", &ag::Relu, py::arg("input"));
  f.def("tanh", &ag::Tanh, py::arg("input"));
  f.def("sigmoid", &ag::Sigmoid, py::arg("input"));
  f.def(
      "gelu",
      [](const Tensor& x, const std::string& approximate) {
        if (approximate == "tanh") return ag::GeluTanh(x);
        if (approximate == "none") return ag::GeluErf(x);
        throw py::value_error(
            absl::StrCat("gelu: approximate must be 'none' or 'tanh', not '", approximate, "'"));
      },
      py::arg("input"), py::arg("approximate") = "none");
  f.def(
      "softmax",
      [](const Tensor& x, int64_t dim) { return LastDim(dim, x, "softmax"), ag::Softmax(x); },
      py::arg("input"), py::arg("dim") = -1);
  f.def(
      "log_softmax",
      [](const Tensor& x, int64_t dim) {
        return LastDim(dim, x, "log_softmax"), ag::LogSoftmax(x);
      },
      py::arg("input"), py::arg("dim") = -1);
  f.def(
      "scaled_dot_product_attention",
      [](const Tensor& q, const Tensor& k, const Tensor& v, const py::object& attn_mask,
         double dropout_p, bool is_causal, const py::object& scale) {
        // ember's fused causal attention: softmax(q k^T / sqrt(d) + causal mask) v.
        EMBER_CHECK(is_causal && attn_mask.is_none(),
                    "scaled_dot_product_attention: only causal attention (is_causal=True, no "
                    "attn_mask)");
        EMBER_CHECK(scale.is_none() ||
                        std::abs(scale.cast<double>() * std::sqrt(static_cast<double>(q.size(-1))) -
                                 1) < 1e-12,
                    "scaled_dot_product_attention: scale must be 1/sqrt(d) (the default)");
        py::gil_scoped_release release;
        return ag::CausalAttention(q, k, v, dropout_p);  // dropout in the kernel, from the
                                                         // default generator (manual_seed's)
      },
      py::arg("query"), py::arg("key"), py::arg("value"), py::arg("attn_mask") = py::none(),
      py::arg("dropout_p") = 0.0, py::arg("is_causal") = false, py::arg("scale") = py::none());
  f.def(
      "dropout",
      [](const Tensor& x, double p, bool training) { return ag::Dropout(x, p, training); },
      py::arg("input"), py::arg("p") = 0.5, py::arg("training") = true);
  f.def(
      "cross_entropy",
      [](const Tensor& logits, const Tensor& targets, int64_t ignore_index,
         double label_smoothing) {
        return nn::CrossEntropyLoss(logits, targets, ignore_index, label_smoothing);
      },
      py::arg("input"), py::arg("target"), py::arg("ignore_index") = -100,
      py::arg("label_smoothing") = 0.0);
  f.def(
      "nll_loss",
      [](const Tensor& log_probs, const Tensor& targets, int64_t ignore_index) {
        return nn::NllLoss(log_probs, targets, ignore_index);
      },
      py::arg("input"), py::arg("target"), py::arg("ignore_index") = -100);
  f.def("mse_loss", &nn::MseLoss, py::arg("input"), py::arg("target"));
  f.def("binary_cross_entropy_with_logits", &nn::BceWithLogitsLoss, py::arg("input"),
        py::arg("target"));
}

// The initial parameters of the C++ layers (PyTorch's initialisations), by name.
void BindInit(py::module_& m) {
  m.def("_linear_parameters", [](int64_t in, int64_t out, bool bias, DType dtype) {
    return Parameters(nn::Linear(in, out, bias, DefaultGenerator(), dtype));
  });
  m.def("_embedding_parameters", [](int64_t num, int64_t dim, DType dtype) {
    return Parameters(nn::Embedding(num, dim, DefaultGenerator(), dtype));
  });
  m.def("_conv2d_parameters",
        [](int64_t in, int64_t out, const py::object& kernel, bool bias, DType dtype) {
          nn::Conv2dOptions options;
          options.bias = bias;
          return Parameters(nn::Conv2d(in, out, Pair(kernel), options, DefaultGenerator(), dtype));
        });
  m.def("_clip_grad_norm", [](const std::vector<Tensor>& params, double max_norm) {
    py::gil_scoped_release release;
    return optim::ClipGradNorm(params, max_norm);
  });
}

// An optimizer and the groups' learning rates and weight decays, which ember.optim
// sets from its param_groups before each step (for schedulers, as in PyTorch).
void BindOptim(py::module_& m) {
  py::class_<optim::Optimizer>(m, "_Optimizer")
      .def("step",
           [](optim::Optimizer& o) {
             py::gil_scoped_release release;
             o.Step();
           })
      .def("zero_grad", &optim::Optimizer::ZeroGrad)
      .def("set_group",
           [](optim::Optimizer& o, size_t g, double lr, double weight_decay) {
             if (g >= o.param_groups().size())
               throw py::index_error(absl::StrCat("no parameter group ", g));
             o.param_groups()[g].lr = lr;
             o.param_groups()[g].weight_decay = weight_decay;
           })
      .def("state_dict", &optim::Optimizer::StateDict)
      .def("load_state_dict", [](optim::Optimizer& o, const std::map<std::string, Tensor>& state) {
        if (const absl::Status s = o.LoadStateDict(state); !s.ok()) Raise(s);
      });
  m.def("_make_optimizer",
        [](const std::string& kind, const py::list& groups, const py::dict& options) {
          std::vector<optim::ParamGroup> gs;
          for (const py::handle g : groups) {
            const py::dict group = g.cast<py::dict>();
            gs.push_back({group["params"].cast<std::vector<Tensor>>(), group["lr"].cast<double>(),
                          group["weight_decay"].cast<double>()});
          }
          auto get = [&](const char* key, double fallback) {
            return options.contains(key) ? options[key].cast<double>() : fallback;
          };
          std::unique_ptr<optim::Optimizer> o;
          if (kind == "sgd") {
            optim::SgdOptions s;
            s.momentum = get("momentum", 0), s.dampening = get("dampening", 0);
            s.nesterov = options.contains("nesterov") && options["nesterov"].cast<bool>();
            o = optim::Sgd(std::move(gs), s);
          } else if (kind == "rmsprop") {
            optim::RmspropOptions r;
            r.alpha = get("alpha", 0.99), r.eps = get("eps", 1e-8), r.momentum = get("momentum", 0);
            r.centered = options.contains("centered") && options["centered"].cast<bool>();
            o = optim::Rmsprop(std::move(gs), r);
          } else {
            optim::AdamOptions a;
            a.beta1 = get("beta1", 0.9), a.beta2 = get("beta2", 0.999), a.eps = get("eps", 1e-8);
            o = kind == "adamw" ? optim::AdamW(std::move(gs), a) : optim::Adam(std::move(gs), a);
          }
          return o;
        });
}

void BindSafetensors(py::module_& m) {
  m.def(
      "_save",
      [](const std::map<std::string, Tensor>& tensors, const std::string& path,
         const std::map<std::string, std::string>& metadata) {
        std::map<std::string, Tensor> plain;
        for (const auto& [name, t] : tensors) plain[name] = ag::Detach(t);
        py::gil_scoped_release release;
        if (const absl::Status s = nn::SaveSafetensors(path, plain, metadata); !s.ok()) Raise(s);
      },
      py::arg("tensors"), py::arg("path"),
      py::arg("metadata") = std::map<std::string, std::string>{});
  m.def(
      "_load",
      [](const std::string& path) {
        absl::StatusOr<nn::Safetensors> file;
        {
          py::gil_scoped_release release;
          file = nn::LoadSafetensors(path);
        }
        nn::Safetensors loaded = ValueOrRaise(std::move(file));
        return py::make_tuple(std::move(loaded.tensors), std::move(loaded.metadata));
      },
      py::arg("path"));
}

// A model built in C++ from a JSON spec (nn/network_json.h), which ember.nn.from_spec wraps: its
// forward, its parameters (the C++ layers' own leaves) and its training mode.
void BindSpec(py::module_& m) {
  py::class_<nn::Module, std::shared_ptr<nn::Module>>(m, "_SpecModel")
      .def("forward",
           [](nn::Module& net, const Tensor& x) {
             py::gil_scoped_release release;
             return net(x);
           })
      .def("named_parameters", &nn::Module::NamedParameters)
      .def("train", &nn::Module::Train)
      .def("__repr__", &nn::Module::ToString);
  m.def(
      "_model_from_spec",
      [](const std::string& spec) {
        const bool text = spec.find_first_not_of(" \t\r\n") != std::string::npos &&
                          spec[spec.find_first_not_of(" \t\r\n")] == '{';
        return ValueOrRaise(text ? nn::ModelFromJson(spec) : nn::ModelFromJsonFile(spec));
      },
      py::arg("spec"));
}

}  // namespace

void BindNn(py::module_& m) {
  BindSpec(m);
  BindFunctional(m);
  BindInit(m);
  BindOptim(m);
  BindSafetensors(m);
}

}  // namespace ember::python
