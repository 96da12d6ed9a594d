"""torch.optim.LBFGS: limited-memory BFGS (Nocedal and Wright, Numerical Optimization,
algorithm 7.4 for the two-loop recursion), with PyTorch's arguments, stopping rules and
first step, over every parameter as one flat vector. step(closure) re-evaluates the
loss (closure zeroes the gradients, computes the loss, calls backward and returns it)
up to max_iter times. Without a line search each iteration moves by lr along the
direction (the first by min(1, 1 / |g|_1) lr, as PyTorch's); line_search_fn="strong_wolfe"
is not supported yet and is refused by name."""

import ember

__all__ = ["LBFGS"]


def _dot(a, b):
    return float((a * b).sum().item())


class LBFGS:
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if line_search_fn is not None:
            raise ValueError(f"LBFGS: line_search_fn={line_search_fn!r} is not supported (only None)")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if isinstance(params[0], dict):
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self.defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                         "tolerance_change": tolerance_change, "history_size": history_size,
                         "line_search_fn": line_search_fn}
        self.param_groups = [dict(self.defaults, params=params)]
        self.state = {"func_evals": 0, "n_iter": 0}

    @property
    def _params(self):
        return self.param_groups[0]["params"]

    def zero_grad(self, set_to_none=True):
        from ember.nn.modules.module import _zero_grads
        _zero_grads(self._params, set_to_none)

    def _flat_grad(self):
        return ember.cat([p.grad.reshape(-1) if p.grad is not None else ember.zeros(p.numel(), dtype=p.dtype)
                          for p in self._params])

    def _move(self, step, direction):
        """Every parameter += step * its part of direction."""
        offset = 0
        with ember.no_grad():
            for p in self._params:
                n = p.numel()
                p.add_(direction[offset:offset + n].view(*p.shape), alpha=step)
                offset += n

    def step(self, closure):
        """Up to max_iter iterations; returns the loss closure gave first."""
        if closure is None:
            raise ValueError("LBFGS.step needs a closure that computes the loss and its gradients")
        group, state = self.param_groups[0], self.state
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change, history = group["tolerance_grad"], group["tolerance_change"], \
            group["history_size"]
        with ember.enable_grad():
            first_loss = closure()
        loss = float(first_loss)
        evals = 1
        state["func_evals"] += 1
        grad = self._flat_grad()
        if grad.abs().max().item() <= tolerance_grad:
            return first_loss
        d, t = state.get("d"), state.get("t")
        dirs, steps, rho = state.setdefault("old_dirs", []), state.setdefault("old_stps", []), state.setdefault("ro", [])
        h_diag, prev_grad, prev_loss = state.get("H_diag", 1.0), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, h_diag = -grad, 1.0
                dirs.clear(), steps.clear(), rho.clear()
            else:
                y, s = grad - prev_grad, d * t  # the change of gradient and of parameters
                ys = _dot(y, s)
                if ys > 1e-10:  # keep the pair only where the curvature condition holds
                    if len(dirs) == history:
                        dirs.pop(0), steps.pop(0), rho.pop(0)
                    dirs.append(y), steps.append(s), rho.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                alpha = [0.0] * len(dirs)  # the two-loop recursion: d = -H g
                q = -grad
                for i in range(len(dirs) - 1, -1, -1):
                    alpha[i] = _dot(steps[i], q) * rho[i]
                    q = q - dirs[i] * alpha[i]
                d = q * h_diag
                for i in range(len(dirs)):
                    beta = _dot(dirs[i], d) * rho[i]
                    d = d + steps[i] * (alpha[i] - beta)
            prev_grad, prev_loss = grad.clone(), loss
            t = min(1.0, 1.0 / grad.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
            if _dot(grad, d) > -tolerance_change:  # not a descent direction
                break
            self._move(t, d)
            optimal = False
            if n_iter != max_iter:
                with ember.enable_grad():
                    loss = float(closure())
                grad = self._flat_grad()
                optimal = grad.abs().max().item() <= tolerance_grad
                evals += 1
                state["func_evals"] += 1
            if n_iter == max_iter or evals >= max_eval or optimal:
                break
            if (d * t).abs().max().item() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, H_diag=h_diag, prev_flat_grad=prev_grad, prev_loss=prev_loss)
        return first_loss

    def state_dict(self):
        return {"state": dict(self.state), "param_groups": [{k: v for k, v in self.param_groups[0].items()
                                                              if k != "params"}]}

    def load_state_dict(self, state_dict):
        self.state = dict(state_dict["state"])
        self.param_groups[0].update(state_dict["param_groups"][0])
