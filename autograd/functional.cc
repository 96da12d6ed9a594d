#include "autograd/functional.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "autograd/autocast.h"
#include "autograd/elementwise.h"
#include "autograd/engine.h"
#include "autograd/views.h"
#include "base/error.h"
#include "tensor/creation.h"
#include "tensor/ops/attention.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/embedding.h"
#include "tensor/ops/layernorm.h"
#include "tensor/ops/matmul.h"
#include "tensor/ops/recurrent.h"
#include "tensor/ops/reduce.h"
#include "tensor/ops/softmax.h"
#include "tensor/ops/unary.h"

namespace ember::autograd {

// C = A B  =>  dA = dC B^T, dB = A^T dC (each summed over batch dimensions that were
// broadcast).
Tensor Matmul(const Tensor& a_in, const Tensor& b_in) {
  const Tensor a = internal::ForProduct(a_in), b = internal::ForProduct(b_in);
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul: operands must have at least one ",
              "dimension, got ", ShapeToString(a.shape()), " and ", ShapeToString(b.shape()));
  if (a.dim() == 1 || b.dim() == 1) {  // [k] is [1, k] on the left, [k, 1] on the right
    Tensor out = Matmul(a.dim() == 1 ? Unsqueeze(a, 0) : a, b.dim() == 1 ? Unsqueeze(b, -1) : b);
    if (b.dim() == 1) out = Squeeze(out, -1);
    return a.dim() == 1 ? Squeeze(out, b.dim() == 1 ? -1 : -2) : out;
  }
  const Tensor out = WithoutGrad([&] { return ops::Matmul(a, b); });
  if (!ShouldRecord({a, b})) return out;
  const bool need_a = RequiresGrad(a), need_b = RequiresGrad(b);
  return Record(
      "matmul", out, {a, b},
      [saved_a = SavedTensor(a), saved_b = SavedTensor(b), need_a, need_b](const Tensor& g) {
        const Tensor &a = saved_a.get(), &b = saved_b.get();
        return std::vector<Tensor>{
            need_a ? ops::SumToSize(ops::Matmul(g, b.Transpose(-1, -2)), a.shape()) : Tensor(),
            need_b ? ops::SumToSize(ops::Matmul(a.Transpose(-1, -2), g), b.shape()) : Tensor()};
      });
}

Tensor Linear(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in) {
  const Tensor x = internal::ForProduct(x_in);
  const Tensor cast = internal::ForProduct(weight_in), bias_cast = internal::ForProduct(bias_in);
  // An f32 weight cast to bf16 by autocast (a master weight): the copy serves the
  // products, and the node takes the f32 weight itself, whose gradient the GEMM makes
  // in f32 (not rounded to bf16 and cast back). A master bias likewise: its gradient is
  // the f32 sum of g's rows.
  const bool master = weight_in.dtype() == DType::kF32 && cast.dtype() == DType::kBF16;
  const bool bias_master =
      bias_in.defined() && bias_in.dtype() == DType::kF32 && bias_cast.dtype() == DType::kBF16;
  const Tensor weight = master ? Detach(cast) : cast, w_input = master ? weight_in : cast;
  const Tensor bias = bias_master ? Detach(bias_cast) : bias_cast,
               b_input = bias_master ? bias_in : bias_cast;
  const Tensor y = WithoutGrad([&] { return ops::Linear(x, weight, bias); });
  if (!ShouldRecord({x, w_input, b_input})) return y;
  const bool need_x = RequiresGrad(x), need_w = RequiresGrad(w_input),
             need_b = RequiresGrad(b_input);
  return Record("linear", y, {x, w_input, b_input},
                [saved_x = SavedTensor(x), w = weight, need_x, need_w, need_b, master,
                 bias_master](const Tensor& g) {
                  const Tensor rows = g.Reshape({-1, w.size(0)});  // [N, out]
                  const Tensor x_rows = saved_x.get().Reshape({-1, w.size(1)});
                  Tensor dw;
                  if (need_w) {
                    dw = master ? ops::MatmulToF32(rows.Transpose(0, 1), x_rows)
                                : ops::Matmul(rows.Transpose(0, 1), x_rows);
                  }
                  Tensor db;
                  if (need_b) db = ops::Sum(bias_master ? rows.To(DType::kF32) : rows, {0});
                  return std::vector<Tensor>{need_x ? ops::Matmul(g, w) : Tensor(), dw, db};
                });
}

