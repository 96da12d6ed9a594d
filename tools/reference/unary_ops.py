#!/usr/bin/python3
"""Writes PyTorch 1.13's results for ember's unary tensor ops on fixed inputs.

    /usr/bin/python3 tools/reference/unary_ops.py > tensor/ops/testdata/unary_reference.txt

Each line: op name, dtype, then the outputs (as 9 significant digits) for INPUTS
(POSITIVE for log, sqrt, rsqrt, reciprocal, pow 1.7). The bf16 lines are the f32
result on the bf16-rounded inputs, rounded once to bf16: ember's semantics. (PyTorch
1.13's own bf16 gelu and pow round intermediates and land up to several bf16 ulps
away, e.g. gelu_tanh(-2.5) = -0.0146 instead of -0.0151.)
Backward lines give the gradient for an upstream gradient of UPSTREAM.
"""
import torch
import torch.nn.functional as F

INPUTS = [-6.0, -2.5, -1.0, -0.75, -0.1, 0.0, 0.1, 0.5, 1.0, 2.0, 3.75, 9.0]
POSITIVE = [1e-3, 0.1, 0.5, 1.0, 2.0, 3.75, 9.0, 100.0]
UPSTREAM = [0.5, -1.0, 2.0, 1.0, -0.25, 1.5, 1.0, -2.0, 0.75, 1.0, -1.0, 0.5]

FORWARD = {
    "neg": (torch.neg, INPUTS), "abs": (torch.abs, INPUTS), "exp": (torch.exp, INPUTS),
    "log": (torch.log, POSITIVE), "sqrt": (torch.sqrt, POSITIVE),
    "rsqrt": (torch.rsqrt, POSITIVE), "reciprocal": (torch.reciprocal, POSITIVE),
    "square": (torch.square, INPUTS), "tanh": (torch.tanh, INPUTS),
    "sigmoid": (torch.sigmoid, INPUTS), "relu": (torch.relu, INPUTS),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), INPUTS),
    "gelu_erf": (F.gelu, INPUTS),
    "pow_3": (lambda x: torch.pow(x, 3), INPUTS),
    "pow_1.7": (lambda x: torch.pow(x, 1.7), POSITIVE),
}
BACKWARD = {
    "relu_backward": torch.relu, "tanh_backward": torch.tanh, "sigmoid_backward": torch.sigmoid,
    "gelu_tanh_backward": lambda x: F.gelu(x, approximate="tanh"), "gelu_erf_backward": F.gelu,
}


def emit(name, dtype, values):
    print(name, dtype, " ".join(f"{v:.9g}" for v in values.float().tolist()))


for name, (fn, inputs) in FORWARD.items():
    emit(name, "f32", fn(torch.tensor(inputs)))
    emit(name, "bf16", fn(torch.tensor(inputs).bfloat16().float()).bfloat16())
for name, fn in BACKWARD.items():
    x = torch.tensor(INPUTS, requires_grad=True)
    fn(x).backward(torch.tensor(UPSTREAM))
    emit(name, "f32", x.grad)
