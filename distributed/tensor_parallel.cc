#include "distributed/tensor_parallel.h"

#include <vector>

#include "autograd/engine.h"

namespace ember::distributed {
namespace ag = autograd;
namespace {

// The sum over the group of t, in new memory. The MPI transport sums f32, not bf16: a
// narrower tensor (autocast's) is summed in f32 and rounded once.
Tensor Sum(const Tensor& t, ProcessGroup& group) {
  const bool widen = t.dtype() != DType::kF32 && t.device().is_cpu();
  const Tensor out = widen ? t.To(DType::kF32) : t.Clone();
  group.AllReduce(out);
  return widen ? out.To(t.dtype()) : out;
}

}  // namespace

Tensor ToTensorParallel(const Tensor& x, ProcessGroup& group) {
  if (group.size() == 1 || !ag::ShouldRecord({x})) return x;
  const Tensor y = ag::Detach(x);
  return ag::Record("ToTensorParallel", y, {x}, [&group](const Tensor& g) {
    return std::vector<Tensor>{Sum(g.Contiguous(), group)};
  });
}

Tensor FromTensorParallel(const Tensor& x, ProcessGroup& group) {
  if (group.size() == 1) return x;
  const Tensor y = ag::WithoutGrad([&] { return Sum(x.Contiguous(), group); });
  if (!ag::ShouldRecord({x})) return y;
  return ag::Record("FromTensorParallel", y, {x},
                    [](const Tensor& g) { return std::vector<Tensor>{g}; });
}

}  // namespace ember::distributed
