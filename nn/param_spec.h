#ifndef EMBER_NN_PARAM_SPEC_H_
#define EMBER_NN_PARAM_SPEC_H_

// A parameter described before any memory exists, as nanoGPTJAX describes them: its
// shape, dtype, how its values are drawn, and a logical name for each axis ("vocab",
// "embed", "mlp", "heads", ...). Where it is made (which device, whole or one rank's
// shard along a named axis) is decided apart, by nn::Materialize (module.h), so a
// layer's code is the same on one CPU and sharded across ranks.

#include <string>
#include <vector>

#include "tensor/random.h"
#include "tensor/shape.h"
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

  int64_t numel() const { return NumElements(shape); }
  int64_t nbytes() const { return numel() * ItemSize(dtype); }
  // "[768, 3072] f32 (embed, mlp) normal(0, 0.02)".
  std::string ToString() const;
};

}  // namespace ember::nn

#endif  // EMBER_NN_PARAM_SPEC_H_
