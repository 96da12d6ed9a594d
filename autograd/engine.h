#ifndef EMBER_AUTOGRAD_ENGINE_H_
#define EMBER_AUTOGRAD_ENGINE_H_

// Tensor-level reverse-mode autograd, recorded as the program runs (as PyTorch's).
//
// A differentiable function (autograd/functions/) computes its result with tensor/ops
// and, when grad mode is on and an input requires gradients, records a Node: its name,
// an edge to the node (or leaf) behind each differentiable input, and a closure that
// maps the output's gradient to the inputs' gradients, holding only the tensors it
// needs. Backward(loss) runs the nodes in reverse topological order, sums the gradients
// of a tensor used several times, and accumulates into each leaf's Grad().

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace ember {

struct Node;

// What autograd keeps in a tensor's slot (see Tensor::autograd_meta). A leaf has
// requires_grad and no grad_fn; a recorded result has a grad_fn.
struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;                      // a leaf's accumulated gradient (undefined: none yet)
  std::shared_ptr<Node> grad_fn;    // the node that made this tensor
  std::weak_ptr<Node> accumulator;  // a leaf's AccumulateGrad node, while a graph uses it
  std::function<void()> post_accumulate_hook;  // see SetPostAccumulateGradHook
  // A recorded view (autograd/views.h) that shares its input's memory: an in-place write
  // into it would change a tensor whose history does not know of the write.
  bool is_view = false;
};

namespace autograd {

// The gradients of a node's inputs from the gradient of its output, one per input
// (an undefined Tensor: that input gets no gradient).
using BackwardFn = std::function<std::vector<Tensor>(const Tensor& grad_output)>;
// For a one-input function whose gradient touches few entries (an embedding's rows):
// adds the input's gradient to `into`, in its memory, instead of returning it; false
// (having done nothing) where it cannot (into's dtype, say).
using AddBackwardFn = std::function<bool(const Tensor& grad_output, const Tensor& into)>;

}  // namespace autograd

// One recorded operation. `next[i]` is the node behind differentiable input i (an
// AccumulateGrad node for a leaf; null for an input that needs no gradient).
struct Node {
  std::string name;
  Shape shape;  // the output's, for error messages and ToDot
  DType dtype;
  std::vector<std::shared_ptr<Node>> next;
  autograd::BackwardFn backward;  // reset when the graph is released
  // Optional (one input): used when the input already has a gradient from another use
  // that nothing else holds (an embedding tied to the output layer); reset with backward.
  autograd::AddBackwardFn add_backward;
  std::shared_ptr<AutogradMeta> leaf;  // set on AccumulateGrad nodes only
};

namespace autograd {

// ---- Grad mode ----

// Whether differentiable functions record (thread-local; on by default), and setting
// it from here on (torch.set_grad_enabled called as a function; scopes use the guard).
bool GradModeEnabled();
void SetGradModeEnabled(bool enabled);

// Turns recording off for its scope on this thread, as torch.no_grad().
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

// fn() with grad mode off: the forward computation of a differentiable function, whose
// tensor ops (and the plain views inside them) act on values; the function records its
// one node itself.
template <typename Fn>
auto WithoutGrad(const Fn& fn) {
  NoGradGuard no_grad;
  return fn();
}

// ---- Leaves and gradients ----

// Marks a leaf as requiring gradients (floating dtypes only); returns it. Throws on a
// tensor that a recorded op made (only leaves can be marked).
const Tensor& SetRequiresGrad(const Tensor& t, bool requires_grad = true);
// Whether t is a leaf that requires gradients or the result of a recorded op.
bool RequiresGrad(const Tensor& t);
// Whether t is a leaf: not made by a recorded op (no grad_fn).
bool IsLeaf(const Tensor& t);
// The gradient accumulated into leaf t (undefined before any backward or after ZeroGrad).
Tensor Grad(const Tensor& t);
// Forgets t's gradient (PyTorch's zero_grad(set_to_none=True)).
void ZeroGrad(const Tensor& t);
// Makes grad t's gradient (PyTorch's `t.grad = grad`), which the next backward adds to;
// an undefined grad forgets it, as ZeroGrad. grad must have t's shape, dtype and device.
void SetGrad(const Tensor& t, const Tensor& grad);
// Calls hook() each time Backward has finished leaf t's gradient for that pass (every
// use of t summed into Grad(t)), as torch's register_post_accumulate_grad_hook, while
// the rest of backward is still to run: a data-parallel reducer starts sending it
// then. One hook per leaf; an empty function removes it.
void SetPostAccumulateGradHook(const Tensor& t, std::function<void()> hook);
// The same values and storage, cut from the graph (requires no gradient).
Tensor Detach(const Tensor& t);
// The name of the op that made t ("" for a leaf or an untracked tensor).
std::string GradFnName(const Tensor& t);

// ---- Backward ----

struct BackwardOptions {
  // Keep the saved tensors so that backward can run through the graph again.
  bool retain_graph = false;
};

// Accumulates d(root)/d(leaf) into every leaf's Grad(). `grad_root` is the gradient of
// the root (its shape); it may be left out only for a one-element root (then 1).
// Throws when the root requires no gradient, or when the graph was already released.
void Backward(const Tensor& root, const Tensor& grad_root = Tensor(),
              const BackwardOptions& options = {});

// ---- For differentiable functions ----

// Whether the backward pass running on this thread releases the graph when it ends (no
// retain_graph): a backward function then reads its saved tensors for the last time,
// and may write its gradient over one that nothing else holds (cross entropy's logits).
bool ReleasingGraph();

// A tensor that a backward function reads, saved with its storage's version (PyTorch's
// saved variable): get() returns it, or throws, naming the node that is running, when an
// in-place write (Tensor::Fill, CopyFrom) changed it after it was saved: the gradient
// would be computed from the new values. An undefined tensor saves nothing.
class SavedTensor {
 public:
  SavedTensor() = default;
  explicit SavedTensor(const Tensor& t);
  const Tensor& get() const;
  bool defined() const { return tensor_.defined(); }

 private:
  Tensor tensor_;  // Detach(t): the values, outside the graph
  uint64_t version_ = 0;
};

// Whether a function with these inputs records a node: grad mode is on and one of them
// requires gradients.
bool ShouldRecord(const std::vector<Tensor>& inputs);

// Records `out` as the result of op `name` over `inputs`; `backward` returns one
// gradient per input (undefined where none flows). Inputs that need no gradient get no
// edge, so their gradients are never used (and may be left undefined). Returns out.
// Compute `out` with tensor ops under WithoutGrad (as torch.autograd.Function's forward
// runs without grad): the ops take plain views of inputs that require grad, which grad
// mode refuses (see tensor/tensor.h).
// `add_backward` (one input only) may add the input's gradient to a gradient the input
// already has, in place: Backward calls it instead of `backward` when it can.
Tensor Record(const char* name, const Tensor& out, const std::vector<Tensor>& inputs,
              BackwardFn backward, AddBackwardFn add_backward = nullptr);

// ---- Inspecting the graph ----

// The graph behind t as Graphviz DOT: one box per op (name and output shape), one
// ellipse per leaf (its shape), edges from inputs to the ops that use them.
std::string ToDot(const Tensor& t);

}  // namespace autograd
}  // namespace ember

#endif  // EMBER_AUTOGRAD_ENGINE_H_
