#include "tensor/ops/reduce.h"

#include <vector>

#include "kernels/reduce.h"
#include "tensor/ops/binary.h"
#include "tensor/ops/internal/backend.h"
#include "tensor/ops/internal/float_dtype.h"

namespace ember::ops {
namespace {

// The split of x's dimensions into kept and reduced ones.
struct Plan {
  Shape kept_dims, reduced_dims;  // dimension numbers, ascending
  Shape out_shape;                // the result's shape (keepdim or not)
  int64_t rows = 1, n = 1;        // kept and reduced element counts
};

Plan MakePlan(const char* op, const Tensor& x, IntSpan dims, bool keepdim) {
  internal::FloatComputeDType(op, x);
  std::vector<bool> reduced(x.dim(), dims.empty());
  for (int64_t d : dims) {
    const int64_t dim = NormalizeDim(d, x.dim(), op);
    EMBER_CHECK(x.dim() == 0 || !reduced[dim], op, ": dimension ", d, " appears twice in ",
                ShapeToString(dims));
    if (x.dim() > 0) reduced[dim] = true;
  }
  Plan plan;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (reduced[d]) {
      plan.reduced_dims.push_back(d);
      plan.n *= x.size(d);
      if (keepdim) plan.out_shape.push_back(1);
    } else {
      plan.kept_dims.push_back(d);
      plan.rows *= x.size(d);
      plan.out_shape.push_back(x.size(d));
    }
  }
  return plan;
}

// x as a [rows, n] matrix with contiguous rows (a view when the layout allows, a
// copy otherwise), in the dtype the kernels compute in.
Tensor AsRows(const Tensor& x, const Plan& plan) {
  Shape order = plan.kept_dims;
  order.insert(order.end(), plan.reduced_dims.begin(), plan.reduced_dims.end());
  const DType compute = x.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
  const Tensor permuted = x.To(compute).Permute(order);
  const Tensor rows = permuted.Reshape({plan.rows, plan.n});
  if (plan.n <= 1 || rows.stride(1) == 1) return rows;
  return permuted.Contiguous().View({plan.rows, plan.n});
}

using RowsKernel = internal::Kernel<void(DType, int64_t, int64_t, const void*, int64_t, void*)>;

Tensor ReduceRows(const char* op, const Tensor& x, const Plan& plan, const RowsKernel& kernel) {
  const Tensor rows = AsRows(x, plan);
  Tensor out = Empty({plan.rows}, rows.dtype(), x.device());
  kernel.On(x.device())(rows.dtype(), plan.rows, plan.n, rows.raw_data(), rows.stride(0),
                        out.raw_data());
  return out.View(plan.out_shape).To(x.dtype());
}

void CheckNonEmpty(const char* op, const Tensor& x, const Plan& plan) {
  for (int64_t d : plan.reduced_dims) {
    EMBER_CHECK(x.size(d) > 0, op, ": cannot reduce over dimension ", d, " of size 0 (shape ",
                ShapeToString(x.shape()), ")");
  }
}

}  // namespace

Tensor Sum(const Tensor& x, IntSpan dims, bool keepdim) {
  const Plan plan = MakePlan("sum", x, dims, keepdim);
  // Reducing leading dimensions of a row-major tensor (a gradient summed over a
  // batch) reads down the columns in place.
  const Shape& lead = plan.reduced_dims;
  bool leading = !lead.empty() && plan.rows > 1;
  for (size_t i = 0; i < lead.size(); ++i) leading = leading && lead[i] == static_cast<int64_t>(i);
  // bf16 and f16 sum in f32, widened by one contiguous pass.
  const bool narrow = x.dtype() == DType::kBF16 || x.dtype() == DType::kF16;
  if (leading && (!narrow || x.is_contiguous())) {
    const Tensor wide = narrow ? x.To(DType::kF32) : x;
    const Tensor matrix = wide.Reshape({plan.n, plan.rows});
    if (matrix.stride(1) == 1) {
      Tensor out = Empty({plan.rows}, wide.dtype(), x.device());
      EMBER_KERNEL(SumColumns)
          .On(x.device())(wide.dtype(), plan.n, plan.rows, matrix.raw_data(), matrix.stride(0),
                          out.raw_data());
      return out.View(plan.out_shape).To(x.dtype());
    }
  }
  return ReduceRows("sum", x, plan, EMBER_KERNEL(SumRows));
}

