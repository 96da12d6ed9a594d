#!/usr/bin/python3
"""Writes PyTorch 1.13's outputs and gradients for the layers and losses that
nn/parity_test.cc rebuilds from the same numbers:

    /usr/bin/python3 tools/reference/nn_layers.py > nn/testdata/layers.txt

A GPT-2 block (nanoGPT's names: ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc,
mlp.c_proj) of width 8 with 2 heads on x [2, 5, 8], float32; then the losses; then a
small CNN as a torch.nn.Sequential (the spec CNN_SPEC in nn/parity_test.cc builds the
same one), a padded overlapping max pool, and Embedding. Lines: "shape.<name>" and
"<name>" for state dicts and inputs, "<case>.out", "<case>.grad.<name>". A case's loss
is sum(y * w) for fixed weights w.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from gpt2_torch import Block

torch.manual_seed(11)
C, HEADS = 8, 2


def emit(name, t):
    print(name, " ".join(f"{v:.9g}" for v in t.detach().reshape(-1).tolist()))


def emit_tensor(name, t):
    print("shape." + name, " ".join(str(s) for s in t.shape))
    emit(name, t)


block = Block(C, HEADS)
with torch.no_grad():  # LayerNorm parameters away from their ones / zeros
    for ln in (block.ln_1, block.ln_2):
        ln.weight.add_(0.1 * torch.randn(C))
        ln.bias.add_(0.1 * torch.randn(C))
for name, t in block.state_dict().items():
    emit_tensor(name, t)
x = torch.randn(2, 5, C, requires_grad=True)
w = torch.randn(2, 5, C)
emit_tensor("x", x)
emit_tensor("w", w)
y = block(x)
(y * w).sum().backward()
emit("block.out", y)
emit("block.grad.x", x.grad)
for name, p in block.named_parameters():
    emit("block.grad." + name, p.grad)

# Losses on logits [6, 5] with targets (one ignored).
logits = torch.randn(6, 5, requires_grad=True)
targets = torch.tensor([1, 0, 4, -100, 2, 2])
emit_tensor("logits", logits)
print("targets", " ".join(str(v) for v in targets.tolist()))
probe = torch.randn(6, 5)
emit_tensor("probe", probe)
cases = {
    "cross_entropy": lambda z: F.cross_entropy(z, targets),
    "cross_entropy_smoothing": lambda z: F.cross_entropy(z, targets, label_smoothing=0.1),
    "nll": lambda z: F.nll_loss(F.log_softmax(z, dim=-1), targets),
    "bce_with_logits": lambda z: F.binary_cross_entropy_with_logits(z, torch.sigmoid(probe)),
    "mse": lambda z: F.mse_loss(z, probe),
}
for case, fn in cases.items():
    z = logits.detach().clone().requires_grad_()
    loss = fn(z)
    loss.backward()
    emit(case + ".out", loss)
    emit(case + ".grad.logits", z.grad)

# A small CNN: every layer kind that the block above does not use.
cnn = nn.Sequential(
    nn.Conv2d(2, 3, 3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0), dilation=(1, 2)),
    nn.Tanh(),
    nn.Flatten(),
    nn.Linear(16, 5),
    nn.GELU(),
    nn.Sigmoid(),
    nn.Linear(5, 4, bias=False),
    nn.Softmax(dim=-1),
)
for name, t in cnn.state_dict().items():
    emit_tensor("cnn." + name, t)
x = torch.randn(2, 2, 8, 8, requires_grad=True)
w = torch.randn(2, 4)
emit_tensor("cnn_x", x)
emit_tensor("cnn_w", w)
y = cnn(x)
(y * w).sum().backward()
emit("cnn.out", y)
emit("cnn.grad.x", x.grad)
for name, p in cnn.named_parameters():
    emit("cnn.grad." + name, p.grad)

# Max pooling with padding and overlapping windows (3x3, stride 2, padding 1).
x = torch.randn(1, 2, 7, 6, requires_grad=True)
w = torch.randn(1, 2, 4, 3)
emit_tensor("pool_x", x)
emit_tensor("pool_w", w)
y = F.max_pool2d(x, 3, stride=2, padding=1)
(y * w).sum().backward()
emit("pool.out", y)
emit("pool.grad.x", x.grad)

# Embedding with a repeated id.
embedding = nn.Embedding(6, 4)
emit_tensor("embedding.weight", embedding.weight)
ids = torch.tensor([[1, 5, 1], [0, 1, 3]])
print("embedding_ids", " ".join(str(v) for v in ids.reshape(-1).tolist()))
w = torch.randn(2, 3, 4)
emit_tensor("embedding_w", w)
y = embedding(ids)
(y * w).sum().backward()
emit("embedding.out", y)
emit("embedding.grad.weight", embedding.weight.grad)