// dx = y (g - sum(g y)).
Tensor Softmax(const Tensor& x_in) {
  const Tensor x = internal::ForF32(x_in);
  const Tensor y = WithoutGrad([&] { return ops::Softmax(x); });
  if (!ShouldRecord({x})) return y;
  return Record("softmax", y, {x}, [y = SavedTensor(y)](const Tensor& g) {
    return std::vector<Tensor>{ops::SoftmaxBackward(y.get(), g)};
  });
}

// dx = g - exp(y) sum(g).
Tensor LogSoftmax(const Tensor& x_in) {
  const Tensor x = internal::ForF32(x_in);
  const Tensor y = WithoutGrad([&] { return ops::LogSoftmax(x); });
  if (!ShouldRecord({x})) return y;
  return Record("log_softmax", y, {x}, [y = SavedTensor(y)](const Tensor& g) {
    return std::vector<Tensor>{ops::LogSoftmaxBackward(y.get(), g)};
  });
}

// One node: the kernel saves each row's mean and 1/std for its backward.
namespace {

// Records y = LayerNorm(x) from the forward's result (its y taken out: held by the
// node, it would hold the node, a cycle).
Tensor RecordLayerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       ops::LayerNormResult result) {
  const Tensor y = result.y;
  result.y = Tensor();
  result.sum = Tensor();  // x itself, saved below
  return Record("layer_norm", y, {x, weight, bias},
                [x = SavedTensor(x), weight = SavedTensor(weight), has_bias = bias.defined(),
                 result = std::move(result)](const Tensor& g) {
                  ops::LayerNormGrads grads =
                      ops::LayerNormBackward(x.get(), weight.get(), has_bias, result, g);
                  return std::vector<Tensor>{grads.dx, grads.dweight, grads.dbias};
                });
}

}  // namespace

Tensor LayerNorm(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in, double eps) {
  const Tensor x = internal::ForF32(x_in), weight = internal::ForF32(weight_in),
               bias = internal::ForF32(bias_in);
  ops::LayerNormResult result = WithoutGrad([&] { return ops::LayerNorm(x, weight, bias, eps); });
  if (!ShouldRecord({x, weight, bias})) return result.y;
  return RecordLayerNorm(x, weight, bias, std::move(result));
}

std::pair<Tensor, Tensor> AddLayerNorm(const Tensor& x_in, const Tensor& residual_in,
                                       const Tensor& weight_in, const Tensor& bias_in, double eps) {
  Tensor x = x_in, residual = residual_in;
  internal::Promote(x, residual);
  const DType dtype = x.dtype();
  // One pass where the kernel adds in the sum's own dtype and the LayerNorm reads it as
  // it is (autocast widens a bf16 sum to f32 for LayerNorm: the two ops then).
  if (x.shape() != residual.shape() || x.dtype() != residual.dtype() ||
      !(dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kBF16) ||
      (dtype == DType::kBF16 && AutocastDType() == DType::kBF16)) {
    const Tensor h = Add(x, residual);
    return {h, LayerNorm(h, weight_in, bias_in, eps)};
  }
  const Tensor weight = internal::ForF32(weight_in), bias = internal::ForF32(bias_in);
  ops::LayerNormResult result =
      WithoutGrad([&] { return ops::LayerNorm(x, weight, bias, eps, residual); });
  Tensor h = result.sum;
  if (ShouldRecord({x, residual})) {
    h = Record("add", h, {x, residual}, [](const Tensor& g) { return std::vector<Tensor>{g, g}; });
  }
  if (!ShouldRecord({h, weight, bias})) return {h, result.y};
  return {h, RecordLayerNorm(h, weight, bias, std::move(result))};
}

