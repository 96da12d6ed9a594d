// Tensor::ToString against PyTorch 1.13's repr of the same tensors
// (tensor/testdata/print_reference.txt, written by tools/reference/tensor_print.py).
// PyTorch leaves out the default dtype; ember always ends with ", dtype=...)".

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tensor/creation.h"
#include "tensor/tensor.h"

namespace ember {
namespace {

std::map<std::string, std::string> ReadReference() {
  std::ifstream file("tensor/testdata/print_reference.txt");
  EXPECT_TRUE(file.good()) << "missing tensor/testdata/print_reference.txt";
  std::map<std::string, std::string> cases;
  std::string line, name;
  while (std::getline(file, line)) {
    if (line.rfind("--- ", 0) == 0) {
      name = line.substr(4);
      continue;
    }
    std::string& text = cases[name];
    if (!text.empty()) text += "\n";
    text += line;
  }
  return cases;
}

// PyTorch's text with ember's dtype suffix.
std::string WithDType(const std::string& torch_repr, absl::string_view dtype) {
  return absl::StrCat(torch_repr.substr(0, torch_repr.size() - 1), ", dtype=", dtype, ")");
}

TEST(PrintTest, MatchesPyTorch) {
  const std::map<std::string, std::string> reference = ReadReference();
  std::map<std::string, Tensor> cases = {
      {"matrix", FromList({{1., 2.}, {3., 4.}})},
      {"fixed", FromList({1.5, -2.25})},
      {"scalar", FromList(3.5)},
      {"summarized_vector", Arange(10000)},
      {"scientific_small", FromList({1e-5, 1.0})},
      {"scientific_large", FromList({1e10, 1.0})},
      {"scientific_ratio", FromList({100000., 1.})},
      {"bool", FromList({true, false})},
      {"empty_2d", Zeros({2, 0})},
      {"empty_1d", FromList({})},
      {"cube", Zeros({2, 2, 2})},
      {"nan_inf", FromList({NAN, 1.5, INFINITY})},
      {"summarized_rows", Arange(2000).View({1000, 2})},
      {"summarized_cube", Arange(2000.0).View({10, 10, 20})},
      {"zeros", FromList({0., 0.})},
      {"negative_tiny", FromList({-0.0001, 2.})},
  };
  // arange(30.) / 7, computed in float as PyTorch does.
  std::vector<float> sevenths;
  for (int i = 0; i < 30; ++i) sevenths.push_back(static_cast<float>(i) / 7.0f);
  cases["wrapped"] = FromVector(sevenths);
  ASSERT_EQ(reference.size(), cases.size());
  for (const auto& [name, t] : cases) {
    ASSERT_EQ(reference.count(name), 1u) << name;
    EXPECT_EQ(t.ToString(), WithDType(reference.at(name), DTypeName(t.dtype()))) << name;
  }
}

TEST(PrintTest, OtherDTypesAndStreams) {
  EXPECT_EQ(Arange(3, 6, 1, DType::kI32).ToString(), "tensor([3, 4, 5], dtype=i32)");
  EXPECT_EQ(FromList({-1.5, 2.0}, DType::kBF16).ToString(),
            "tensor([-1.5000,  2.0000], dtype=bf16)");
  EXPECT_EQ(FromList({1.0, 2.0}).Transpose(0, 0).ToString(), "tensor([1., 2.], dtype=f32)");
  std::ostringstream os;
  os << Zeros({1}, DType::kF64);
  EXPECT_EQ(os.str(), "tensor([0.], dtype=f64)");
  EXPECT_EQ(Tensor().ToString(), "tensor(undefined)");
}

}  // namespace
}  // namespace ember
