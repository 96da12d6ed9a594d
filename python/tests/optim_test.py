"""ember.optim.LBFGS against PyTorch 1.13's (testdata/lbfgs_steps.json, written by
tools/reference/lbfgs_steps.py): the parameters and the first loss of each step (one
of 20 iterations on Rosenbrock's function, four of five on a least-squares fit; three of
each with the strong Wolfe line search) in float64, to 1e-10 relative; its arguments."""

import json
import os
import unittest

import numpy as np

import ember

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "lbfgs_steps.json")


def rosenbrock(p):
    x, y = p[0], p[1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


def least_squares(w, b):
    x = ember.arange(12, dtype=ember.float64).view(4, 3) / 7 - 0.5
    target = ember.tensor([[1.0, -2.0], [0.5, 0.25], [-1.0, 3.0], [2.0, 0.0]], dtype=ember.float64)
    return ((x @ w + b - target) ** 2).mean()


class LBFGSTest(unittest.TestCase):
    def run_steps(self, params, loss_fn, expected):
        opt = ember.optim.LBFGS(params, **expected["options"])
        for step in expected["steps"]:
            def closure():
                opt.zero_grad()
                loss = loss_fn(*params)
                loss.backward()
                return loss
            first = opt.step(closure)
            self.assertAlmostEqual(first.item(), step["loss"], delta=1e-10 * max(1.0, abs(step["loss"])))
            for p, q in zip(params, step["params"]):
                np.testing.assert_allclose(p.tolist(), q, rtol=1e-10, atol=1e-12)

    def test_against_pytorch(self):
        with open(FIXTURE) as f:
            fixture = json.load(f)
        start = ember.tensor([-1.5, 2.0], dtype=ember.float64, requires_grad=True)
        self.run_steps([start], rosenbrock, fixture["rosenbrock"])
        w = (ember.arange(6, dtype=ember.float64).view(3, 2) / 10).requires_grad_()
        b = ember.zeros(2, dtype=ember.float64, requires_grad=True)
        self.run_steps([w, b], least_squares, fixture["least_squares"])
        start = ember.tensor([-1.5, 2.0], dtype=ember.float64, requires_grad=True)
        self.run_steps([start], rosenbrock, fixture["rosenbrock_strong_wolfe"])
        w = (ember.arange(6, dtype=ember.float64).view(3, 2) / 10).requires_grad_()
        b = ember.zeros(2, dtype=ember.float64, requires_grad=True)
        self.run_steps([w, b], least_squares, fixture["least_squares_strong_wolfe"])

    def test_arguments(self):
        p = ember.zeros(2, requires_grad=True)
        with self.assertRaisesRegex(RuntimeError, "only 'strong_wolfe'"):
            ember.optim.LBFGS([p], line_search_fn="backtracking")
        with self.assertRaisesRegex(ValueError, "closure"):
            ember.optim.LBFGS([p]).step(None)
        opt = ember.optim.LBFGS([p], max_iter=7)
        self.assertEqual((opt.defaults["max_eval"], opt.param_groups[0]["history_size"]), (8, 100))


if __name__ == "__main__":
    unittest.main()