Tensor Conv2d(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in,
              const ops::Conv2dParams& params) {
  const Tensor x = internal::ForProduct(x_in), weight = internal::ForProduct(weight_in),
               bias = internal::ForProduct(bias_in);
  const Tensor y = WithoutGrad([&] { return ops::Conv2d(x, weight, bias, params); });
  if (!ShouldRecord({x, weight, bias})) return y;
  return Record("conv2d", y, {x, weight, bias},
                [x = Detach(x), weight = Detach(weight), params, want_dx = RequiresGrad(x),
                 want_dbias = bias.defined()](const Tensor& g) {
                  ops::Conv2dGrads grads =
                      ops::Conv2dBackward(x, weight, g, params, want_dx, want_dbias);
                  return std::vector<Tensor>{grads.dx, grads.dweight, grads.dbias};
                });
}

Tensor MaxPool2d(const Tensor& x, const ops::MaxPool2dParams& params) {
  ops::MaxPool2dResult result = WithoutGrad([&] { return ops::MaxPool2d(x, params); });
  if (!ShouldRecord({x})) return result.y;
  return Record("max_pool2d", result.y, {x},
                [shape = x.shape(), indices = result.indices, params](const Tensor& g) {
                  return std::vector<Tensor>{ops::MaxPool2dBackward(shape, indices, g, params)};
                });
}

Tensor Embedding(const Tensor& weight, const Tensor& ids) {
  const Tensor out = WithoutGrad([&] { return ops::Embedding(weight, ids); });
  if (!ShouldRecord({weight})) return out;
  const Tensor saved_ids = Detach(ids);
  return Record(
      "embedding", out, {weight},
      [saved_ids, vocab = weight.size(0)](const Tensor& g) {
        return std::vector<Tensor>{ops::EmbeddingBackward(g, saved_ids, vocab)};
      },
      [saved_ids](const Tensor& g, const Tensor& into) {
        if (into.dtype() != DType::kF32 && into.dtype() != DType::kF64)
          return false;  // bf16/f16 sum in f32
        ops::EmbeddingBackwardInto(g.To(into.dtype()), saved_ids, into);
        return true;
      });
}

std::pair<Tensor, Tensor> LstmCell(const Tensor& gates_x, const Tensor& gates_h, const Tensor& c) {
  const ops::LstmCellResult forward =
      WithoutGrad([&] { return ops::LstmCell(gates_x, gates_h, c); });
  Tensor state = forward.state;  // [2, ..., H]: h' then c'
  if (ShouldRecord({gates_x, gates_h, c})) {
    // The node keeps the output's values (SavedTensor: a detached handle), never the
    // output itself, whose history is this node: holding it would be a cycle.
    state = Record(
        "lstm_cell", state, {gates_x, gates_h, c},
        [saved_state = SavedTensor(forward.state), workspace = forward.workspace,
         saved_c = SavedTensor(c), gx = gates_x.dtype(), gh = gates_h.dtype()](const Tensor& g) {
          const Tensor& c = saved_c.get();
          const auto [dgates, dc] = ops::LstmCellBackward(g, c, {saved_state.get(), workspace});
          return std::vector<Tensor>{dgates.To(gx), dgates.To(gh), dc.To(c.dtype())};
        });
  }
  return {Select(state, 0, 0), Select(state, 0, 1)};
}

Tensor GruCell(const Tensor& gates_x, const Tensor& gates_h, const Tensor& h) {
  const ops::GruCellResult forward = WithoutGrad([&] { return ops::GruCell(gates_x, gates_h, h); });
  if (!ShouldRecord({gates_x, gates_h, h})) return forward.h;
  // The node keeps the workspace, not the output (whose history it is: a cycle).
  return Record("gru_cell", forward.h, {gates_x, gates_h, h},
                [workspace = forward.workspace, saved_h = SavedTensor(h), gx = gates_x.dtype(),
                 gh = gates_h.dtype()](const Tensor& g) {
                  const Tensor& h = saved_h.get();
                  const ops::GruCellGrads grads = ops::GruCellBackward(g, h, {Tensor(), workspace});
                  return std::vector<Tensor>{grads.dgates_x.To(gx), grads.dgates_h.To(gh),
                                             grads.dh.To(h.dtype())};
                });
}

