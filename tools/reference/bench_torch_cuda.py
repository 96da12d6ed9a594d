#!/usr/bin/env python3
"""Times PyTorch (2.11 on the GPU machine) on the shapes of kernels/cuda/cuda_benchmark.cc:

    python3 tools/reference/bench_torch_cuda.py [--json=OUT]

f32 (bf16 in the rows named so), TF32 off but in the matmul rows that end in /1, each op timed with CUDA events
over 20 calls after 3 warm-up calls; the median is reported, with the same byte and
flop counts as the C++ benchmark, so the two tables compare row by row.
"""

import argparse
import json
import statistics

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--json", default="", help="also write the rows here as JSON")
args = parser.parse_args()

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")
ROWS, C = 8 * 1024, 768


def median_ms(fn, calls=20, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(calls):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def rand(*shape, lo=-1.0, hi=1.0):
    return torch.empty(*shape, device=dev).uniform_(lo, hi)


rows = []


def report(name, fn, nbytes=None, flops=None):
    ms = median_ms(fn)
    row = {"name": name, "ms": ms}
    if nbytes:
        row["GB/s"] = nbytes / ms / 1e6
    if flops:
        row["TFLOP/s"] = flops / ms / 1e9
    rows.append(row)
    rate = f"{row['GB/s']:8.0f} GB/s" if nbytes else f"{row['TFLOP/s']:8.1f} TFLOP/s"
    print(f"{name:36s} {ms * 1e3:10.1f} us  {rate}")


for n in (ROWS * C, ROWS * 4 * C):
    x, y = rand(n), rand(n)
    report(f"BM_Copy/{n}", lambda: y.copy_(x), nbytes=2 * n * 4)

xt = rand(C, ROWS)
out = torch.empty(ROWS, C, device=dev)
report("BM_CopyCastStrided", lambda: out.copy_(xt.t()), nbytes=2 * ROWS * C * 4)

h = rand(ROWS * 4 * C)
report("BM_GeluTanh", lambda: F.gelu(h, approximate="tanh"), nbytes=2 * h.numel() * 4)
gy = rand(h.numel())
report("BM_GeluTanhBackward",
       lambda: torch.ops.aten.gelu_backward(gy, h, approximate="tanh"), nbytes=3 * h.numel() * 4)

a, bias = rand(ROWS, C), rand(C)
report("BM_AddBroadcastRow", lambda: a + bias, nbytes=2 * ROWS * C * 4)
report("BM_SumRows", lambda: a.sum(dim=1), nbytes=ROWS * C * 4)
report("BM_SumColumns", lambda: a.sum(dim=0), nbytes=ROWS * C * 4)

att = rand(8 * 12 * 1024, 1024)
report("BM_Softmax", lambda: torch.softmax(att, dim=-1), nbytes=2 * att.numel() * 4)

logits = rand(1024, 50257, lo=-5, hi=5).requires_grad_()
targets = (torch.arange(1024, device=dev) * 7919) % 50257


def cross_entropy():
    loss = F.cross_entropy(logits, targets)
    (g,) = torch.autograd.grad(loss, logits)
    return g


report("BM_CrossEntropy", cross_entropy, nbytes=3 * logits.numel() * 4)

w, b = rand(C), rand(C)
report("BM_LayerNormForward", lambda: F.layer_norm(a, (C,), w, b, 1e-5), nbytes=2 * ROWS * C * 4)
ln_x = a.clone().requires_grad_()
ln_w, ln_b = w.clone().requires_grad_(), b.clone().requires_grad_()
ln_y = F.layer_norm(ln_x, (C,), ln_w, ln_b, 1e-5)
dy = rand(ROWS, C)
report("BM_LayerNormBackward",
       lambda: torch.autograd.grad(ln_y, (ln_x, ln_w, ln_b), dy, retain_graph=True),
       nbytes=3 * ROWS * C * 4)

wte = rand(50257, C).requires_grad_()
ids = (torch.arange(ROWS, device=dev) * 104729) % 50257


def embedding():
    out = F.embedding(ids, wte)
    return torch.autograd.grad(out, wte, out)


report("BM_Embedding", embedding, nbytes=4 * ROWS * C * 4)

# One layer's causal attention, as BM_Attention{Forward,Backward}: 8 x 12 heads, T = 1024,
# d = 64; PyTorch picks its fused kernel (memory-efficient attention for f32).
HEADS, T, D = 8 * 12, 1024, 64
aq, ak, av = (rand(8, 12, T, D).requires_grad_() for _ in range(3))
report("BM_AttentionForward", lambda: F.scaled_dot_product_attention(aq, ak, av, is_causal=True),
       flops=2.0 * HEADS * T * T * D)
ay = F.scaled_dot_product_attention(aq, ak, av, is_causal=True)
ady = rand(8, 12, T, D)
report("BM_AttentionBackward", lambda: torch.autograd.grad(ay, (aq, ak, av), ady, retain_graph=True),
       flops=4.0 * HEADS * T * T * D)
# bf16, as BM_Attention{Forward,Backward}Bf16 (PyTorch picks flash attention).
bq, bk, bv = (t.detach().bfloat16().requires_grad_() for t in (aq, ak, av))
report("BM_AttentionForwardBf16", lambda: F.scaled_dot_product_attention(bq, bk, bv, is_causal=True),
       flops=2.0 * HEADS * T * T * D)
by = F.scaled_dot_product_attention(bq, bk, bv, is_causal=True)
bdy = ady.bfloat16()
report("BM_AttentionBackwardBf16", lambda: torch.autograd.grad(by, (bq, bk, bv), bdy, retain_graph=True),
       flops=4.0 * HEADS * T * T * D)

n = 124475904
p, g, m, v = rand(n), rand(n), rand(n), rand(n, lo=0.0, hi=1.0)
step = torch.tensor(10.0, device=dev)


def adamw():
    torch._fused_adamw_([p], [g], [m], [v], [], [step], lr=6e-4, beta1=0.9, beta2=0.95,
                        weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=False)


report("BM_AdamW (fused)", adamw, nbytes=7 * n * 4)

for (mm, k, nn, transposed) in ((ROWS, C, 3 * C, 1), (ROWS, C, 4 * C, 1), (ROWS, 4 * C, C, 1),
                                (ROWS, C, 50257, 1), (4096, 4096, 4096, 0)):
    A = rand(mm, k)
    B = rand(nn, k) if transposed else rand(k, nn)
    fn = (lambda A=A, B=B: A @ B.t()) if transposed else (lambda A=A, B=B: A @ B)
    for tf32 in (0, 1):  # the last argument: f32, or TF32 tensor cores (allow_tf32)
        torch.backends.cuda.matmul.allow_tf32 = bool(tf32)
        report(f"BM_Matmul/{mm}/{k}/{nn}/{transposed}/{tf32}", fn, flops=2.0 * mm * k * nn)
torch.backends.cuda.matmul.allow_tf32 = False

cx, cw, cb = rand(64, 16, 14, 14), rand(32, 16, 5, 5), rand(32)
report("BM_Conv2d", lambda: F.conv2d(cx, cw, cb, padding=2), flops=2.0 * 64 * 32 * 14 * 14 * 16 * 25)

tk = rand(50257)
report("BM_TopK", lambda: torch.topk(tk, 40), nbytes=50257 * 4)

if args.json:
    with open(args.json, "w") as f:
        json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "rows": rows}, f,
                  indent=1)
