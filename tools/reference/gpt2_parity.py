#!/usr/bin/python3
"""PyTorch 1.13's numbers for a small GPT-2 (2 layers, 4 heads, 64 dims, the full
50257-token vocabulary, 16 positions) that models/gpt2/parity_test.cc rebuilds:

    /usr/bin/python3 tools/reference/gpt2_parity.py > models/gpt2/testdata/parity.txt

The weights are not stored: both sides compute them from one formula (Weight below),
in float64, rounded to float32. The model is nanoGPT's (names as GPT-2's, the head tied
to wte). For ids and targets [2, 16] it writes the loss, summaries and samples of the
logits, the loss and logit samples of the same forward under bf16 autocast, and for
every parameter its gradient's sum, its dot product with a fixed probe,
samples of it, and samples of the change one AdamW step makes (lr 1e-3, betas 0.9/0.95,
eps 1e-8, weight decay 0.1 on the matrices and embeddings only, as nanoGPT).
Lines: "<name> v1 v2 ...".
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from gpt2_torch import GPT

V, T, L, H, C = 50257, 16, 2, 4, 64
B = 2


def Weight(name, shape):
    """w[i] = a sin(0.7 i + s) + c: s from the name, a and c by kind (the C++ side
    has the same formula)."""
    n = math.prod(shape)
    s = sum(ord(ch) for ch in name) % 97
    i = torch.arange(n, dtype=torch.float64)
    wave = torch.sin(0.7 * i + s)
    if name.endswith(".bias"):
        a, c = 0.01, 0.0
    elif len(shape) == 1:  # LayerNorm weights
        a, c = 0.1, 1.0
    else:
        a, c = 0.02, 0.0
    return (a * wave + c).to(torch.float32).reshape(shape)


def Samples(n):
    """32 flat indices spread over n elements."""
    return [(k * 7919 + 13) % n for k in range(32)]


def emit(name, values):
    print(name, " ".join(f"{v:.9g}" for v in values))


torch.set_num_threads(1)
model = GPT(V, T, L, H, C)
with torch.no_grad():
    for name, p in model.named_parameters():
        p.copy_(Weight(name, tuple(p.shape)))
ids = torch.tensor([[(b * 7919 + t * 104729 + 3) % V for t in range(T)] for b in range(B)])
targets = torch.tensor([[(b * 31 + t * 50021 + 17) % V for t in range(T)] for b in range(B)])
logits = model(ids)
loss = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))
loss.backward()

emit("loss", [loss.item()])
flat = logits.detach().double().reshape(-1)
emit("logits.sum", [flat.sum().item()])
emit("logits.sumsq", [(flat * flat).sum().item()])
emit("logits.samples", flat[Samples(flat.numel())].tolist())
# The same forward under bf16 autocast (ember's --dtype=bf16), on the same weights.
with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
    logits16 = model(ids)
    loss16 = F.cross_entropy(logits16.float().reshape(-1, V), targets.reshape(-1))
flat16 = logits16.double().reshape(-1)
emit("bf16.loss", [loss16.item()])
emit("bf16.logits.samples", flat16[Samples(flat16.numel())].tolist())
before = {name: p.detach().clone() for name, p in model.named_parameters()}
for name, p in model.named_parameters():
    g = p.grad.double().reshape(-1)
    probe = torch.sin(1.3 * torch.arange(g.numel(), dtype=torch.float64))
    emit("grad.sum." + name, [g.sum().item()])
    emit("grad.probe." + name, [(g * probe).sum().item()])
    emit("grad.samples." + name, g[Samples(g.numel())].tolist())

decay = [p for p in model.parameters() if p.dim() >= 2]
no_decay = [p for p in model.parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
opt.step()
for name, p in model.named_parameters():
    delta = (p.detach().double() - before[name].double()).reshape(-1)
    emit("adamw.delta." + name, delta[Samples(delta.numel())].tolist())