Tensor IndexSelect(const Tensor& x, int64_t dim, const Tensor& index) {
  EMBER_CHECK(x.dim() >= 1, "index_select: cannot index a 0-d tensor");
  EMBER_CHECK(!IsFloatingPoint(index.dtype()) && index.dtype() != DType::kBool,
              "index_select: the index must hold integers, got ", DTypeName(index.dtype()));
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  EMBER_CHECK(d >= 0 && d < x.dim(), "index_select: dimension ", dim, " is out of range for ",
              x.dim(), " dimensions");
  const int64_t n = x.size(d);
  Tensor ids = index.To(DType::kI64);
  if (ids.numel() > 0) {
    const Tensor exact = ids.To(DType::kF64);  // the reductions are floating-point; exact < 2^53
    const auto lo = static_cast<int64_t>(ops::Min(exact).item<double>());
    const auto hi = static_cast<int64_t>(ops::Max(exact).item<double>());
    EMBER_CHECK(lo >= -n && hi < n, "index ", lo < -n ? lo : hi, " is out of bounds for dimension ",
                dim, " with size ", n);
    if (lo < 0) ids = ops::Where(ops::Lt(ids, 0), ops::Add(ids, n), ids);
  }
  // x with dim first, as [n, rest], its rows picked; then the index's dimensions put
  // back where dim was.
  std::vector<int64_t> order = {d};
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != d) order.push_back(i);
  }
  const Tensor front = d == 0 ? x : Permute(x, order);
  Shape rest(front.shape().begin() + 1, front.shape().end());
  int64_t width = 1;
  for (int64_t s : rest) width *= s;
  const Tensor rows = Embedding(Reshape(front, {n, width}), ids.Reshape({ids.numel()}));
  Shape picked(ids.shape().begin(), ids.shape().end());
  picked.insert(picked.end(), rest.begin(), rest.end());
  const Tensor out = Reshape(rows, picked);
  if (d == 0) return out;
  // out is [index..., x's dims before d..., after d...]: the dims before d go first.
  const int64_t k = ids.dim();
  std::vector<int64_t> back;
  for (int64_t i = 0; i < d; ++i) back.push_back(k + i);
  for (int64_t i = 0; i < k; ++i) back.push_back(i);
  for (int64_t i = k + d; i < out.dim(); ++i) back.push_back(i);
  return Permute(out, back);
}

