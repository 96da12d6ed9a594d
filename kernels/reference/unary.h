#ifndef EMBER_KERNELS_REFERENCE_UNARY_H_
#define EMBER_KERNELS_REFERENCE_UNARY_H_

// float64 references for kernels/unary.h, straight from the equations.

#include <cmath>

namespace ember::kernels::reference {

inline double Neg(double x) { return -x; }
inline double Abs(double x) { return std::fabs(x); }
inline double Exp(double x) { return std::exp(x); }
inline double Log(double x) { return std::log(x); }
inline double Sqrt(double x) { return std::sqrt(x); }
inline double Rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline double Reciprocal(double x) { return 1.0 / x; }
inline double Square(double x) { return x * x; }
inline double Tanh(double x) { return std::tanh(x); }
inline double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double Relu(double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); }

// GELU(x) = x Phi(x); the tanh form approximates Phi(x) by
// 0.5 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
inline double GeluTanhInner(double x) { return std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x); }
inline double GeluTanh(double x) { return 0.5 * x * (1.0 + std::tanh(GeluTanhInner(x))); }
// Phi(x) = 0.5 (1 + erf(x / sqrt 2)) = 0.5 erfc(-x / sqrt 2); erfc does not cancel for x < 0.
inline double Phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
inline double GeluErf(double x) { return x * Phi(x); }
inline double Pow(double x, double p) { return std::pow(x, p); }
inline double Sin(double x) { return std::sin(x); }
inline double Cos(double x) { return std::cos(x); }

// Derivatives times an upstream gradient g.
inline double ReluBackward(double x, double g) { return x > 0 ? g : 0.0; }
inline double TanhBackward(double y, double g) { return g * (1.0 - y * y); }
inline double SigmoidBackward(double y, double g) { return g * y * (1.0 - y); }
inline double GeluTanhBackward(double x, double g) {
  // d/dx [0.5 x (1 + tanh u)] with u = sqrt(2/pi) (x + 0.044715 x^3).
  const double t = std::tanh(GeluTanhInner(x));
  const double du_dx = std::sqrt(2.0 / M_PI) * (1.0 + 3.0 * 0.044715 * x * x);
  return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du_dx);
}
inline double GeluErfBackward(double x, double g) {
  const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  return g * (Phi(x) + x * phi);
}

}  // namespace ember::kernels::reference

#endif  // EMBER_KERNELS_REFERENCE_UNARY_H_
