"""Writes python/tests/testdata/lbfgs_steps.json: PyTorch 1.13's torch.optim.LBFGS on two
problems in float64, without a line search and with line_search_fn="strong_wolfe" (Rosenbrock's function in two parameters; a least-squares fit of a
weight matrix and a bias), the parameters and the closure's first loss after each step
(Rosenbrock's one step of 20 iterations: past it, its ill-conditioned valley turns
differences in the last bit of a dot product into the third digit), for optim_test. Run with Debian's python3-torch:

    /usr/bin/python3 tools/reference/lbfgs_steps.py > python/tests/testdata/lbfgs_steps.json
"""

import json

import torch


def rosenbrock(p):
    x, y = p[0], p[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def least_squares(w, b):
    x = torch.arange(12, dtype=torch.float64).reshape(4, 3) / 7 - 0.5
    target = torch.tensor([[1.0, -2.0], [0.5, 0.25], [-1.0, 3.0], [2.0, 0.0]], dtype=torch.float64)
    return ((x @ w + b - target) ** 2).mean()


def run(params, loss_fn, steps, **options):
    opt = torch.optim.LBFGS(params, **options)
    trail = []
    for _ in range(steps):
        def closure():
            opt.zero_grad()
            loss = loss_fn(*params)
            loss.backward()
            return loss
        first = opt.step(closure)
        trail.append({"loss": first.item(), "params": [p.tolist() for p in params]})
    return trail


def main():
    start = torch.tensor([-1.5, 2.0], dtype=torch.float64, requires_grad=True)
    w = (torch.arange(6, dtype=torch.float64).reshape(3, 2) / 10).requires_grad_()
    b = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    start2 = torch.tensor([-1.5, 2.0], dtype=torch.float64, requires_grad=True)
    w2 = (torch.arange(6, dtype=torch.float64).reshape(3, 2) / 10).requires_grad_()
    b2 = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    print(json.dumps({
        "rosenbrock": {"options": {"lr": 1, "max_iter": 20, "history_size": 10},
                       "steps": run([start], rosenbrock, 1, lr=1, max_iter=20, history_size=10)},
        "least_squares": {"options": {"lr": 0.8, "max_iter": 5},
                          "steps": run([w, b], least_squares, 4, lr=0.8, max_iter=5)},
        "rosenbrock_strong_wolfe": {
            "options": {"lr": 1, "max_iter": 20, "line_search_fn": "strong_wolfe"},
            "steps": run([start2], rosenbrock, 3, lr=1, max_iter=20, line_search_fn="strong_wolfe")},
        "least_squares_strong_wolfe": {
            "options": {"lr": 1, "max_iter": 4, "line_search_fn": "strong_wolfe"},
            "steps": run([w2, b2], least_squares, 3, lr=1, max_iter=4, line_search_fn="strong_wolfe")},
    }))


if __name__ == "__main__":
    main()
