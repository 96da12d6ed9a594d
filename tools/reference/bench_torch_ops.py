#!/usr/bin/python3
"""Times PyTorch 1.13 on the shapes of kernels/cpu/nn_benchmark.cc, on 2 threads:

    OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=2 /usr/bin/python3 tools/reference/bench_torch_ops.py

(OMP_WAIT_POLICY=PASSIVE keeps PyTorch's OpenMP and OpenBLAS threads from
busy-waiting against each other on 2 cores.) Prints the median time per call in us.
"""

import openblas_core

openblas_core.ensure()  # before numpy and torch load OpenBLAS

import torch
import torch.nn.functional as F
from timing import median_seconds

torch.set_num_threads(2)
torch.manual_seed(0)


def report(name, fn):
    print(f"{name:40s} {median_seconds(fn) * 1e6:12.1f} us")


for n in (768, 3072, 50257):
    x = torch.randn(256, n)
    report(f"softmax_forward 256x{n}", lambda: torch.softmax(x, dim=-1))

logits = torch.randn(256, 50257, requires_grad=True)
targets = torch.randint(0, 50257, (256,))


def cross_entropy_forward_backward():
    logits.grad = None
    F.cross_entropy(logits, targets).backward()


report("cross_entropy_forward_backward 256x50257", cross_entropy_forward_backward)

x = torch.randn(256, 768, requires_grad=True)
w = torch.randn(768, requires_grad=True)
b = torch.randn(768, requires_grad=True)
report("layer_norm_forward 256x768", lambda: F.layer_norm(x.detach(), [768], w.detach(), b.detach()))
y = F.layer_norm(x, [768], w, b)
dy = torch.randn(256, 768)
report("layer_norm_backward 256x768",
       lambda: torch.autograd.grad(y, (x, w, b), dy, retain_graph=True))

g = torch.randn(256, 3072, requires_grad=True)
report("gelu_tanh_forward 256x3072", lambda: F.gelu(g.detach(), approximate="tanh"))
gy = F.gelu(g, approximate="tanh")
gdy = torch.randn(256, 3072)
report("gelu_tanh_backward 256x3072", lambda: torch.autograd.grad(gy, g, gdy, retain_graph=True))
