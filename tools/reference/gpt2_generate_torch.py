"""The reference for `generate`'s speed: PyTorch sampling tokens one at a time at batch 1
from a GPT-2 of a preset's shape (random weights: the time does not depend on them), with
a key/value cache (each new token costs one position, as ember's --kv_cache) or without
(nanoGPT's generate: the whole window again for every token).

  /usr/bin/python3 tools/reference/gpt2_generate_torch.py --preset=small --tokens=200
  python3 tools/reference/gpt2_generate_torch.py --device=cuda --preset=small [--bf16]   # GPU machine

Prints one JSON line: tokens/s with and without the cache, and whether greedy decoding
gave the same tokens both ways (it must: the cache changes the work, not the result).
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(__file__))
from gpt2_torch import GPT  # noqa: E402

PRESETS = {  # vocab, positions, layers, heads, width (models/gpt2/model.cc)
    "gpt2": (50257, 1024, 12, 12, 768),
    "small": (50257, 256, 6, 6, 384),
    "demo": (50257, 64, 3, 4, 128),
}


def step(model, ids, cache):
    """Logits of the last position of ids [1, t]; with a cache (a list of per-layer
    (k, v) or None), only the positions after the cache's run and join it."""
    start = 0 if cache is None or cache[0] is None else cache[0][0].shape[2]
    new = ids[:, start:]
    x = model.wte(new) + model.wpe(torch.arange(start, ids.shape[1], device=ids.device))
    for i, block in enumerate(model.h):
        h = block.ln_1(x)
        b, t, c = h.shape
        heads = block.attn.heads
        q, k, v = block.attn.c_attn(h).split(c, dim=2)
        q, k, v = (z.view(b, t, heads, c // heads).transpose(1, 2) for z in (q, k, v))
        if cache is not None:
            if cache[i] is not None:
                k = torch.cat([cache[i][0], k], dim=2)
                v = torch.cat([cache[i][1], v], dim=2)
            cache[i] = (k, v)
        # Queries at positions start.. attend to every key up to their own.
        mask = torch.ones(t, k.shape[2], dtype=torch.bool, device=ids.device).tril(k.shape[2] - t)
        if hasattr(F, "scaled_dot_product_attention"):  # PyTorch 2's fused kernel
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        else:  # PyTorch 1.13 (this machine's)
            att = (q @ k.transpose(-2, -1) / (c // heads) ** 0.5).masked_fill(~mask, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        x = x + block.attn.c_proj(y.transpose(1, 2).reshape(b, t, c))
        x = x + block.mlp(block.ln_2(x))
    return (model.ln_f(x[:, -1]) @ model.wte.weight.t()).float()


def generate(model, tokens, positions, use_cache, sync):
    ids = torch.zeros(1, 1, dtype=torch.long, device=next(model.parameters()).device)
    cache = [None] * len(model.h) if use_cache else None
    start = time.perf_counter()
    for _ in range(tokens):
        if ids.shape[1] > positions:  # the window is full: drop the oldest (and the cache)
            ids = ids[:, -positions:]
            cache = [None] * len(model.h) if use_cache else None
        logits = step(model, ids, cache)
        ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
    sync()
    return ids[0, 1:].tolist(), tokens / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="small", choices=sorted(PRESETS))
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--bf16", action="store_true", help="under bf16 autocast")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--cache_only", action="store_true",
                        help="skip the run without the key/value cache (slow at 124M)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    vocab, positions, layers, heads, width = PRESETS[args.preset]
    model = GPT(vocab, positions, layers, heads, width).to(args.device).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
    sync = torch.cuda.synchronize if args.device != "cpu" else (lambda: None)
    autocast = torch.autocast("cuda" if args.device != "cpu" else "cpu", dtype=torch.bfloat16,
                              enabled=args.bf16)
    with torch.no_grad(), autocast:
        generate(model, 8, positions, True, sync)  # warm-up
        cached, cached_rate = generate(model, args.tokens, positions, True, sync)
        plain, plain_rate = (cached, 0.0) if args.cache_only else generate(
            model, args.tokens, positions, False, sync)
    print(json.dumps({"preset": args.preset, "device": args.device, "bf16": args.bf16, "tokens": args.tokens,
                      "tokens_per_second_kv_cache": round(cached_rate, 1),
                      "tokens_per_second_no_cache": round(plain_rate, 1),
                      "same_tokens": cached == plain}))


if __name__ == "__main__":
    main()
