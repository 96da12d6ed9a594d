#ifndef EMBER_KERNELS_REFERENCE_RECURRENT_H_
#define EMBER_KERNELS_REFERENCE_RECURRENT_H_

// References for kernels/recurrent.h, one unit (b, j) at a time in long double, straight
// from the cell equations; the gradients as derivatives of those equations written out
// by the chain rule.

#include <cmath>

namespace ember::kernels::reference {

inline long double Sigmoid(long double z) { return 1 / (1 + std::exp(-z)); }

struct LstmUnit {
  long double h, c;  // h', c'
};
// a_i, a_f, a_g, a_o: the summed gate inputs.
inline LstmUnit Lstm(long double a_i, long double a_f, long double a_g, long double a_o,
                     long double c) {
  const long double cn = Sigmoid(a_f) * c + Sigmoid(a_i) * std::tanh(a_g);
  return {Sigmoid(a_o) * std::tanh(cn), cn};
}

struct LstmGrad {
  long double da_i, da_f, da_g, da_o, dc;
};
inline LstmGrad LstmBackward(long double a_i, long double a_f, long double a_g, long double a_o,
                             long double c, long double dh, long double dc_next) {
  const long double i = Sigmoid(a_i), f = Sigmoid(a_f), g = std::tanh(a_g), o = Sigmoid(a_o);
  const long double t = std::tanh(f * c + i * g);
  const long double dcn = dc_next + dh * o * (1 - t * t);  // h' = o tanh(c')
  return {dcn * g * i * (1 - i), dcn * c * f * (1 - f), dcn * i * (1 - g * g), dh * t * o * (1 - o),
          dcn * f};
}

// x_r, x_z, x_n and h_r, h_z, h_n: the two products' parts; h the state.
inline long double Gru(long double x_r, long double x_z, long double x_n, long double h_r,
                       long double h_z, long double h_n, long double h) {
  const long double r = Sigmoid(x_r + h_r), z = Sigmoid(x_z + h_z);
  const long double n = std::tanh(x_n + r * h_n);
  return (1 - z) * n + z * h;
}

struct GruGrad {
  long double dx_r, dx_z, dx_n, dh_n, dh;  // dh_r = dx_r and dh_z = dx_z
};
inline GruGrad GruBackward(long double x_r, long double x_z, long double x_n, long double h_r,
                           long double h_z, long double h_n, long double h, long double dh_next) {
  const long double r = Sigmoid(x_r + h_r), z = Sigmoid(x_z + h_z);
  const long double n = std::tanh(x_n + r * h_n);
  const long double dn = dh_next * (1 - z), dz = dh_next * (h - n);
  const long double dpre_n = dn * (1 - n * n);  // n = tanh(x_n + r h_n)
  return {dpre_n * h_n * r * (1 - r), dz * z * (1 - z), dpre_n, dpre_n * r, dh_next * z};
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_RECURRENT_H_
