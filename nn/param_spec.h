#ifndef EMBER_NN_PARAM_SPEC_H_
#define EMBER_NN_PARAM_SPEC_H_

// A parameter described before any memory exists, as nanoGPTJAX describes them: its
// shape, dtype, how its values are drawn, and a logical name for each axis ("vocab",
// "embed", "mlp", "heads", ...). Where it is made (which device, whole or one rank's
// shard along a named axis) is decided apart, by nn::Materialize (module.h), so a
// layer's code is the same on one CPU and sharded across ranks.

#include <string>
#include <vector>

#include "core/shape.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ember::nn {

// How a parameter's values are made: a constant, or a distribution whose draws come
// from a generator in row-major order (as nn/init.h's functions draw them).
class Initializer {
 public:
  static Initializer Zeros();
  static Initializer Ones();
  static Initializer Uniform(double low, double high);
  static Initializer Normal(double mean, double std);
  // torch.nn.init.kaiming_uniform_ with fan_in: U(-b, b), b = sqrt(6 / ((1 + a^2) fan_in)),
  // the fan of the whole tensor (nn.Linear's and nn.Conv2d's default, a = sqrt(5)).
  static Initializer KaimingUniform(double a);

  // "normal(0, 0.02)", "kaiming_uniform(a=2.23607)", ...
  std::string ToString() const;

  // Writes into `out` (a contiguous CPU tensor) the values of rows [begin, begin +
  // out.size(axis)) along `axis` of a tensor of shape `whole` (axis -1: out is the
  // whole tensor), drawn from gen as drawing the whole tensor would draw them; gen
  // ends where drawing the whole tensor would leave it.
  void Fill(const Tensor& out, IntSpan whole, int axis, int64_t begin, Generator& gen) const;

 private:
  enum class Kind { kZeros, kOnes, kUniform, kNormal, kKaimingUniform };
  Initializer(Kind kind, double a, double b) : kind_(kind), a_(a), b_(b) {}
  Kind kind_;
  double a_, b_;  // uniform: low, high; normal: mean, std; kaiming: a
};

struct ParamSpec {
  Shape shape;
  DType dtype = DType::kF32;
  Initializer init = Initializer::Zeros();
  std::vector<std::string> axes;  // a logical name per dimension
  // Per dimension (empty: 1 each), how many tensors lie side by side along it: c_attn's
  // output is q, k and v, 3 parts, and a shard along it takes its share of each part
  // (the same heads of q, k and v), as Megatron splits a fused projection.
  std::vector<int64_t> parts;

  int64_t parts_of(size_t dim) const { return parts.empty() ? 1 : parts[dim]; }

  int64_t numel() const { return NumElements(shape); }
  int64_t nbytes() const { return numel() * ItemSize(dtype); }
  // "[768, 3072] f32 (embed, mlp) normal(0, 0.02)"; a dimension of parts "qkv*3".
  std::string ToString() const;
};

// The views of `t` that shard k of n along dimension `dim` covers, when that dimension
// is `parts` tensors side by side: the k-th n-th of each part, in order (one view when
// parts is 1). A shard is their concatenation along `dim`.
std::vector<Tensor> ShardViews(const Tensor& t, int dim, int64_t parts, int64_t n, int64_t k);

// One shard of a parameter made from its spec: along each dimension d, split[d] equal
// shards (of each of its parts), of which this is coord[d]; the values are the whole
// tensor's there, drawn from gen as drawing the whole tensor would draw them (and gen
// ends where that would leave it), though only this shard's memory is made. A contiguous
// CPU tensor.
Tensor DrawShard(const ParamSpec& spec, IntSpan split, IntSpan coord, Generator& gen);

}  // namespace ember::nn

#endif  // EMBER_NN_PARAM_SPEC_H_
