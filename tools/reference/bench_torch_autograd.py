#!/usr/bin/python3
"""PyTorch 1.13's autograd overhead on the graph of autograd/overhead_benchmark.cc:
25 rounds of y = tanh(y * w + b) - 0.5 on 16-element tensors (100 ops), a sum, and
backward. Prints the time per forward+backward and per op:

    OMP_NUM_THREADS=1 /usr/bin/python3 tools/reference/bench_torch_autograd.py
"""
import timeit

import openblas_core

openblas_core.ensure()  # before numpy and torch load OpenBLAS

import torch

torch.manual_seed(1)
x, w, b = (torch.randn(16, requires_grad=True) for _ in range(3))


def step():
    y = x
    for _ in range(25):
        y = torch.tanh(y * w + b) - 0.5
    y.sum().backward()


step()
runs = 2000
best = min(timeit.repeat(step, number=runs, repeat=5)) / runs
print(f"torch tiny graph forward+backward: {best * 1e6:.1f} us, {best * 1e6 / 101:.2f} us per op")
