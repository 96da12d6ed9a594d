#ifndef EMBER_TENSOR_OPS_TESTING_H_
#define EMBER_TENSOR_OPS_TESTING_H_

// For tests that compare ops with fixtures from tools/reference/*.py: files of lines
// "name value value ...".

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/tensor.h"

namespace ember::ops::testing {

inline std::map<std::string, std::vector<double>> ReadFixture(const std::string& path) {
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << "missing fixture " << path;
  std::map<std::string, std::vector<double>> values;
  std::string line;
  while (std::getline(file, line)) {
    std::istringstream in(line);
    std::string name;
    in >> name;
    for (double v; in >> v;) values[name].push_back(v);
  }
  return values;
}

// Every element within tol * (1 + |want|) of the fixture's value.
inline void ExpectClose(const Tensor& got, const std::vector<double>& want, double tol,
                        const std::string& name) {
  const std::vector<double> values = got.ToVector<double>();
  ASSERT_EQ(values.size(), want.size()) << name;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(values[i], want[i], tol * (1 + std::fabs(want[i]))) << name << " element " << i;
  }
}

}  // namespace ember::ops::testing

#endif  // EMBER_TENSOR_OPS_TESTING_H_
