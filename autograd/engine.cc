#include "autograd/engine.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/error.h"
#include "tensor/creation.h"
#include "tensor/ops/binary.h"

namespace ember::autograd {
namespace {

thread_local bool grad_mode_enabled = true;
thread_local bool releasing_graph = false;
// The node whose backward is running on this thread, for SavedTensor's error.
thread_local const Node* running_node = nullptr;

// Sets running_node for a scope.
class Running {
 public:
  explicit Running(const Node* node) : previous_(running_node) { running_node = node; }
  ~Running() { running_node = previous_; }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;

 private:
  const Node* previous_;
};

// The node that accumulates into leaf t: one per leaf while a graph holds it, so that
// the gradients of a leaf used several times are summed before they are accumulated.
std::shared_ptr<Node> AccumulatorFor(const Tensor& t) {
  const std::shared_ptr<AutogradMeta>& meta = t.autograd_meta();
  if (std::shared_ptr<Node> node = meta->accumulator.lock()) return node;
  auto node = std::make_shared<Node>();
  node->name = "AccumulateGrad";
  node->shape = t.shape();
  node->dtype = t.dtype();
  node->leaf = meta;
  meta->accumulator = node;
  return node;
}

// The node behind t in a graph: its grad_fn, or its accumulator for a leaf.
std::shared_ptr<Node> GraphNode(const Tensor& t) {
  const std::shared_ptr<AutogradMeta>& meta = t.autograd_meta();
  return meta->grad_fn ? meta->grad_fn : AccumulatorFor(t);
}

// Every node reachable from `root`, and how many edges lead into each.
std::unordered_map<Node*, int> CountDependencies(Node* root) {
  std::unordered_map<Node*, int> deps = {{root, 0}};
  std::vector<Node*> stack = {root};
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const std::shared_ptr<Node>& child : node->next) {
      if (!child) continue;
      if (deps[child.get()]++ == 0) stack.push_back(child.get());
    }
  }
  return deps;
}

}  // namespace

bool GradModeEnabled() { return grad_mode_enabled; }
void SetGradModeEnabled(bool enabled) { grad_mode_enabled = enabled; }

namespace {
// The tensor core's view check (tensor/tensor.h), installed before main: this file is
// linked wherever a tensor can require grad (SetRequiresGrad and Record live here).
const bool tracks_grad_installed = [] {
  SetTracksGrad([](const Tensor& t) { return grad_mode_enabled && RequiresGrad(t); });
  return true;
}();
}  // namespace

NoGradGuard::NoGradGuard() : previous_(grad_mode_enabled) { grad_mode_enabled = false; }
NoGradGuard::~NoGradGuard() { grad_mode_enabled = previous_; }

const Tensor& SetRequiresGrad(const Tensor& t, bool requires_grad) {
  EMBER_CHECK(!requires_grad || IsFloatingPoint(t.dtype()),
              "set_requires_grad: only floating-point tensors can require gradients, not ",
              DTypeName(t.dtype()));
  const std::shared_ptr<AutogradMeta>& meta = t.autograd_meta();
  EMBER_CHECK(!meta || !meta->grad_fn, "set_requires_grad: only leaves can be marked; this ",
              "tensor was made by ", meta ? meta->grad_fn->name : "", " (Detach it first)");
  if (!meta) {
    if (!requires_grad) return t;
    t.set_autograd_meta(std::make_shared<AutogradMeta>());
  }
  t.autograd_meta()->requires_grad = requires_grad;
  return t;
}

bool RequiresGrad(const Tensor& t) {
  const AutogradMeta* meta = t.defined() ? t.autograd_meta().get() : nullptr;
  return meta != nullptr && (meta->requires_grad || meta->grad_fn != nullptr);
}

bool IsLeaf(const Tensor& t) { return !t.autograd_meta() || !t.autograd_meta()->grad_fn; }

Tensor Grad(const Tensor& t) { return t.autograd_meta() ? t.autograd_meta()->grad : Tensor(); }

void ZeroGrad(const Tensor& t) {
  if (t.autograd_meta()) t.autograd_meta()->grad = Tensor();
}

