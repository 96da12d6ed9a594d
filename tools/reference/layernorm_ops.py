#!/usr/bin/python3
"""Writes PyTorch 1.13's layer_norm output and gradients for tensor/ops/nn_ops_test.cc:

    /usr/bin/python3 tools/reference/layernorm_ops.py > tensor/ops/testdata/layernorm_reference.txt

x[i][j] = sin(0.3 i + 0.7 j) * 3 + i over [4, 10] (row means 0..3), weight
w[j] = 1 + 0.1 j, bias b[j] = 0.05 j - 0.2, upstream dy[i][j] = cos(i - 0.4 j),
eps 1e-5. Lines: y, dx, dweight, dbias (9 significant digits).
"""
import math

import torch
import torch.nn.functional as F

ROWS, C = 4, 10
x = torch.tensor([[math.sin(0.3 * i + 0.7 * j) * 3 + i for j in range(C)] for i in range(ROWS)],
                 requires_grad=True)
w = torch.tensor([1 + 0.1 * j for j in range(C)], requires_grad=True)
b = torch.tensor([0.05 * j - 0.2 for j in range(C)], requires_grad=True)
dy = torch.tensor([[math.cos(i - 0.4 * j) for j in range(C)] for i in range(ROWS)])
y = F.layer_norm(x, [C], w, b, eps=1e-5)
y.backward(dy)
for name, t in (("y", y), ("dx", x.grad), ("dweight", w.grad), ("dbias", b.grad)):
    print(name, " ".join(f"{v:.9g}" for v in t.detach().reshape(-1).tolist()))
