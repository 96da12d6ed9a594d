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

and PyTorch at its fastest, as nanoGPT trains: `--bf16 --compile` (torch.compile of the
model, PyTorch 2 only, and the fused CUDA AdamW). The median skips the warm-up steps
(1, or 3 with --compile: the first steps compile). On CUDA the JSON has the peak of
torch.cuda.max_memory_allocated.
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
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile the model (PyTorch 2) and use the fused AdamW on CUDA")
    args = parser.parse_args()
    if args.compile and not hasattr(torch, "compile"):
        sys.exit(f"--compile needs PyTorch 2 or later (torch.compile); this is {torch.__version__}")
    warmup = 3 if args.compile else 1
    if args.steps <= warmup:
        sys.exit(f"--steps must be more than the {warmup} warm-up step(s), got {args.steps}")
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
    fused = {"fused": True} if args.compile and args.device != "cpu" else {}
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                                  lr=1e-4, betas=(0.9, 0.95), **fused)
    step_model = torch.compile(model) if args.compile else model
    times = []
    for step in range(args.steps):
        ids = torch.randint(0, V, (args.batch_size, args.seq_len + 1), device=args.device)
        start = time.perf_counter()
        with torch.autocast("cuda" if args.device != "cpu" else "cpu",
                            dtype=torch.bfloat16) if args.bf16 else contextlib.nullcontext():
            logits = step_model(ids[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, V).float(), ids[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if args.device != "cpu":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        print(f"step {step + 1}: loss {loss.item():.4f}, {times[-1]:.3f} s", file=sys.stderr)
    median = statistics.median(times[warmup:])
    result = {"median_step_seconds": median, "tokens_per_second": args.batch_size * args.seq_len / median,
              "step_seconds": times, "threads": args.threads, "device": args.device, "bf16": args.bf16,
              "tf32": args.tf32, "compile": args.compile, "torch": torch.__version__}
    if args.device != "cpu":
        result["peak_memory_bytes"] = torch.cuda.max_memory_allocated()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