void SetGrad(const Tensor& t, const Tensor& grad) {
  if (!grad.defined()) return ZeroGrad(t);
  EMBER_CHECK(grad.shape() == t.shape() && grad.dtype() == t.dtype() && grad.device() == t.device(),
              "assigned grad: a ", DTypeName(grad.dtype()), " ", ShapeToString(grad.shape()),
              " on ", grad.device().ToString(), " for a ", DTypeName(t.dtype()), " ",
              ShapeToString(t.shape()), " on ", t.device().ToString(),
              "; they must have the same shape, dtype and device");
  if (!t.autograd_meta()) t.set_autograd_meta(std::make_shared<AutogradMeta>());
  t.autograd_meta()->grad = grad;
}

void SetPostAccumulateGradHook(const Tensor& t, std::function<void()> hook) {
  EMBER_CHECK(IsLeaf(t) && RequiresGrad(t),
              "post-accumulate hook: only a leaf that requires grad has one");
  t.autograd_meta()->post_accumulate_hook = std::move(hook);
}

Tensor Detach(const Tensor& t) {
  return Tensor(t.storage(), t.offset_elements(), t.shape(), t.strides(), t.dtype());
}

SavedTensor::SavedTensor(const Tensor& t)
    : tensor_(t.defined() ? Detach(t) : Tensor()),
      version_(t.defined() ? t.storage().version() : 0) {}

const Tensor& SavedTensor::get() const {
  if (tensor_.defined() && tensor_.storage().version() != version_) {
    EMBER_THROW("one of the tensors needed for the gradient computation has been modified by an ",
                "in-place operation: a ", DTypeName(tensor_.dtype()), " tensor of shape ",
                ShapeToString(tensor_.shape()), " that ",
                running_node != nullptr ? running_node->name : std::string("a node"),
                " saved is at version ", tensor_.storage().version(), "; expected version ",
                version_, " (clone it before writing to it in place)");
  }
  return tensor_;
}

std::string GradFnName(const Tensor& t) {
  return t.autograd_meta() && t.autograd_meta()->grad_fn ? t.autograd_meta()->grad_fn->name : "";
}

bool ShouldRecord(const std::vector<Tensor>& inputs) {
  if (!grad_mode_enabled) return false;
  for (const Tensor& t : inputs) {
    if (RequiresGrad(t)) return true;
  }
  return false;
}

Tensor Record(const char* name, const Tensor& out, const std::vector<Tensor>& inputs,
              BackwardFn backward, AddBackwardFn add_backward) {
  EMBER_CHECK(!add_backward || inputs.size() == 1, "record ", name,
              ": add_backward needs one input, got ", inputs.size());
  if (!ShouldRecord(inputs)) return out;
  auto node = std::make_shared<Node>();
  node->name = name;
  node->shape = out.shape();
  node->dtype = out.dtype();
  node->next.reserve(inputs.size());
  for (const Tensor& t : inputs) node->next.push_back(RequiresGrad(t) ? GraphNode(t) : nullptr);
  node->backward = std::move(backward);
  node->add_backward = std::move(add_backward);
  // A function may hand back one of its inputs (a no-op reshape, a cast to the same
  // dtype): the result gets a handle of its own, so the input's slot is untouched.
  const Tensor result = out.autograd_meta() ? Detach(out) : out;
  auto meta = std::make_shared<AutogradMeta>();
  meta->grad_fn = std::move(node);
  result.set_autograd_meta(std::move(meta));
  return result;
}

