"""torch.optim.LBFGS: limited-memory BFGS (Nocedal and Wright, Numerical Optimization,
algorithm 7.4 for the two-loop recursion), with PyTorch's arguments, stopping rules and
first step, over every parameter as one flat vector. step(closure) re-evaluates the
loss (closure zeroes the gradients, computes the loss, calls backward and returns it)
up to max_iter times. Without a line search each iteration moves by lr along the
direction (the first by min(1, 1 / |g|_1) lr, as PyTorch's); line_search_fn="strong_wolfe"
finds a step that meets the strong Wolfe conditions (Nocedal and Wright's algorithms 3.5
and 3.6, with cubic interpolation, in the variant PyTorch runs, so the steps agree)."""

import math

import ember

__all__ = ["LBFGS"]


def _dot(a, b):
    return float((a * b).sum().item())


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """Where the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2 has its
    minimum (Nocedal and Wright (3.59)), kept within bounds (by default the interval
    between x1 and x2); the bounds' midpoint when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    square = d1 * d1 - g1 * g2
    if square < 0:
        return (lo + hi) / 2
    d2 = math.sqrt(square)
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


class _Point:
    """A trial step t with the loss f, gradient g and slope gtd = g . d there."""

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step t along d from the current point (loss f, gradient g, slope gtd < 0) with
    sufficient decrease, f(t) <= f + c1 t gtd, and small slope, |g(t) . d| <= c2 |gtd|.
    First the step grows (cubic extrapolation, at most 10x a time) until it brackets
    such a point or meets both conditions; then the bracket shrinks by cubic
    interpolation (kept a tenth of the bracket away from its ends when progress stalls)
    until the conditions hold, the bracket is shorter than tolerance_change along d, or
    max_ls evaluations are spent. evaluate(t) -> (loss, flat gradient). Returns the
    loss, gradient and step of the bracket's better end, and the evaluations spent."""
    d_scale = d.abs().max().item()
    start = _Point(0.0, f, g.clone(), gtd)
    prev = start
    loss, grad = evaluate(t)
    new = _Point(t, loss, grad, _dot(grad, d))
    evals, iters, done, bracket = 1, 0, False, None
    while iters < max_ls:  # widen until a bracket holds a Wolfe point
        if new.f > f + c1 * new.t * gtd or (iters > 1 and new.f >= prev.f):
            bracket = [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)]
            break
        if abs(new.gtd) <= -c2 * gtd:
            bracket, done = [new], True
            break
        if new.gtd >= 0:  # past a minimum
            bracket = [prev, _Point(new.t, new.f, new.g.clone(), new.gtd)]
            break
        step = _cubic_minimum(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd,
                              bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev = _Point(new.t, new.f, new.g.clone(), new.gtd)
        loss, grad = evaluate(step)
        new = _Point(step, loss, grad, _dot(grad, d))
        evals += 1
        iters += 1
    if iters == max_ls:
        bracket = [start, new]
    stalled = False
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    while not done and iters < max_ls:  # shrink the bracket
        a, b = bracket
        if abs(b.t - a.t) * d_scale < tolerance_change:
            break
        t = _cubic_minimum(a.t, a.f, a.gtd, b.t, b.f, b.gtd)
        top, bottom = max(a.t, b.t), min(a.t, b.t)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:  # too close to an end
            if stalled or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                stalled = False
            else:
                stalled = True
        else:
            stalled = False
        loss, grad = evaluate(t)
        new = _Point(t, loss, grad.clone(), _dot(grad, d))
        evals += 1
        iters += 1
        if new.f > f + c1 * t * gtd or new.f >= bracket[low].f:
            bracket[high] = new
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if abs(new.gtd) <= -c2 * gtd:
                done = True
            elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = new
    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS:
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError(f"LBFGS: line_search_fn={line_search_fn!r}: only 'strong_wolfe' is supported")
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
            optimal = False
            if group["line_search_fn"] == "strong_wolfe":
                start = [p.detach().clone() for p in self._params]

                def evaluate(step):  # the loss and gradient at start + step d
                    self._move(step, d)
                    with ember.enable_grad():
                        value = float(closure())
                    flat = self._flat_grad()
                    with ember.no_grad():
                        for p, v in zip(self._params, start):
                            p.copy_(v)
                    return value, flat

                loss, grad, t, spent = _strong_wolfe(evaluate, t, d, loss, grad, _dot(grad, d))
                self._move(t, d)
                optimal = grad.abs().max().item() <= tolerance_grad
                evals += spent
                state["func_evals"] += spent
            else:
                self._move(t, d)
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
