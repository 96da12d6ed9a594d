#!/usr/bin/python3
"""Writes PyTorch 1.13's softmax, log_softmax and cross_entropy results (and their
gradients) for the fixed inputs that tensor/ops/softmax_test.cc rebuilds:

    /usr/bin/python3 tools/reference/softmax_ops.py > tensor/ops/testdata/softmax_reference.txt

Inputs: X[i][j] = sin(0.7 i + 1.3 j) * 4 over a [5, 11] matrix (row 3 shifted by
+500, a large-logit row), targets T (one ignored with -100), upstream gradient
DY[i][j] = cos(0.3 i - 0.9 j). Each line: a name, then values with 9 digits.
"""
import math

import torch
import torch.nn.functional as F

ROWS, COLS = 5, 11
X = torch.tensor([[math.sin(0.7 * i + 1.3 * j) * 4 + (500 if i == 3 else 0)
                   for j in range(COLS)] for i in range(ROWS)], dtype=torch.float32)
T = torch.tensor([3, 0, -100, 10, 7])
DY = torch.tensor([[math.cos(0.3 * i - 0.9 * j) for j in range(COLS)] for i in range(ROWS)])


def emit(name, t):
    print(name, " ".join(f"{v:.9g}" for v in t.detach().reshape(-1).tolist()))


for name, fn in (("softmax", F.softmax), ("log_softmax", F.log_softmax)):
    x = X.clone().requires_grad_()
    y = fn(x, dim=-1)
    y.backward(DY)
    emit(name, y)
    emit(name + "_grad", x.grad)

x = X.clone().requires_grad_()
loss = F.cross_entropy(x, T, ignore_index=-100)
(loss * 2.5).backward()  # an upstream gradient of 2.5
emit("cross_entropy", loss)
emit("cross_entropy_grad", x.grad)
