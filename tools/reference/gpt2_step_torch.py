"""The reference for GPT-2 124M's training step: PyTorch 1.13 on this machine, the same
workload as ember's `train --model=gpt2 --batch_size=4 --seq_len=64` (float32, AdamW
with weight decay on the matrices, gradient clipping at 1, the head tied to wte).

  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tools/reference/gpt2_step_torch.py --steps=6

Prints each step's seconds and the median of all but the first (the warm-up) as JSON.
`--bf16` runs the forward under torch.autocast(dtype=torch.bfloat16) (ember's
`--dtype=bf16`), on the CPU too.
On the GPU machine (PyTorch 2.11), the same step on CUDA: f32 with TF32 off (ember's
`train --notf32`), f32 with TF32 matmuls (ember's default on a GPU), or under bf16
autocast:

  python3 tools/reference/gpt2_step_torch.py --device=cuda --batch_size=16 --seq_len=1024 [--tf32|--bf16]
"""
import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import openblas_core

openblas_core.ensure()  # before numpy and torch load OpenBLAS

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from gpt2_torch import GPT  # noqa: E402

V, T, L, H, C = 50257, 1024, 12, 12, 768


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--seq_len", type=int, default=64)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--bf16", action="store_true", help="the forward under bf16 autocast")
    parser.add_argument("--tf32", action="store_true", help="CUDA: f32 matmuls on TF32 tensor cores")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.manual_seed(0)
    model = GPT(V, T, L, H, C).to(args.device)
    with torch.no_grad():  # GPT-2's initialisation, as ember's (models/gpt2's InitGpt2)
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * L) if name.endswith("c_proj.weight") else 0.02
                p.normal_(0, std)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                                  lr=1e-4, betas=(0.9, 0.95))
    times = []
    for step in range(args.steps):
        ids = torch.randint(0, V, (args.batch_size, args.seq_len + 1), device=args.device)
        start = time.perf_counter()
        with torch.autocast("cuda" if args.device != "cpu" else "cpu",
                            dtype=torch.bfloat16) if args.bf16 else contextlib.nullcontext():
            logits = model(ids[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, V).float(), ids[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if args.device != "cpu":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        print(f"step {step + 1}: loss {loss.item():.4f}, {times[-1]:.3f} s", file=sys.stderr)
    print(json.dumps({"median_step_seconds": statistics.median(times[1:]), "step_seconds": times,
                      "threads": args.threads, "device": args.device, "bf16": args.bf16,
                      "tf32": args.tf32}))


if __name__ == "__main__":
    main()
