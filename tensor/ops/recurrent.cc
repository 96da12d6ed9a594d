#include "tensor/ops/recurrent.h"

#include "base/error.h"
#include "kernels/recurrent.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"

namespace ember::ops {
namespace {

// Checks a cell's operands (gates [..., gates H], state [..., H], one device, floating)
// and returns the dtype it computes in.
DType CheckCell(const char* op, const Tensor& gates_x, const Tensor& gates_h, const Tensor& state,
                int64_t gates) {
  for (const Tensor* t : {&gates_x, &gates_h, &state}) {
    internal::FloatComputeDType(op, *t);
    EMBER_CHECK(t->device() == state.device(), op, ": operands on ", t->device().ToString(),
                " and ", state.device().ToString());
  }
  EMBER_CHECK(state.dim() >= 1 && gates_x.shape() == gates_h.shape(), op, ": gates ",
              ShapeToString(gates_x.shape()), " and ", ShapeToString(gates_h.shape()),
              " for a state of ", ShapeToString(state.shape()));
  Shape expected = state.shape();
  expected.back() *= gates;
  EMBER_CHECK(gates_x.shape() == expected, op, ": gates of shape ", ShapeToString(gates_x.shape()),
              " for a state of shape ", ShapeToString(state.shape()), "; expected ",
              ShapeToString(expected));
  const bool f64 = gates_x.dtype() == DType::kF64 || gates_h.dtype() == DType::kF64 ||
                   state.dtype() == DType::kF64;
  return f64 ? DType::kF64 : DType::kF32;
}

Tensor In(const Tensor& t, DType compute) { return t.To(compute).Contiguous(); }

}  // namespace

LstmCellResult LstmCell(const Tensor& gates_x, const Tensor& gates_h, const Tensor& c) {
  const DType compute = CheckCell("lstm_cell", gates_x, gates_h, c, 4);
  const int64_t H = c.size(-1), batch = H == 0 ? 0 : c.numel() / H;
  const Tensor gx = In(gates_x, compute), gh = In(gates_h, compute), cp = In(c, compute);
  Shape stacked = {2};
  stacked.insert(stacked.end(), c.shape().begin(), c.shape().end());
  LstmCellResult r{Empty(stacked, compute, c.device()),
                   Empty(gates_x.shape(), compute, c.device())};
  char* state = static_cast<char*>(r.state.raw_data());
  EMBER_KERNEL(LstmCellForward)
      .On(c.device())(compute, batch, H, gx.raw_data(), gh.raw_data(), cp.raw_data(), state,
                      state + c.numel() * ItemSize(compute), r.workspace.raw_data());
  return r;
}

std::pair<Tensor, Tensor> LstmCellBackward(const Tensor& dstate, const Tensor& c,
                                           const LstmCellResult& forward) {
  const DType compute = forward.workspace.dtype();
  const int64_t H = c.size(-1), batch = H == 0 ? 0 : c.numel() / H;
  const Tensor g = In(dstate, compute), cp = In(c, compute), state = In(forward.state, compute);
  Tensor dgates = Empty(forward.workspace.shape(), compute, c.device());
  Tensor dc = Empty(c.shape(), compute, c.device());
  const char* gp = static_cast<const char*>(g.raw_data());
  const char* sp = static_cast<const char*>(state.raw_data());
  const int64_t half = c.numel() * ItemSize(compute);
  EMBER_KERNEL(LstmCellBackward)
      .On(c.device())(compute, batch, H, gp, gp + half, cp.raw_data(), sp + half,
                      forward.workspace.raw_data(), dgates.raw_data(), dc.raw_data());
  return {dgates, dc};
}

GruCellResult GruCell(const Tensor& gates_x, const Tensor& gates_h, const Tensor& h) {
  const DType compute = CheckCell("gru_cell", gates_x, gates_h, h, 3);
  const int64_t H = h.size(-1), batch = H == 0 ? 0 : h.numel() / H;
  const Tensor gx = In(gates_x, compute), gh = In(gates_h, compute), hp = In(h, compute);
  Shape workspace = h.shape();
  workspace.back() *= 4;
  GruCellResult r{Empty(h.shape(), compute, h.device()), Empty(workspace, compute, h.device())};
  EMBER_KERNEL(GruCellForward)
      .On(h.device())(compute, batch, H, gx.raw_data(), gh.raw_data(), hp.raw_data(),
                      r.h.raw_data(), r.workspace.raw_data());
  return r;
}

GruCellGrads GruCellBackward(const Tensor& dh_out, const Tensor& h, const GruCellResult& forward) {
  const DType compute = forward.workspace.dtype();
  const int64_t H = h.size(-1), batch = H == 0 ? 0 : h.numel() / H;
  const Tensor g = In(dh_out, compute), hp = In(h, compute);
  Shape gates = h.shape();
  gates.back() *= 3;
  GruCellGrads r{Empty(gates, compute, h.device()), Empty(gates, compute, h.device()),
                 Empty(h.shape(), compute, h.device())};
  EMBER_KERNEL(GruCellBackward)
      .On(h.device())(compute, batch, H, g.raw_data(), hp.raw_data(), forward.workspace.raw_data(),
                      r.dgates_x.raw_data(), r.dgates_h.raw_data(), r.dh.raw_data());
  return r;
}

}  // namespace ember::ops
