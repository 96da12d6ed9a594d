// A tour of ember's tensors: creation, views that share memory, copies, dtypes and
// seeded random numbers.  bazel run //examples:tour -- --seed=7

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tensor/creation.h"
#include "tensor/random.h"
#include "tensor/tensor.h"

ABSL_FLAG(uint64_t, seed, 0, "seed of the Philox generator for the random tensors");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("A tour of ember's tensor API.");
  absl::ParseCommandLine(argc, argv);
  using ember::Tensor;
  try {
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
    std::cout << "and a mistake, caught: x.View({5, 2})\n";
    x.View({5, 2});
  } catch (const ember::Error& e) {
    std::cout << "ember::Error: " << e.what() << "\n";
  }
  return 0;
}
