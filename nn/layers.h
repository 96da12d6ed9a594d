#ifndef EMBER_NN_LAYERS_H_
#define EMBER_NN_LAYERS_H_

// Layers, as torch.nn's, with PyTorch's parameter names, shapes and default
// initialisation (so that state dicts move between the two).

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "tensor/ops/conv.h"
#include "tensor/ops/packed_linear.h"
#include "tensor/ops/pool.h"
#include "tensor/random.h"

namespace ember::nn {

// A weight W [out, in] packed once for inference (tensor/ops/packed_linear.h), used in
// place of W while grad mode is off and W is still the tensor that was packed (the same
// memory, not written since: its version counter); otherwise W itself is used, so that
// training, or loading new weights, never meets a stale copy.
class PackedForInference {
 public:
  // Packs w (f32, on the CPU) in `format`.
  void Pack(const Tensor& w, ops::PackedFormat format);
  void Clear() { packed_ = ops::PackedWeight(); }
  // x W'^T + bias if the packed copy stands for w now (x cast as a product's operand
  // under autocast, autograd/autocast.h); else undefined.
  Tensor Forward(const Tensor& x, const Tensor& w, const Tensor& bias) const;
  bool packed() const { return packed_.data.defined(); }
  const ops::PackedWeight& weight() const { return packed_; }

 private:
  ops::PackedWeight packed_;
  const void* source_ = nullptr;  // w's memory and version when packed
  uint64_t version_ = 0;
};

// y = x W^T + b, W [out, in]. Init: kaiming_uniform(a = sqrt(5)) for W, which is
// U(-1/sqrt(in), 1/sqrt(in)), and the same range for b. Pack() keeps a copy of W for
// inference (PackedForInference: f32 re-laid, bf16 or int8).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true,
         Generator& gen = DefaultGenerator(), DType dtype = DType::kF32);
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias
  void Pack(ops::PackedFormat format) { packed_.Pack(weight_, format); }
  void Unpack() { packed_.Clear(); }
  const PackedForInference& packed() const { return packed_; }

 private:
  int64_t in_, out_;
  Tensor weight_, bias_;
  PackedForInference packed_;
};

// Every Linear in module's tree (module itself included), depth first: the layers
// PackedForInference packs.
std::vector<Linear*> FindLinears(Module& module);

// Rows of weight [num, dim] picked by integer ids. Init: N(0, 1).
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, Generator& gen = DefaultGenerator(),
            DType dtype = DType::kF32);
  Tensor Forward(const Tensor& ids) override;
  std::string ToString() const override;
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

// Learnt absolute positions (GPT-2's wpe): x [..., T, C] plus the table's first T rows,
// y[..., t, :] = x[..., t, :] + weight[t, :], weight [num_positions, C] drawn N(0, 1) as
// Embedding's. T must be at most num_positions.
class PositionEmbedding : public Module {
 public:
  PositionEmbedding(int64_t num_positions, int64_t dim, Generator& gen = DefaultGenerator(),
                    DType dtype = DType::kF32);
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

// Over the last dimension; weight ones, bias zeros.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5, bool bias = true, DType dtype = DType::kF32);
  Tensor Forward(const Tensor& x) override;
  // A residual add and this LayerNorm: {h, Forward(h)} with h = x + residual, in one
  // kernel pass (autograd::AddLayerNorm).
  std::pair<Tensor, Tensor> Forward(const Tensor& x, const Tensor& residual);
  std::string ToString() const override;

 private:
  double eps_;
  Tensor weight_, bias_;
};

// Activations and other parameter-free layers.
class Gelu : public Module {
 public:
  // approximate "tanh" (GPT-2's) or "none" (the erf form), as torch.nn.GELU.
  explicit Gelu(std::string approximate = "none");
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;

 private:
  bool tanh_;
};
class Relu : public Module {
 public:
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override { return "ReLU()"; }
};
class Tanh : public Module {
 public:
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override { return "Tanh()"; }
};
class Sigmoid : public Module {
 public:
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override { return "Sigmoid()"; }
};
class Softmax : public Module {  // over the last dimension
 public:
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override { return "Softmax(dim=-1)"; }
};
// Active in training mode only; masks are drawn from `gen`, which must outlive it.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5, Generator& gen = DefaultGenerator());
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;

 private:
  double p_;
  Generator* gen_;
};
// 2-d convolution over NCHW input: weight [out, in, kh, kw], bias [out]. Init as
// PyTorch: kaiming_uniform(a = sqrt(5)) for the weight, which is U(-1/sqrt(fan_in),
// 1/sqrt(fan_in)) with fan_in = in kh kw, and the same range for the bias.
struct Conv2dOptions {
  std::array<int64_t, 2> stride{1, 1}, padding{0, 0}, dilation{1, 1};  // {height, width}
  bool bias = true;
};

class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, std::array<int64_t, 2> kernel_size,
         const Conv2dOptions& options = {}, Generator& gen = DefaultGenerator(),
         DType dtype = DType::kF32);
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // undefined without bias

 private:
  int64_t in_, out_;
  std::array<int64_t, 2> kernel_;
  ops::Conv2dParams params_;
  Tensor weight_, bias_;
};

// Max over kernel windows of NCHW input; stride defaults to the kernel size.
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(std::array<int64_t, 2> kernel_size, std::array<int64_t, 2> stride = {0, 0},
                     std::array<int64_t, 2> padding = {0, 0},
                     std::array<int64_t, 2> dilation = {1, 1});
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;

 private:
  ops::MaxPool2dParams params_;
};

// Merges dimensions start..end (default: all but the batch dimension).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1);
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;

 private:
  int64_t start_, end_;
};

// Its modules in order, named "0", "1", ...
class Sequential : public Module {
 public:
  Sequential() = default;
  explicit Sequential(std::vector<std::shared_ptr<Module>> modules);
  void Append(std::shared_ptr<Module> module);
  Tensor Forward(const Tensor& x) override;
  std::string ToString() const override;
  size_t size() const { return Children().size(); }
};

}  // namespace ember::nn

#endif  // EMBER_NN_LAYERS_H_
