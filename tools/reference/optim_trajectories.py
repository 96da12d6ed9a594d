#!/usr/bin/python3
"""Writes torch.optim's parameter trajectories (PyTorch 1.13, float64) on a fixed
least-squares problem that optim/optimizer_test.cc rebuilds:

    /usr/bin/python3 tools/reference/optim_trajectories.py > optim/testdata/trajectories.txt

Problem: loss = mean((X W + b - Y)^2) with X [4, 3], Y [4, 2] and the starting W [3, 2],
b [2] given by sin/cos formulas below. Each configuration runs 10 steps; after step k
(1-based) the lines "<config>.<k>.W" and "<config>.<k>.b" hold the parameters. The
"groups" configuration puts W and b in two parameter groups with their own lr and
weight decay.
"""
import math

import torch

X = torch.tensor([[math.sin(1.0 + i + 0.5 * j) for j in range(3)] for i in range(4)],
                 dtype=torch.float64)
Y = torch.tensor([[math.cos(0.3 * i - 0.7 * j) for j in range(2)] for i in range(4)],
                 dtype=torch.float64)
W0 = torch.tensor([[0.1 * (i - j) + 0.05 for j in range(2)] for i in range(3)],
                  dtype=torch.float64)
B0 = torch.tensor([0.2, -0.1], dtype=torch.float64)

CONFIGS = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1,
                                              weight_decay=0.01),
    "sgd_nesterov": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                              weight_decay=0.01),
    "rmsprop": lambda p: torch.optim.RMSprop(p, lr=0.01),
    "rmsprop_centered": lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-6,
                                                      weight_decay=0.01, momentum=0.5,
                                                      centered=True),
    "adam": lambda p: torch.optim.Adam(p, lr=0.05),
    "adam_decay": lambda p: torch.optim.Adam(p, lr=0.05, betas=(0.8, 0.99), eps=1e-6,
                                             weight_decay=0.1),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1),
    "groups": lambda p: torch.optim.AdamW([{"params": [p[0]], "lr": 0.05, "weight_decay": 0.1},
                                           {"params": [p[1]], "lr": 0.02,
                                            "weight_decay": 0.0}]),
}


def emit(name, t):
    print(name, " ".join(f"{v:.17g}" for v in t.detach().reshape(-1).tolist()))


for config, make in CONFIGS.items():
    w = W0.clone().requires_grad_()
    b = B0.clone().requires_grad_()
    opt = make([w, b])
    for step in range(1, 11):
        opt.zero_grad()
        loss = ((X @ w + b - Y) ** 2).mean()
        loss.backward()
        opt.step()
        emit(f"{config}.{step}.W", w)
        emit(f"{config}.{step}.b", b)