Tensor IndexAdd(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  EMBER_CHECK(x.dim() >= 1, "index_add: cannot index a 0-d tensor");
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  EMBER_CHECK(d >= 0 && d < x.dim(), "index_add: dimension ", dim, " is out of range for ", x.dim(),
              " dimensions");
  EMBER_CHECK(index.dim() <= 1 && !IsFloatingPoint(index.dtype()) && index.dtype() != DType::kBool,
              "index_add: the index must be a 1-d tensor of integers, got ",
              ShapeToString(index.shape()), " ", DTypeName(index.dtype()));
  Shape expected(x.shape().begin(), x.shape().end());
  expected[d] = index.numel();
  EMBER_CHECK(source.shape() == expected, "index_add: source of shape ",
              ShapeToString(source.shape()), " for x of shape ", ShapeToString(x.shape()), " and ",
              index.numel(), " indices; expected ", ShapeToString(expected));
  const int64_t n = x.size(d);
  Tensor ids = index.To(DType::kI64).Reshape({index.numel()});
  if (ids.numel() > 0) {
    const Tensor exact = ids.To(DType::kF64);
    const auto lo = static_cast<int64_t>(ops::Min(exact).item<double>());
    const auto hi = static_cast<int64_t>(ops::Max(exact).item<double>());
    EMBER_CHECK(lo >= -n && hi < n, "index ", lo < -n ? lo : hi, " is out of bounds for dimension ",
                dim, " with size ", n);
    if (lo < 0) ids = ops::Where(ops::Lt(ids, 0), ops::Add(ids, n), ids);
  }
  // source with dim first, as [k, rest]; its rows summed into [n, rest]; dim put back.
  std::vector<int64_t> order = {d};
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i != d) order.push_back(i);
  }
  const Tensor front = d == 0 ? source : Permute(source, order);
  Shape rest(front.shape().begin() + 1, front.shape().end());
  int64_t width = 1;
  for (int64_t s : rest) width *= s;
  const Tensor rows = Reshape(front, {index.numel(), width});
  Tensor summed = WithoutGrad([&] { return ops::EmbeddingBackward(rows, ids, n); });
  if (ShouldRecord({rows})) {
    summed = Record("index_add", summed, {rows},
                    [ids](const Tensor& g) { return std::vector<Tensor>{ops::Embedding(g, ids)}; });
  }
  Shape placed_shape = {n};
  placed_shape.insert(placed_shape.end(), rest.begin(), rest.end());
  Tensor placed = Reshape(summed, placed_shape);
  if (d != 0) {
    std::vector<int64_t> back(x.dim());
    for (int64_t i = 0; i < x.dim(); ++i) back[order[i]] = i;
    placed = Permute(placed, back);
  }
  return Add(x, placed);
}

// One node over [rows, C]: the kernel keeps each row's max and sum of exponentials,
// and the backward is softmax - one_hot(target), scaled, without a one-hot tensor.
Tensor CrossEntropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index,
                    int64_t classes) {
  EMBER_CHECK(logits.dim() >= 1 && targets.dim() == logits.dim() - 1 &&
                  IntSpan(logits.shape()).subspan(0, targets.dim()) == IntSpan(targets.shape()),
              "cross_entropy: logits ", ShapeToString(logits.shape()), " need targets of shape ",
              ShapeToString(IntSpan(logits.shape()).subspan(0, logits.dim() - 1)), ", got ",
              ShapeToString(targets.shape()));
  const Tensor rows = logits.dim() == 2 ? logits : Reshape(logits, {-1, logits.size(-1)});
  const Tensor flat_targets = targets.dim() == 1 ? targets : targets.Reshape({-1});
  // On the f32 list: under autocast the kernel reads bf16 logits itself, computes in f32
  // and returns an f32 loss (the logits' gradient comes back in bf16, rounded once).
  const std::optional<DType> loss_dtype =
      AutocastDType() == DType::kBF16 ? std::optional<DType>(DType::kF32) : std::nullopt;
  ops::CrossEntropyResult result = WithoutGrad(
      [&] { return ops::CrossEntropy(rows, flat_targets, ignore_index, loss_dtype, classes); });
  if (!ShouldRecord({rows})) return result.loss;
  const Tensor loss = result.loss;
  result.loss = Tensor();  // held by the node, it would hold the node: a cycle
  return Record("cross_entropy", loss, {rows},
                [rows = Detach(rows), targets = Detach(flat_targets), ignore_index,
                 result = std::move(result)](const Tensor& g) {
                  // The logits' last reader, holding them alone (the model dropped its
                  // copy): the gradient goes over them, so that the step's largest
                  // tensor (GPT-2's [B T, V]) is not made twice.
                  const bool in_place =
                      ReleasingGraph() && rows.is_sole_owner() && rows.is_contiguous() &&
                      (rows.dtype() == DType::kF32 || rows.dtype() == DType::kF64 ||
                       rows.dtype() == DType::kBF16);
                  return std::vector<Tensor>{
                      ops::CrossEntropyBackward(rows, targets, result, g, ignore_index, in_place)};
                });
}

