#!/usr/bin/python3
"""Writes PyTorch 1.13's loss and gradients for a small composite graph that
autograd/parity_test.cc rebuilds from the same numbers:

    /usr/bin/python3 tools/reference/autograd_composite.py > autograd/testdata/composite.txt

The graph (float32): a pre-LayerNorm transformer block with causal attention
(2 heads) and a GELU (tanh) MLP, then a linear head and the mean cross entropy over
targets with one ignored position. Every parameter and the input x require
gradients. Each line: a name, then values with 9 significant digits (targets and
shapes as integers); inputs first, then "loss" and "grad.<name>" lines.
"""
import math

import torch
import torch.nn.functional as F

torch.manual_seed(7)
B, T, C, HEADS, HIDDEN, CLASSES = 2, 4, 8, 2, 32, 10


def param(*shape, scale=0.3):
    return (torch.randn(*shape) * scale).requires_grad_()


P = {
    "x": param(B, T, C, scale=1.0),
    "ln1.weight": (1 + 0.1 * torch.randn(C)).requires_grad_(),
    "ln1.bias": param(C, scale=0.1),
    "attn.w_qkv": param(C, 3 * C),
    "attn.b_qkv": param(3 * C, scale=0.1),
    "attn.w_proj": param(C, C),
    "attn.b_proj": param(C, scale=0.1),
    "ln2.weight": (1 + 0.1 * torch.randn(C)).requires_grad_(),
    "ln2.bias": param(C, scale=0.1),
    "mlp.w_fc": param(C, HIDDEN),
    "mlp.b_fc": param(HIDDEN, scale=0.1),
    "mlp.w_proj": param(HIDDEN, C),
    "mlp.b_proj": param(C, scale=0.1),
    "head.weight": param(C, CLASSES),
}
TARGETS = torch.randint(0, CLASSES, (B, T))
TARGETS[1, 2] = -100


def heads(t):  # [B, T, C] -> [B, HEADS, T, C / HEADS]
    return t.view(B, T, HEADS, C // HEADS).transpose(1, 2)


def forward(p):
    x = p["x"]
    h = F.layer_norm(x, (C,), p["ln1.weight"], p["ln1.bias"])
    q, k, v = (h @ p["attn.w_qkv"] + p["attn.b_qkv"]).split(C, dim=-1)
    q, k, v = heads(q), heads(k), heads(v)
    scores = q @ k.transpose(-2, -1) / math.sqrt(C // HEADS)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)
    y = F.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
    y = y.transpose(1, 2).reshape(B, T, C)
    x = x + y @ p["attn.w_proj"] + p["attn.b_proj"]
    h = F.layer_norm(x, (C,), p["ln2.weight"], p["ln2.bias"])
    m = F.gelu(h @ p["mlp.w_fc"] + p["mlp.b_fc"], approximate="tanh")
    x = x + m @ p["mlp.w_proj"] + p["mlp.b_proj"]
    logits = x @ p["head.weight"]
    return F.cross_entropy(logits.view(-1, CLASSES), TARGETS.view(-1), ignore_index=-100)


def emit(name, t):
    print(name, " ".join(f"{v:.9g}" for v in t.detach().reshape(-1).tolist()))


loss = forward(P)
loss.backward()
for name, t in P.items():
    print("shape." + name, " ".join(str(s) for s in t.shape))
    emit(name, t)
print("targets", " ".join(str(v) for v in TARGETS.reshape(-1).tolist()))
emit("loss", loss)
for name, t in P.items():
    emit("grad." + name, t.grad)
