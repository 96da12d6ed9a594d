#ifndef EMBER_KERNELS_RECURRENT_H_
#define EMBER_KERNELS_RECURRENT_H_

#include <cstdint>

#include "core/dtype.h"
#include "kernels/twins.h"

// One time step of an LSTM or GRU cell after its two matrix products, fused: everything
// between the products and the next step's state, one kernel each way (as PyTorch's
// _thnn_fused_lstm_cell and _thnn_fused_gru_cell). The products themselves,
//   gates_x = W_ih x + b_ih,   gates_h = W_hh h + b_hh,
// are the caller's (a layer projects a whole sequence's inputs with one GEMM). Every
// operand is contiguous, rows of `hidden` (H) per batch entry b; the gate blocks of a
// row lie in PyTorch's order. sigma is the logistic function. f32 or f64; outputs are
// overwritten.
//
// LSTM, gates [batch, 4H] = (i, f, g, o) blocks, a = gates_x + gates_h:
//   i, f, o = sigma(a_i), sigma(a_f), sigma(a_o);  g = tanh(a_g)
//   c' = f c + i g;   h' = o tanh(c')
// and its gradient from dh' and dc' (dc' may be absent: zero), with t = tanh(c'):
//   dc* = dc' + dh' o (1 - t^2)
//   da_i = dc* g i (1 - i),  da_f = dc* c f (1 - f),  da_g = dc* i (1 - g^2),
//   da_o = dh' t o (1 - o);  dc = dc* f
// (da is the gradient of both gates_x and gates_h).
//
// GRU, gates [batch, 3H] = (r, z, n) blocks:
//   r = sigma(x_r + h_r),  z = sigma(x_z + h_z),  n = tanh(x_n + r h_n)
//   h' = (1 - z) n + z h
// and its gradient from dh':
//   da_n = dh' (1 - z) (1 - n^2),  da_r = da_n h_n r (1 - r),  da_z = dh' (h - n) z (1 - z)
//   dgates_x = (da_r, da_z, da_n),  dgates_h = (da_r, da_z, da_n r),  dh = dh' z
#define EMBER_RECURRENT_KERNELS(X) \
  X(LstmCellForward) X(LstmCellBackward) X(GruCellForward) X(GruCellBackward)

namespace ember::kernels::cpu {

// gates_x, gates_h: [batch, 4H]; c, h_out, c_out: [batch, H]; workspace [batch, 4H]
// receives (i, f, g, o) after their activations, for the backward.
void LstmCellForward(DType dtype, int64_t batch, int64_t hidden, const void* gates_x,
                     const void* gates_h, const void* c, void* h_out, void* c_out, void* workspace);

// dh, dc (null: zero), c, c_out: [batch, H]; workspace: the forward's; dgates [batch, 4H];
// dc_prev [batch, H].
void LstmCellBackward(DType dtype, int64_t batch, int64_t hidden, const void* dh, const void* dc,
                      const void* c, const void* c_out, const void* workspace, void* dgates,
                      void* dc_prev);

// gates_x, gates_h: [batch, 3H]; h, h_out: [batch, H]; workspace [batch, 4H] receives
// (r, z, n, h_n) for the backward.
void GruCellForward(DType dtype, int64_t batch, int64_t hidden, const void* gates_x,
                    const void* gates_h, const void* h, void* h_out, void* workspace);

// dh, h: [batch, H]; workspace: the forward's; dgates_x, dgates_h: [batch, 3H];
// dh_prev [batch, H] (the part through z only: W_hh's product adds the rest).
void GruCellBackward(DType dtype, int64_t batch, int64_t hidden, const void* dh, const void* h,
                     const void* workspace, void* dgates_x, void* dgates_h, void* dh_prev);

}  // namespace ember::kernels::cpu

EMBER_CUDA_TWINS(EMBER_RECURRENT_KERNELS)

#endif  // EMBER_KERNELS_RECURRENT_H_
