#!/usr/bin/python3
"""Writes torch.optim.AdamW's parameter trajectory for kernels/adamw_test.cc:

    /usr/bin/python3 tools/reference/adamw_steps.py > kernels/testdata/adamw_reference.txt

A float32 parameter of 37 elements p0[i] = sin(i) starts the run; at step t the
gradient is g[i] = cos(0.5 i + t) * (1 + i % 3) (a few elements are zero). Line t
(1..10) holds the parameter after step t, 9 significant digits.
"""
import math

import torch

N, STEPS = 37, 10
p = torch.tensor([math.sin(i) for i in range(N)], dtype=torch.float32, requires_grad=True)
opt = torch.optim.AdamW([p], lr=1e-2, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
for t in range(1, STEPS + 1):
    g = torch.tensor([0.0 if i % 11 == 0 else math.cos(0.5 * i + t) * (1 + i % 3)
                      for i in range(N)], dtype=torch.float32)
    p.grad = g
    opt.step()
    print(" ".join(f"{v:.9g}" for v in p.detach().tolist()))
