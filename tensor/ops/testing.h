#ifndef EMBER_TENSOR_OPS_TESTING_H_
#define EMBER_TENSOR_OPS_TESTING_H_

// For tests that compare ops with fixtures from tools/reference/*.py (files of lines
// "name value value ..."), and that check an op's error message.

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "gtest/gtest.h"
#include "tensor/tensor.h"

namespace ember::ops::testing {

// The message of the ember::Error that fn throws, or "no error".
inline std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

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

// A fixture file's tensors: Get(name) is `name`'s values as a float32 tensor of the
// shape recorded under "shape.<name>".
class Fixture {
 public:
  explicit Fixture(const std::string& path) : values_(ReadFixture(path)) {}
  Tensor Get(const std::string& name) const {
    const std::vector<double>& shape = values_.at("shape." + name);
    const std::vector<double>& v = values_.at(name);
    const Shape dims(shape.begin(), shape.end());
    const Tensor t = Empty(dims, DType::kF32);
    std::copy(v.begin(), v.end(), t.data<float>());
    return t;
  }
  const std::vector<double>& Values(const std::string& name) const { return values_.at(name); }

 private:
  std::map<std::string, std::vector<double>> values_;
};

// max |got - want| <= rel * max |want| + abs over the whole tensor: the tolerance for
// results compared with PyTorch's, where float32 rounding scales with the largest value.
inline void ExpectCloseToScale(const std::vector<double>& got, const std::vector<double>& want,
                               double rel, const std::string& what, double abs = 0) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0, error = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, std::fabs(want[i]));
    error = std::max(error, std::fabs(got[i] - want[i]));
  }
  EXPECT_LE(error, rel * scale + abs)
      << what << ": max error " << error << ", max |torch| " << scale;
}

}  // namespace ember::ops::testing

#endif  // EMBER_TENSOR_OPS_TESTING_H_
