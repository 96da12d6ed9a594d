"""torch.optim in ember: SGD, RMSprop, Adam and AdamW over the C++ optimizers (the same
updates, bit for bit, as ember's C++ training), and LBFGS (lbfgs.py). param_groups is a list of dicts, as in
PyTorch: a scheduler (lr_scheduler) may change a group's "lr" (or "weight_decay") between
steps."""

import ember
from ember import _ember

__all__ = ["Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]


class Optimizer:
    """What the optimizers share. Their keyword arguments are PyTorch's: maximize ascends
    (the update takes -grad, weight decay included, as PyTorch's); foreach, fused and
    capturable choose among PyTorch's implementations of one update and change no value,
    so they are accepted and ember runs its own fused step; differentiable=True (a step
    recorded by autograd) and amsgrad=True are refused by name."""

    def __init__(self, kind, params, defaults, options, maximize=False, differentiable=False, amsgrad=False):
        for name, value in (("differentiable", differentiable), ("amsgrad", amsgrad)):
            if value:
                raise NotImplementedError(f"{type(self).__name__}: {name}=True is not supported")
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        defaults = dict(defaults, maximize=bool(maximize))
        self.param_groups = []
        for group in groups:
            group = dict(defaults, **group)
            group["params"] = list(group["params"])
            self.param_groups.append(group)
        self.defaults = dict(defaults, **options)
        self._core = _ember._make_optimizer(kind, self.param_groups, options)

    def step(self, closure=None):
        """One update of every parameter that has a gradient (the GIL released). With a
        closure, calls it first with gradients on and returns its loss, as PyTorch."""
        loss = None
        if closure is not None:
            with ember.enable_grad():
                loss = closure()
        flipped = []  # maximize: -grad for the step, the gradients given back after it
        for group in self.param_groups:
            if group["maximize"]:
                for p in group["params"]:
                    if p.grad is not None:
                        flipped.append((p, p.grad))
                        p.grad = -p.grad
        for i, group in enumerate(self.param_groups):
            self._core.set_group(i, float(group["lr"]), float(group["weight_decay"]))
        try:
            self._core.step()
        finally:
            for p, grad in flipped:
                p.grad = grad
        return loss

    def zero_grad(self, set_to_none: bool = True):
        """Every parameter's gradient dropped (PyTorch 2's default, set_to_none=True) or
        set to zeros in place."""
        if set_to_none:
            self._core.zero_grad()
        else:
            from ember.nn.modules.module import _zero_grads
            _zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none=False)

    def state_dict(self):
        """The state that makes a resumed run continue exactly: tensors by name
        ("<i>.step", "<i>.<buffer>", "group.<g>.lr"), so ember.save can write it."""
        return self._core.state_dict()

    def load_state_dict(self, state):
        self._core.load_state_dict(dict(state))
        for i, group in enumerate(self.param_groups):
            key = f"group.{i}.lr"
            if key in state:
                group["lr"] = state[key].item()

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        super().__init__("sgd", params, {"lr": lr, "weight_decay": weight_decay},
                         {"momentum": momentum, "dampening": dampening, "nesterov": nesterov}, maximize,
                         differentiable)


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 foreach=None, maximize=False, differentiable=False):
        super().__init__("rmsprop", params, {"lr": lr, "weight_decay": weight_decay},
                         {"alpha": alpha, "eps": eps, "momentum": momentum, "centered": centered}, maximize,
                         differentiable)


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        super().__init__("adam", params, {"lr": lr, "weight_decay": weight_decay},
                         {"beta1": betas[0], "beta2": betas[1], "eps": eps}, maximize, differentiable, amsgrad)


class AdamW(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__("adamw", params, {"lr": lr, "weight_decay": weight_decay},
                         {"beta1": betas[0], "beta2": betas[1], "eps": eps}, maximize, differentiable, amsgrad)


from ember.optim import lr_scheduler  # noqa: E402 (it takes the optimizers above)


from ember.optim.lbfgs import LBFGS  # noqa: E402