Tensor SumOfSquares(const Tensor& x) {
  EMBER_CHECK(IsFloatingPoint(x.dtype()),
              "sum_of_squares: expected a floating-point tensor, got dtype ", DTypeName(x.dtype()));
  const DType compute = x.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
  const Tensor c = x.To(compute).Contiguous();
  Tensor out = Empty({}, DType::kF64, x.device());
  EMBER_KERNEL(SumSquares).On(x.device())(compute, c.numel(), c.raw_data(), out.data<double>());
  return out;
}

Tensor SumToSize(const Tensor& x, IntSpan shape) {
  const int64_t lead = x.dim() - static_cast<int64_t>(shape.size());
  bool broadcasts = lead >= 0;
  Shape dims;
  for (int64_t d = 0; broadcasts && d < x.dim(); ++d) {
    if (d < lead) {
      dims.push_back(d);
    } else if (shape[d - lead] != x.size(d)) {
      broadcasts = shape[d - lead] == 1;
      dims.push_back(d);
    }
  }
  EMBER_CHECK(broadcasts, "sum_to_size: shape ", ShapeToString(x.shape()),
              " does not broadcast from ", ShapeToString(shape));
  if (dims.empty()) return x;
  return Sum(x, dims, /*keepdim=*/true).View(shape);
}

Tensor Mean(const Tensor& x, IntSpan dims, bool keepdim) {
  const Plan plan = MakePlan("mean", x, dims, keepdim);
  const DType compute = x.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
  // n == 0 gives 0 / 0 = NaN, as torch.mean.
  return Div(Sum(x.To(compute), dims, keepdim), static_cast<double>(plan.n)).To(x.dtype());
}

Tensor Max(const Tensor& x, IntSpan dims, bool keepdim) {
  const Plan plan = MakePlan("max", x, dims, keepdim);
  CheckNonEmpty("max", x, plan);
  return ReduceRows("max", x, plan, EMBER_KERNEL(MaxRows));
}

Tensor Min(const Tensor& x, IntSpan dims, bool keepdim) {
  const Plan plan = MakePlan("min", x, dims, keepdim);
  CheckNonEmpty("min", x, plan);
  return ReduceRows("min", x, plan, EMBER_KERNEL(MinRows));
}

Tensor Var(const Tensor& x, IntSpan dims, int64_t correction, bool keepdim) {
  const Plan plan = MakePlan("var", x, dims, keepdim);
  EMBER_CHECK(correction >= 0, "var: correction must be non-negative, got ", correction);
  const Tensor rows = AsRows(x, plan);
  Tensor out = Empty({plan.rows}, rows.dtype(), x.device());
  EMBER_KERNEL(VarRows).On(x.device())(rows.dtype(), plan.rows, plan.n, rows.raw_data(),
                                       rows.stride(0), correction, out.raw_data());
  return out.View(plan.out_shape).To(x.dtype());
}

Tensor ArgMax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  // Integers and bools compare exactly as f64 (up to 2^53).
  const Tensor values = IsFloatingPoint(x.dtype()) ? x : x.To(DType::kF64);
  const Tensor source = dim ? values : values.Reshape({-1});
  const int64_t d = dim.value_or(0);
  const Plan plan = MakePlan("argmax", source, {d}, dim ? keepdim : false);
  CheckNonEmpty("argmax", source, plan);
  const Tensor rows = AsRows(source, plan);
  Tensor out = Empty({plan.rows}, DType::kI64, x.device());
  EMBER_KERNEL(ArgMaxRows)
      .On(x.device())(rows.dtype(), plan.rows, plan.n, rows.raw_data(), rows.stride(0),
                      out.data<int64_t>());
  return out.View(plan.out_shape);
}

}  // namespace ember::ops