Tensor BinaryCrossEntropyWithLogits(const Tensor& logits_in, const Tensor& targets_in) {
  const Tensor logits = internal::ForF32(logits_in), targets = internal::ForF32(targets_in);
  EMBER_CHECK(logits.shape() == targets.shape() && logits.dtype() == targets.dtype(),
              "binary_cross_entropy_with_logits: logits ", ShapeToString(logits.shape()), " ",
              DTypeName(logits.dtype()), " and targets ", ShapeToString(targets.shape()), " ",
              DTypeName(targets.dtype()), " must match");
  const Tensor& x = logits;
  const Tensor& y = targets;
  const Tensor loss = WithoutGrad([&] {
    return ops::Mean(ops::Add(ops::Sub(ops::Relu(x), ops::Mul(x, y)),
                              ops::Log(ops::Add(ops::Exp(ops::Neg(ops::Abs(x))), 1.0))));
  });
  if (!ShouldRecord({x, y})) return loss;
  const double n = static_cast<double>(x.numel());
  return Record("binary_cross_entropy_with_logits", loss, {x, y},
                [x = Detach(x), y = Detach(y), n](const Tensor& g) {
                  const Tensor scale = ops::Div(g, n);
                  return std::vector<Tensor>{ops::Mul(ops::Sub(ops::Sigmoid(x), y), scale),
                                             ops::Mul(ops::Neg(x), scale)};
                });
}

Tensor Dropout(const Tensor& x, double p, bool training, Generator& gen) {
  EMBER_CHECK(p >= 0 && p <= 1, "dropout: probability must be in [0, 1], got ", p);
  if (!training || p == 0) return x;
  // scale = [u >= p] / (1 - p) for u uniform in [0, 1); all zeros when p is 1.
  // Drawn where x is, the same numbers on every device: a seed gives the same mask.
  const Tensor keep = ops::Ge(Rand(x.shape(), gen, x.dtype(), x.device()), p).To(x.dtype());
  const Tensor scale = p == 1 ? keep : ops::Div(keep, 1 - p);
  const Tensor out = WithoutGrad([&] { return ops::Mul(x, scale); });
  if (!ShouldRecord({x})) return out;
  return Record("dropout", out, {x},
                [scale](const Tensor& g) { return std::vector<Tensor>{ops::Mul(g, scale)}; });
}

// One node: the fused kernel keeps each query's log-sum-exp, and its backward recomputes
// the probabilities (tensor/ops/attention.h).
Tensor CausalAttention(const Tensor& q_in, const Tensor& k_in, const Tensor& v_in, double dropout,
                       Generator& gen) {
  const Tensor q = internal::ForProduct(q_in), k = internal::ForProduct(k_in),
               v = internal::ForProduct(v_in);
  kernels::AttentionDropout mask{dropout, gen.seed(), gen.offset()};
  if (dropout > 0) {  // the words Rand([..., Tq, Tk]) in f32 would draw
    int64_t weights = k.size(-2);
    for (int64_t i = 0; i + 1 < q.dim(); ++i) weights *= q.size(i);
    gen.set_offset(gen.offset() + static_cast<uint64_t>(weights));
  }
  if (!ShouldRecord({q, k, v})) {  // the op reads a cache's keys and values in place
    return WithoutGrad(
        [&] { return ops::CausalAttention(Detach(q), Detach(k), Detach(v), mask).y; });
  }
  // The kernels read contiguous heads: copied once here (heads are usually strided views
  // of one qkv projection) and kept for the backward.
  const Tensor qc = Detach(q).Contiguous(), kc = Detach(k).Contiguous(),
               vc = Detach(v).Contiguous();
  ops::CausalAttentionResult result =
      WithoutGrad([&] { return ops::CausalAttention(qc, kc, vc, mask); });
  const Tensor y = result.y;
  result.y = Detach(y);  // the node holds y's values, not y (whose node it is: a cycle)
  return Record(
      "causal_attention", y, {q, k, v}, [qc, kc, vc, result = std::move(result)](const Tensor& g) {
        ops::CausalAttentionGrads grads = ops::CausalAttentionBackward(qc, kc, vc, result, g);
        return std::vector<Tensor>{grads.dq, grads.dk, grads.dv};
      });
}

}  // namespace ember::autograd
