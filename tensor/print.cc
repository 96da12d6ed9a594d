// Tensor::ToString: PyTorch's print format (torch/_tensor_str.py), with the dtype
// always shown:
//   tensor([[ 1.5000, -2.0000],
//           [ 0.2500,  4.0000]], dtype=f32)
// Tensors of more than 1000 elements show the first and last 3 entries of each
// dimension with "..." between; lines wrap at 80 columns.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tensor/tensor.h"

namespace ember {
namespace {

constexpr int64_t kThreshold = 1000;  // more elements than this are summarized
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

// How every element of one tensor is written; all get the same width.
class Formatter {
 public:
  Formatter(DType dtype, const std::vector<Tensor>& elements) {
    if (IsFloatingPoint(dtype)) {
      // As PyTorch: integers print as "3.", ranges wider than 1000x or values outside
      // [1e-4, 1e8] in scientific notation, the rest with 4 decimals.
      double max_abs = 0, min_abs = INFINITY;
      bool all_integers = true;
      for (const Tensor& e : elements) {
        const double v = std::fabs(e.item<double>());
        if (!std::isfinite(v) || v == 0) continue;
        max_abs = std::max(max_abs, v);
        min_abs = std::min(min_abs, v);
        all_integers = all_integers && v == std::ceil(v);
      }
      const bool any = max_abs > 0;
      if (all_integers) {
        mode_ = any && (max_abs / min_abs > 1000 || max_abs > 1e8) ? kScientific : kWholeFloat;
      } else {
        mode_ = max_abs / min_abs > 1000 || max_abs > 1e8 || min_abs < 1e-4 ? kScientific : kFixed;
      }
    } else {
      mode_ = dtype == DType::kBool ? kBool : kInteger;
    }
    for (const Tensor& e : elements) width_ = std::max<int64_t>(width_, Raw(e).size());
  }

  int64_t width() const { return width_; }
  std::string Format(const Tensor& element) const {
    std::string s = Raw(element);
    return std::string(std::max<int64_t>(0, width_ - static_cast<int64_t>(s.size())), ' ') + s;
  }

 private:
  enum Mode { kInteger, kBool, kWholeFloat, kFixed, kScientific };

  std::string Raw(const Tensor& element) const {
    switch (mode_) {
      case kInteger:
        return absl::StrCat(element.item<int64_t>());
      case kBool:
        return element.item<bool>() ? "True" : "False";
      default:
        break;
    }
    const double v = element.item<double>();
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    switch (mode_) {
      case kWholeFloat:
        return absl::StrFormat("%.0f.", v);
      case kFixed:
        return absl::StrFormat("%.4f", v);
      default:
        return absl::StrFormat("%.4e", v);
    }
  }

  Mode mode_;
  int64_t width_ = 0;
};

// Indices shown along a dimension of `size`: all, or the first and last kEdgeItems
// (with -1 marking the "...").
std::vector<int64_t> ShownIndices(int64_t size, bool summarize) {
  std::vector<int64_t> shown;
  if (summarize && size > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) shown.push_back(i);
    shown.push_back(-1);
    for (int64_t i = size - kEdgeItems; i < size; ++i) shown.push_back(i);
  } else {
    for (int64_t i = 0; i < size; ++i) shown.push_back(i);
  }
  return shown;
}

void CollectShown(const Tensor& t, bool summarize, std::vector<Tensor>* elements) {
  if (t.dim() == 0) {
    elements->push_back(t);
    return;
  }
  for (int64_t i : ShownIndices(t.size(0), summarize)) {
    if (i >= 0) CollectShown(t.Select(0, i), summarize, elements);
  }
}

std::string Body(const Tensor& t, int64_t indent, bool summarize, const Formatter& f) {
  if (t.dim() == 0) return f.Format(t);
  const std::vector<int64_t> shown = ShownIndices(t.size(0), summarize);
  if (t.dim() == 1) {
    // Elements are wrapped so that each line stays within kLineWidth.
    const int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / (f.width() + 2));
    std::vector<std::string> lines, line;
    for (int64_t i : shown) {
      line.push_back(i >= 0 ? f.Format(t.Select(0, i)) : " ...");
      if (static_cast<int64_t>(line.size()) == per_line) {
        lines.push_back(absl::StrJoin(line, ", "));
        line.clear();
      }
    }
    if (!line.empty()) lines.push_back(absl::StrJoin(line, ", "));
    return absl::StrCat(
        "[", absl::StrJoin(lines, absl::StrCat(",\n", std::string(indent + 1, ' '))), "]");
  }
  std::vector<std::string> slices;
  for (int64_t i : shown) {
    slices.push_back(i >= 0 ? Body(t.Select(0, i), indent + 1, summarize, f) : "...");
  }
  const std::string separator =
      absl::StrCat(",", std::string(t.dim() - 1, '\n'), std::string(indent + 1, ' '));
  return absl::StrCat("[", absl::StrJoin(slices, separator), "]");
}

}  // namespace

std::string Tensor::ToString() const {
  if (!defined()) return "tensor(undefined)";
  // As PyTorch, a tensor off the CPU names its device.
  const std::string suffix =
      absl::StrCat(device().is_cpu() ? "" : absl::StrCat("device='", device().ToString(), "', "),
                   "dtype=", DTypeName(dtype()), ")");
  if (device().type == DeviceType::kMeta) {  // no values: the size, as PyTorch shows it
    return absl::StrCat("tensor(..., size=(", absl::StrJoin(shape(), ", "), "), ", suffix);
  }
  if (numel() == 0) {
    const std::string size =
        dim() == 1 ? "" : absl::StrCat("size=(", absl::StrJoin(shape(), ", "), "), ");
    return absl::StrCat("tensor([], ", size, suffix);
  }
  const bool summarize = numel() > kThreshold;
  // Printing reads values: the same view without the autograd slot, so that the
  // slices it takes are never refused as views that would cut a graph; from a GPU, a
  // copy on the host (one transfer, not one per element).
  const Tensor values = device().is_cpu()
                            ? Tensor(storage(), offset_elements(), shape(), strides(), dtype())
                            : To(Device::Cpu());
  std::vector<Tensor> elements;
  CollectShown(values, summarize, &elements);
  const Formatter formatter(dtype(), elements);
  const std::string prefix = "tensor(";
  return absl::StrCat(prefix, Body(values, prefix.size(), summarize, formatter), ", ", suffix);
}

std::ostream& operator<<(std::ostream& os, const Tensor& tensor) { return os << tensor.ToString(); }

}  // namespace ember
