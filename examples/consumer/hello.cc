#include <iostream>

#include "moving_average.h"
#include "tensor/creation.h"
#include "token_lengths.h"

int main() {
  const ember::Tensor series = ember::Arange(0.0, 10.0, 1.0);
  std::cout << "series:  " << series << "\n";
  std::cout << "average: " << MovingAverage(series, 3) << "\n";
  const absl::StatusOr<ember::Tensor> lengths =
      TokenLengths("the cat sat on the mat, the cat sat on the hat", 270);
  if (!lengths.ok()) {
    std::cerr << "hello: " << lengths.status() << "\n";
    return 1;
  }
  std::cout << "bytes per token: " << *lengths << "\n";
  return 0;
}
