#!/usr/bin/python3
"""Times PyTorch 1.13 on the shapes of kernels/cpu/conv_benchmark.cc, on 2 threads:

    OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=2 /usr/bin/python3 tools/reference/bench_torch_conv.py

Prints the median time per call in ms (backward: the input, weight and bias gradients).
"""

import openblas_core

openblas_core.ensure()  # before numpy and torch load OpenBLAS

import torch
import torch.nn.functional as F
from timing import median_seconds

torch.set_num_threads(2)
torch.manual_seed(0)


def median_ms(fn):
    return median_seconds(fn, min_seconds=2.0) * 1e3


for n, c, o, size in ((64, 1, 32, 28), (64, 32, 64, 14)):
    x = torch.randn(n, c, size, size, requires_grad=True)
    w = torch.randn(o, c, 3, 3, requires_grad=True)
    b = torch.randn(o, requires_grad=True)
    y = F.conv2d(x, w, b, padding=1)
    dy = torch.randn_like(y)
    name = f"{n}/{c}/{o}/{size}"
    with torch.no_grad():
        print(f"conv2d_forward {name:16s} {median_ms(lambda: F.conv2d(x, w, b, padding=1)):9.3f} ms")
    backward = lambda: torch.autograd.grad(y, (x, w, b), dy, retain_graph=True)
    print(f"conv2d_backward {name:15s} {median_ms(backward):9.3f} ms")

for n, c, size in ((64, 32, 28), (64, 64, 14)):
    x = torch.randn(n, c, size, size, requires_grad=True)
    def pool():
        y = F.max_pool2d(x, 2)
        torch.autograd.grad(y, x, y)
    print(f"max_pool2d_forward_backward {n}/{c}/{size:<8d} {median_ms(pool):9.3f} ms")