void Backward(const Tensor& root, const Tensor& grad_root, const BackwardOptions& options) {
  EMBER_CHECK(RequiresGrad(root), "backward: the tensor of shape ", ShapeToString(root.shape()),
              " does not require grad and has no grad_fn");
  Tensor seed = grad_root;
  if (!seed.defined()) {
    EMBER_CHECK(root.numel() == 1, "backward: a gradient can be left out only for a ",
                "one-element result, not one of shape ", ShapeToString(root.shape()));
    seed = Ones(root.shape(), root.dtype(), root.device());
  }
  EMBER_CHECK(seed.shape() == root.shape() && seed.dtype() == root.dtype(),
              "backward: the gradient has shape ", ShapeToString(seed.shape()), " and dtype ",
              DTypeName(seed.dtype()), ", the result ", ShapeToString(root.shape()), " and ",
              DTypeName(root.dtype()));
  // Backward functions compute on values (grad mode off, as PyTorch without
  // create_graph): they record nothing and may take plain views of saved inputs.
  NoGradGuard no_grad;
  struct Releasing {  // set for this pass, restored after (a backward inside a hook)
    explicit Releasing(bool now) : before(releasing_graph) { releasing_graph = now; }
    ~Releasing() { releasing_graph = before; }
    bool before;
  } releasing(!options.retain_graph);
  const std::shared_ptr<Node> start = GraphNode(root);
  std::unordered_map<Node*, int> deps = CountDependencies(start.get());
  auto release = [](Node* node) {
    node->backward = nullptr;
    node->add_backward = nullptr;
  };
  std::unordered_map<Node*, Tensor> pending = {{start.get(), seed}};
  std::vector<Node*> ready = {start.get()};
  while (!ready.empty()) {
    Node* node = ready.back();
    ready.pop_back();
    auto it = pending.find(node);
    const Tensor grad = it == pending.end() ? Tensor() : std::move(it->second);
    if (it != pending.end()) pending.erase(it);
    if (node->leaf) {
      if (grad.defined()) {
        Tensor& acc = node->leaf->grad;
        // A gradient nobody else holds becomes the leaf's own (as PyTorch steals one
        // whose use count is 1); one that may be seen elsewhere is copied.
        const bool own = grad.is_sole_owner() && grad.is_contiguous();
        acc = acc.defined() ? ops::Add(acc, grad) : own ? grad : grad.Clone();
        if (node->leaf->post_accumulate_hook) node->leaf->post_accumulate_hook();
      }
      continue;
    }
    if (grad.defined() && node->add_backward && node->next[0]) {
      // The input's gradient so far, if nobody else holds it, takes this one in place.
      Node* child = node->next[0].get();
      auto slot = pending.find(child);
      const Running running(node);
      if (slot != pending.end() && slot->second.is_sole_owner() && slot->second.is_contiguous() &&
          node->add_backward(grad, slot->second)) {
        if (!options.retain_graph) release(node);
        if (--deps[child] == 0) ready.push_back(child);
        continue;
      }
    }
    std::vector<Tensor> grads;
    if (grad.defined()) {
      EMBER_CHECK(node->backward != nullptr, "backward: trying to run backward through ",
                  node->name, " a second time, but its saved tensors were freed after the ",
                  "first; pass retain_graph to keep them");
      const Running running(node);
      grads = node->backward(grad);
      EMBER_CHECK(grads.size() == node->next.size(), "backward of ", node->name, " returned ",
                  grads.size(), " gradients for ", node->next.size(), " inputs");
    }
    // Its saved tensors are freed as soon as it has run (PyTorch's order), so that the
    // forward's activations go as the gradients come.
    if (!options.retain_graph) release(node);
    for (size_t i = 0; i < node->next.size(); ++i) {
      Node* child = node->next[i].get();
      if (!child) continue;
      if (i < grads.size() && grads[i].defined()) {
        EMBER_CHECK(grads[i].shape() == child->shape, "backward of ", node->name,
                    " returned a gradient of shape ", ShapeToString(grads[i].shape()),
                    " for input ", i, " of shape ", ShapeToString(child->shape));
        Tensor& slot = pending[child];
        slot = slot.defined() ? ops::Add(slot, grads[i]) : grads[i];
      }
      if (--deps[child] == 0) ready.push_back(child);
    }
  }
  if (!options.retain_graph) {
    for (auto& [node, count] : deps) release(node);  // those no gradient reached too
  }
}

bool ReleasingGraph() { return releasing_graph; }

std::string ToDot(const Tensor& t) {
  std::string dot = "digraph autograd {\n  node [fontname=\"monospace\"];\n";
  if (!RequiresGrad(t)) return dot + "}\n";
  const std::shared_ptr<Node> root = GraphNode(t);
  std::unordered_map<const Node*, int> ids;
  std::vector<const Node*> stack = {root.get()};
  ids[root.get()] = 0;
  std::string edges;
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    const int id = ids[node];
    const std::string shape = ShapeToString(node->shape);
    if (node->leaf) {
      absl::StrAppend(&dot, "  n", id, " [shape=ellipse, label=\"", shape, " ",
                      DTypeName(node->dtype), "\"];\n");
    } else {
      absl::StrAppend(&dot, "  n", id, " [shape=box, label=\"", node->name, "\\n", shape, "\"",
                      node == root.get() ? ", style=bold" : "", "];\n");
    }
    for (const std::shared_ptr<Node>& child : node->next) {
      if (!child) continue;
      auto [it, inserted] = ids.emplace(child.get(), static_cast<int>(ids.size()));
      if (inserted) stack.push_back(child.get());
      absl::StrAppend(&edges, "  n", it->second, " -> n", id, ";\n");
    }
  }
  return dot + edges + "}\n";
}

}  // namespace ember::autograd
