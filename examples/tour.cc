// A tour of ember's tensors (creation, views that share memory, copies, dtypes and
// seeded random numbers) and of autograd (gradients, and a line fitted by gradient
// descent).  bazel run //examples:tour -- --seed=7

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "autograd/autograd.h"
#include "base/main.h"
#include "tensor/creation.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

ABSL_FLAG(uint64_t, seed, 0, "seed of the Philox generator for the random tensors");

namespace {

absl::Status Tour() {
  using ember::Tensor;
  const Tensor x = ember::Arange(12).View({3, 4});
  std::cout << "x = Arange(12).View({3, 4})\n" << x << "\n\n";
  std::cout << "x.Transpose(0, 1), strides " << ember::ShapeToString(x.Transpose(0, 1).strides())
            << " (a view: no copy)\n"
            << x.Transpose(0, 1) << "\n\n";
  std::cout << "x.Slice(1, 0, Tensor::kEnd, 2)  (x[:, ::2])\n"
            << x.Slice(1, 0, Tensor::kEnd, 2) << "\n\n";
  x.Select(0, 1).Fill(-1);
  std::cout << "after x.Select(0, 1).Fill(-1), x is\n" << x << "\n\n";
  std::cout << "Linspace(0, 1, 5).To(bf16)\n"
            << ember::Linspace(0, 1, 5).To(ember::DType::kBF16) << "\n\n";
  ember::Generator gen(absl::GetFlag(FLAGS_seed));
  std::cout << "Randn({2, 3}) with seed " << gen.seed() << "\n"
            << ember::Randn({2, 3}, gen) << "\n\n";
  std::cout << "a broadcast view: FromList({1, 2, 3}).Expand({2, 3})\n"
            << ember::FromList({1, 2, 3}).Expand({2, 3}) << "\n\n";

  namespace ag = ember::autograd;
  const Tensor v = ag::SetRequiresGrad(ember::FromList({1.0, 2.0, 3.0}));
  const Tensor y = ag::Sum(v * v + ag::Exp(v));
  ag::Backward(y);
  std::cout << "v = " << v << "\ny = Sum(v * v + Exp(v)) = " << y.item()
            << "\nGrad(v) = 2 v + exp(v) = " << ag::Grad(v) << "\n\n";

  // Fit t = 3 s - 1 from noisy samples: w and b by plain gradient descent.
  const Tensor s = ember::Linspace(-1, 1, 64).View({64, 1});
  const Tensor t = 3.0 * s - 1.0 + 0.1 * ember::Randn({64, 1}, gen);
  const Tensor w = ag::SetRequiresGrad(ember::Zeros({1, 1}));
  const Tensor b = ag::SetRequiresGrad(ember::Zeros({1}));
  for (int step = 0; step <= 200; ++step) {
    const Tensor loss = ag::Mean(ag::Square(ag::Matmul(s, w) + b - t));
    ag::ZeroGrad(w);
    ag::ZeroGrad(b);
    ag::Backward(loss);
    if (step % 50 == 0)
      std::cout << "step " << step << ": mean squared error " << loss.item() << "\n";
    ag::NoGradGuard no_grad;  // the update is not part of any graph
    w.CopyFrom(w - 0.5 * ag::Grad(w));
    b.CopyFrom(b - 0.5 * ag::Grad(b));
  }
  std::cout << "fitted w = " << w.item() << ", b = " << b.item() << " (data: 3 and -1)\n\n";

  std::cout << "and a mistake, caught: x.View({5, 2})\n";
  try {
    x.View({5, 2});
  } catch (const ember::Error& e) {
    std::cout << "ember::Error: " << e.what() << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  return ember::RunMain(argc, argv, "tour", "A tour of ember's tensor API.", Tour);
}
