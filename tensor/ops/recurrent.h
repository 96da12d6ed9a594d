#ifndef EMBER_TENSOR_OPS_RECURRENT_H_
#define EMBER_TENSOR_OPS_RECURRENT_H_

// The fused LSTM and GRU cell steps (kernels/recurrent.h) on tensors: gates [..., 4H]
// (LSTM) or [..., 3H] (GRU) and states [..., H], any leading batch dimensions. They
// compute in, and return, f32 (f64 if any operand is f64).

#include <utility>

#include "tensor/tensor.h"

namespace ember::ops {

struct LstmCellResult {
  Tensor state;      // [2, ..., H]: h' then c'
  Tensor workspace;  // [..., 4H]: the activated gates, for LstmCellBackward
};
LstmCellResult LstmCell(const Tensor& gates_x, const Tensor& gates_h, const Tensor& c);

// From dstate [2, ..., H] (dh' then dc'): {dgates [..., 4H], dc [..., H]}.
std::pair<Tensor, Tensor> LstmCellBackward(const Tensor& dstate, const Tensor& c,
                                           const LstmCellResult& forward);

struct GruCellResult {
  Tensor h;          // [..., H]
  Tensor workspace;  // [..., 4H]: r, z, n, h_n, for GruCellBackward
};
GruCellResult GruCell(const Tensor& gates_x, const Tensor& gates_h, const Tensor& h);

struct GruCellGrads {
  Tensor dgates_x, dgates_h;  // [..., 3H]
  Tensor dh;                  // [..., H]: through z only (W_hh's product adds the rest)
};
GruCellGrads GruCellBackward(const Tensor& dh_out, const Tensor& h, const GruCellResult& forward);

}  // namespace ember::ops

#endif  // EMBER_TENSOR_OPS_RECURRENT_H_
