#include "nn/param_spec.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/error.h"

namespace ember::nn {

Initializer Initializer::Zeros() { return {Kind::kZeros, 0, 0}; }
Initializer Initializer::Ones() { return {Kind::kOnes, 0, 0}; }
Initializer Initializer::Uniform(double low, double high) {
  EMBER_CHECK(low <= high, "uniform initializer: low ", low, " is greater than high ", high);
  return {Kind::kUniform, low, high};
}
Initializer Initializer::Normal(double mean, double std) {
  EMBER_CHECK(std >= 0, "normal initializer: std must be non-negative, got ", std);
  return {Kind::kNormal, mean, std};
}
Initializer Initializer::KaimingUniform(double a) { return {Kind::kKaimingUniform, a, 0}; }

std::string Initializer::ToString() const {
  switch (kind_) {
    case Kind::kZeros:
      return "zeros";
    case Kind::kOnes:
      return "ones";
    case Kind::kUniform:
      return absl::StrCat("uniform(", a_, ", ", b_, ")");
    case Kind::kNormal:
      return absl::StrCat("normal(", a_, ", ", b_, ")");
    case Kind::kKaimingUniform:
      return absl::StrCat("kaiming_uniform(a=", a_, ")");
  }
  return "?";
}

void Initializer::Fill(const Tensor& out, IntSpan whole, int axis, int64_t begin,
                       Generator& gen) const {
  EMBER_CHECK(out.device().is_cpu() && out.is_contiguous(),
              "initializer: fills a contiguous CPU tensor");
  if (kind_ == Kind::kZeros || kind_ == Kind::kOnes) {
    out.Fill(kind_ == Kind::kOnes ? 1 : 0);
    return;
  }
  double low = a_, high = b_;
  if (kind_ == Kind::kKaimingUniform) {
    // As nn::InitKaimingUniform computes it: sqrt(3) gain / sqrt(fan_in), with
    // fan_in = shape[1] x the kernel's elements.
    EMBER_CHECK(whole.size() >= 2,
                "kaiming_uniform: fans need a weight of at least 2 dimensions, got shape ",
                ShapeToString(whole));
    const double fan_in = static_cast<double>(NumElements(whole) / whole[0]);
    high = std::sqrt(3.0) * (std::sqrt(2.0 / (1 + a_ * a_)) / std::sqrt(fan_in));
    low = -high;
  }
  const int64_t numel = NumElements(whole);
  // The whole tensor's elements of out: `outer` runs of `run` elements, run o starting
  // at element (o size(axis) + begin) inner.
  int64_t outer = 1, inner = 1, rows = 1, size = 1;
  if (axis >= 0) {
    for (int d = 0; d < axis; ++d) outer *= whole[d];
    for (size_t d = axis + 1; d < whole.size(); ++d) inner *= whole[d];
    rows = out.size(axis);
    size = whole[axis];
  } else {
    inner = numel;
  }
  EMBER_CHECK(out.numel() == outer * rows * inner && begin >= 0 && begin + rows <= size,
              "initializer: a tensor of shape ", ShapeToString(out.shape()), " is not rows [",
              begin, ", ", begin + rows, ") of axis ", axis, " of ", ShapeToString(whole));
  const uint64_t base = gen.offset();
  const Tensor flat = out.View({out.numel()});
  const int64_t run = rows * inner;
  for (int64_t o = 0; o < outer; ++o) {
    gen.set_offset(base);
    const int64_t first = (o * size + begin) * inner;
    flat.Narrow(0, o * run, run)
        .CopyFrom(kind_ == Kind::kNormal
                      ? NormalRange(numel, first, first + run, a_, b_, gen, out.dtype())
                      : UniformRange(numel, first, first + run, low, high, gen, out.dtype()));
  }
}

std::string ParamSpec::ToString() const {
  return absl::StrCat(ShapeToString(shape), " ", DTypeName(dtype), " (", absl::StrJoin(axes, ", "),
                      ") ", init.ToString());
}

}  // namespace ember::nn
