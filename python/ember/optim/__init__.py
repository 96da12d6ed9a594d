"""torch.optim in ember: SGD, RMSprop, Adam and AdamW over the C++ optimizers (the same
updates, bit for bit, as ember's C++ training), and LBFGS (lbfgs.py). param_groups is a list of dicts, as in
PyTorch: a scheduler (lr_scheduler) may change a group's "lr" (or "weight_decay") between
steps."""

from ember import _ember

__all__ = ["Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]


class Optimizer:
    def __init__(self, kind, params, defaults, options):
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.param_groups = []
        for group in groups:
            group = dict(defaults, **group)
            group["params"] = list(group["params"])
            self.param_groups.append(group)
        self.defaults = dict(defaults, **options)
        self._core = _ember._make_optimizer(kind, self.param_groups, options)

    def step(self):
        """One update of every parameter that has a gradient (the GIL released)."""
        for i, group in enumerate(self.param_groups):
            self._core.set_group(i, float(group["lr"]), float(group["weight_decay"]))
        self._core.step()

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
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        super().__init__("sgd", params, {"lr": lr, "weight_decay": weight_decay},
                         {"momentum": momentum, "dampening": dampening, "nesterov": nesterov})


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False):
        super().__init__("rmsprop", params, {"lr": lr, "weight_decay": weight_decay},
                         {"alpha": alpha, "eps": eps, "momentum": momentum, "centered": centered})


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__("adam", params, {"lr": lr, "weight_decay": weight_decay},
                         {"beta1": betas[0], "beta2": betas[1], "eps": eps})


class AdamW(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__("adamw", params, {"lr": lr, "weight_decay": weight_decay},
                         {"beta1": betas[0], "beta2": betas[1], "eps": eps})


from ember.optim import lr_scheduler  # noqa: E402 (it takes the optimizers above)


from ember.optim.lbfgs import LBFGS  # noqa: E402
