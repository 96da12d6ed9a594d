#include "autograd/elementwise.h"

#include "autograd/autocast.h"
#include "autograd/engine.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/reduce.h"
#include "tensor/ops/unary.h"

namespace ember::autograd {
namespace {

// What a unary function's backward reads of its input x and output y (bit flags).
enum Saved { kNothing = 0, kInput = 1, kOutput = 2 };

// A unary function whose node saves only what its backward reads (as handles outside
// the graph, so that a node never holds its own output's slot): backward(x, y, g),
// with what is not saved undefined.
template <int kSaved, typename Forward, typename Backward>
Tensor Unary(const char* name, const Tensor& x, const Forward& forward, const Backward& backward) {
  const Tensor y = WithoutGrad([&] { return forward(x); });
  if (!ShouldRecord({x})) return y;
  const SavedTensor saved_x((kSaved & kInput) ? x : Tensor());
  const SavedTensor saved_y((kSaved & kOutput) ? y : Tensor());
  return Record(name, y, {x}, [saved_x, saved_y, backward](const Tensor& g) {
    return std::vector<Tensor>{backward(saved_x.get(), saved_y.get(), g)};
  });
}

// 1 where x > 0, -1 where x < 0, else 0, in x's dtype.
Tensor Sign(const Tensor& x) {
  return ops::Sub(ops::Gt(x, 0).To(x.dtype()), ops::Lt(x, 0).To(x.dtype()));
}

// mask ? 1 : 0, plus 0.5 where `tie`, in `dtype`: the share of a maximum's gradient.
Tensor Share(const Tensor& mask, const Tensor& tie, DType dtype) {
  return ops::Add(mask.To(dtype), ops::Mul(tie.To(dtype), 0.5));
}

}  // namespace

Tensor Neg(const Tensor& x) {
  return Unary<kNothing>(
      "neg", x, [](const Tensor& x) { return ops::Neg(x); },
      [](const Tensor&, const Tensor&, const Tensor& g) { return ops::Neg(g); });
}

Tensor Abs(const Tensor& x) {
  return Unary<kInput>(
      "abs", x, [](const Tensor& x) { return ops::Abs(x); },
      [](const Tensor& x, const Tensor&, const Tensor& g) { return ops::Mul(g, Sign(x)); });
}

// d e^x = e^x.
Tensor Exp(const Tensor& x) {
  return Unary<kOutput>(
      "exp", x, [](const Tensor& x) { return ops::Exp(x); },
      [](const Tensor&, const Tensor& y, const Tensor& g) { return ops::Mul(g, y); });
}

// d log x = 1 / x.
Tensor Log(const Tensor& x) {
  return Unary<kInput>(
      "log", x, [](const Tensor& x) { return ops::Log(x); },
      [](const Tensor& x, const Tensor&, const Tensor& g) { return ops::Div(g, x); });
}

// d sqrt(x) = 1 / (2 sqrt(x)).
Tensor Sqrt(const Tensor& x) {
  return Unary<kOutput>(
      "sqrt", x, [](const Tensor& x) { return ops::Sqrt(x); },
      [](const Tensor&, const Tensor& y, const Tensor& g) { return ops::Div(g, ops::Mul(y, 2)); });
}

// d x^(-1/2) = -x^(-3/2) / 2 = -y^3 / 2.
Tensor Rsqrt(const Tensor& x) {
  return Unary<kOutput>(
      "rsqrt", x, [](const Tensor& x) { return ops::Rsqrt(x); },
      [](const Tensor&, const Tensor& y, const Tensor& g) {
        return ops::Mul(g, ops::Mul(ops::Mul(ops::Square(y), y), -0.5));
      });
}

// d (1/x) = -1/x^2 = -y^2.
Tensor Reciprocal(const Tensor& x) {
  return Unary<kOutput>(
      "reciprocal", x, [](const Tensor& x) { return ops::Reciprocal(x); },
      [](const Tensor&, const Tensor& y, const Tensor& g) {
        return ops::Neg(ops::Mul(g, ops::Square(y)));
      });
}

// d x^2 = 2x.
Tensor Square(const Tensor& x) {
  return Unary<kInput>(
      "square", x, [](const Tensor& x) { return ops::Square(x); },
      [](const Tensor& x, const Tensor&, const Tensor& g) { return ops::Mul(g, ops::Mul(x, 2)); });
}

// d tanh = 1 - y^2.
Tensor Tanh(const Tensor& x) {
  return Unary<kOutput>(
      "tanh", x, [](const Tensor& x) { return ops::Tanh(x); },
      [](const Tensor&, const Tensor& y, const Tensor& g) { return ops::TanhBackward(y, g); });
}

// d sigmoid = y (1 - y).
Tensor Sigmoid(const Tensor& x) {
  return Unary<kOutput>(
      "sigmoid", x, [](const Tensor& x) { return ops::Sigmoid(x); },
      [](const Tensor&, const Tensor& y, const Tensor& g) { return ops::SigmoidBackward(y, g); });
}

Tensor Relu(const Tensor& x) {
  return Unary<kInput>(
      "relu", x, [](const Tensor& x) { return ops::Relu(x); },
      [](const Tensor& x, const Tensor&, const Tensor& g) { return ops::ReluBackward(x, g); });
}

Tensor GeluTanh(const Tensor& x) {
  return Unary<kInput>(
      "gelu_tanh", x, [](const Tensor& x) { return ops::GeluTanh(x); },
      [](const Tensor& x, const Tensor&, const Tensor& g) { return ops::GeluTanhBackward(x, g); });
}

Tensor GeluErf(const Tensor& x) {
  return Unary<kInput>(
      "gelu_erf", x, [](const Tensor& x) { return ops::GeluErf(x); },
      [](const Tensor& x, const Tensor&, const Tensor& g) { return ops::GeluErfBackward(x, g); });
}

Tensor Sin(const Tensor& x) {
  return Unary<kInput>(
      "sin", x, [](const Tensor& x) { return ops::Sin(x); },
      [](const Tensor& x, const Tensor&, const Tensor& g) { return ops::Mul(g, ops::Cos(x)); });
}

Tensor Cos(const Tensor& x) {
  return Unary<kInput>(
      "cos", x, [](const Tensor& x) { return ops::Cos(x); },
      [](const Tensor& x, const Tensor&, const Tensor& g) {
        return ops::Neg(ops::Mul(g, ops::Sin(x)));
      });
}

// d x^p = p x^(p-1).
Tensor Pow(const Tensor& x, double exponent) {
  return Unary<kInput>(
      "pow", x, [exponent](const Tensor& x) { return ops::Pow(x, exponent); },
      [exponent](const Tensor& x, const Tensor&, const Tensor& g) {
        return ops::Mul(g, ops::Mul(ops::Pow(x, exponent - 1), exponent));
      });
}

// ---- Binary ----

Tensor Add(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in, b = b_in;
  internal::Promote(a, b);
  const Tensor out = WithoutGrad([&] { return ops::Add(a, b); });
  if (!ShouldRecord({a, b})) return out;
  return Record("add", out, {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) {
    return std::vector<Tensor>{ops::SumToSize(g, sa), ops::SumToSize(g, sb)};
  });
}

Tensor Sub(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in, b = b_in;
  internal::Promote(a, b);
  const Tensor out = WithoutGrad([&] { return ops::Sub(a, b); });
  if (!ShouldRecord({a, b})) return out;
  return Record("sub", out, {a, b}, [sa = a.shape(), sb = b.shape()](const Tensor& g) {
    return std::vector<Tensor>{ops::SumToSize(g, sa), ops::SumToSize(ops::Neg(g), sb)};
  });
}

// d(ab) = b da + a db.
Tensor Mul(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in, b = b_in;
  internal::Promote(a, b);
  const Tensor out = WithoutGrad([&] { return ops::Mul(a, b); });
  if (!ShouldRecord({a, b})) return out;
  const bool need_a = RequiresGrad(a), need_b = RequiresGrad(b);
  return Record(
      "mul", out, {a, b},
      [saved_a = SavedTensor(a), saved_b = SavedTensor(b), need_a, need_b](const Tensor& g) {
        const Tensor &a = saved_a.get(), &b = saved_b.get();
        return std::vector<Tensor>{need_a ? ops::SumToSize(ops::Mul(g, b), a.shape()) : Tensor(),
                                   need_b ? ops::SumToSize(ops::Mul(g, a), b.shape()) : Tensor()};
      });
}

// d(a/b) = da / b - (a/b) db / b.
Tensor Div(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in, b = b_in;
  internal::Promote(a, b);
  const Tensor out = WithoutGrad([&] { return ops::Div(a, b); });
  if (!ShouldRecord({a, b})) return out;
  const bool need_b = RequiresGrad(b);
  return Record("div", out, {a, b},
                [sa = a.shape(), saved_b = SavedTensor(b), saved_out = SavedTensor(out),
                 need_b](const Tensor& g) {
                  const Tensor &b = saved_b.get(), &out = saved_out.get();
                  const Tensor ga = ops::Div(g, b);
                  return std::vector<Tensor>{
                      ops::SumToSize(ga, sa),
                      need_b ? ops::SumToSize(ops::Neg(ops::Mul(ga, out)), b.shape()) : Tensor()};
                });
}

// d(a^b) = b a^(b-1) da + a^b log(a) db.
Tensor Pow(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in, b = b_in;
  internal::Promote(a, b);
  const Tensor out = WithoutGrad([&] { return ops::Pow(a, b); });
  if (!ShouldRecord({a, b})) return out;
  const bool need_a = RequiresGrad(a), need_b = RequiresGrad(b);
  return Record(
      "pow", out, {a, b},
      [saved_a = SavedTensor(a), saved_b = SavedTensor(b), saved_out = SavedTensor(out), need_a,
       need_b](const Tensor& g) {
        const Tensor &a = saved_a.get(), &b = saved_b.get(), &out = saved_out.get();
        return std::vector<Tensor>{
            need_a
                ? ops::SumToSize(ops::Mul(g, ops::Mul(b, ops::Pow(a, ops::Sub(b, 1)))), a.shape())
                : Tensor(),
            need_b ? ops::SumToSize(ops::Mul(g, ops::Mul(out, ops::Log(a))), b.shape()) : Tensor()};
      });
}

Tensor Maximum(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in, b = b_in;
  internal::Promote(a, b);
  const Tensor out = WithoutGrad([&] { return ops::Maximum(a, b); });
  if (!ShouldRecord({a, b})) return out;
  return Record("maximum", out, {a, b},
                [saved_a = SavedTensor(a), saved_b = SavedTensor(b)](const Tensor& g) {
                  const Tensor &a = saved_a.get(), &b = saved_b.get();
                  const Tensor tie = ops::Eq(a, b);
                  return std::vector<Tensor>{
                      ops::SumToSize(ops::Mul(g, Share(ops::Gt(a, b), tie, g.dtype())), a.shape()),
                      ops::SumToSize(ops::Mul(g, Share(ops::Lt(a, b), tie, g.dtype())), b.shape())};
                });
}

Tensor Minimum(const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in, b = b_in;
  internal::Promote(a, b);
  const Tensor out = WithoutGrad([&] { return ops::Minimum(a, b); });
  if (!ShouldRecord({a, b})) return out;
  return Record("minimum", out, {a, b},
                [saved_a = SavedTensor(a), saved_b = SavedTensor(b)](const Tensor& g) {
                  const Tensor &a = saved_a.get(), &b = saved_b.get();
                  const Tensor tie = ops::Eq(a, b);
                  return std::vector<Tensor>{
                      ops::SumToSize(ops::Mul(g, Share(ops::Lt(a, b), tie, g.dtype())), a.shape()),
                      ops::SumToSize(ops::Mul(g, Share(ops::Gt(a, b), tie, g.dtype())), b.shape())};
                });
}

// ---- With a scalar ----

Tensor Add(const Tensor& a, const Scalar& b) {
  return Unary<kNothing>(
      "add", a, [&b](const Tensor& a) { return ops::Add(a, b); },
      [](const Tensor&, const Tensor&, const Tensor& g) { return g; });
}

Tensor Sub(const Tensor& a, const Scalar& b) {
  return Unary<kNothing>(
      "sub", a, [&b](const Tensor& a) { return ops::Sub(a, b); },
      [](const Tensor&, const Tensor&, const Tensor& g) { return g; });
}

Tensor Sub(const Scalar& a, const Tensor& b) {
  return Unary<kNothing>(
      "sub", b, [&a](const Tensor& b) { return ops::Sub(a, b); },
      [](const Tensor&, const Tensor&, const Tensor& g) { return ops::Neg(g); });
}

Tensor Mul(const Tensor& a, const Scalar& b) {
  return Unary<kNothing>(
      "mul", a, [&b](const Tensor& a) { return ops::Mul(a, b); },
      [b](const Tensor&, const Tensor&, const Tensor& g) { return ops::Mul(g, b); });
}

Tensor Div(const Tensor& a, const Scalar& b) {
  return Unary<kNothing>(
      "div", a, [&b](const Tensor& a) { return ops::Div(a, b); },
      [b](const Tensor&, const Tensor&, const Tensor& g) { return ops::Div(g, b); });
}

// d(s/b) = -s / b^2 = -y / b.
Tensor Div(const Scalar& a, const Tensor& b) {
  return Unary<kInput | kOutput>(
      "div", b, [&a](const Tensor& b) { return ops::Div(a, b); },
      [](const Tensor& b, const Tensor& y, const Tensor& g) {
        return ops::Neg(ops::Div(ops::Mul(g, y), b));
      });
}

// ---- Selection ----

Tensor Where(const Tensor& condition, const Tensor& a_in, const Tensor& b_in) {
  Tensor a = a_in, b = b_in;
  internal::Promote(a, b);
  const Tensor out = WithoutGrad([&] { return ops::Where(condition, a, b); });
  if (!ShouldRecord({a, b})) return out;
  return Record("where", out, {a, b},
                [saved = SavedTensor(condition), sa = a.shape(), sb = b.shape()](const Tensor& g) {
                  const Tensor& condition = saved.get();
                  const Tensor zero = Zeros({}, g.dtype(), g.device());
                  return std::vector<Tensor>{ops::SumToSize(ops::Where(condition, g, zero), sa),
                                             ops::SumToSize(ops::Where(condition, zero, g), sb)};
                });
}

Tensor MaskedFill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  const Tensor out = WithoutGrad([&] { return ops::MaskedFill(x, mask, value); });
  if (!ShouldRecord({x})) return out;
  return Record("masked_fill", out, {x}, [mask = SavedTensor(mask)](const Tensor& g) {
    return std::vector<Tensor>{ops::MaskedFill(g, mask.get(), 0)};
  });
}

}  // namespace ember::autograd
