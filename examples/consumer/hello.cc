#include <iostream>

#include "moving_average.h"
#include "tensor/creation.h"

int main() {
  const ember::Tensor series = ember::Arange(0.0, 10.0, 1.0);
  std::cout << "series:  " << series << "\n";
  std::cout << "average: " << MovingAverage(series, 3) << "\n";
  return 0;
}
