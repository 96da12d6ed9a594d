"""The reference for models/bigram:train and models/makemore:train: the same names, the
same split, the same models and schedules in PyTorch 1.13, reporting the same figures.

  /usr/bin/python3 tools/reference/makemore_torch.py --model=counting
  /usr/bin/python3 tools/reference/makemore_torch.py --model=neural --steps=200
  /usr/bin/python3 tools/reference/makemore_torch.py --model=mlp --steps=200000

The names are read as ember's data::LoadNames reads them (each line of female.txt and
male.txt with trailing whitespace stripped, blank lines skipped, lowercased, merged,
deduplicated, sorted) and split as models/common/names.h splits them (name i: train
when i % 10 < 8, val when 8, test when 9); the vocabulary is '.' then the distinct
characters in code point order; each name gives one example per character and one for
the closing '.'. The counting bigram is deterministic and must equal ember's to
rounding; the trained models start from PyTorch's own random numbers, so they agree
with ember's in distribution (the val loss to a few hundredths), not bit for bit.
"""
import argparse
import json
import os
import sys
import time

import openblas_core

openblas_core.ensure()  # before numpy and torch load OpenBLAS

import torch
import torch.nn as nn
import torch.nn.functional as F


def load_splits(folder):
    names = set()
    for file in ("female.txt", "male.txt"):
        with open(os.path.join(folder, file), encoding="utf-8") as f:
            for line in f:
                line = line.rstrip()
                if line:
                    names.add(line.lower())
    names = sorted(names, key=lambda s: s.encode("utf-8"))
    chars = ["."] + sorted(set("".join(names)) - {"."})
    splits = {"train": [], "val": [], "test": []}
    for i, name in enumerate(names):
        splits["train" if i % 10 < 8 else "val" if i % 10 == 8 else "test"].append(name)
    return splits, chars


def examples(names, stoi, block_size):
    xs, ys = [], []
    for name in names:
        context = [0] * block_size
        for ch in list(name) + ["."]:
            xs.append(context)
            ys.append(stoi[ch])
            context = context[1:] + [stoi[ch]]
    return torch.tensor(xs), torch.tensor(ys)


class Mlp(nn.Module):
    def __init__(self, vocab, block_size, embedding, hidden):
        super().__init__()
        self.wte = nn.Embedding(vocab, embedding)
        self.hidden = nn.Linear(block_size * embedding, hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x):
        return self.head(torch.tanh(self.hidden(self.wte(x).view(x.shape[0], -1))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["counting", "neural", "mlp"], default="mlp")
    parser.add_argument("--names_dir", default="downloads/names")
    parser.add_argument("--smoothing", type=float, default=1)
    parser.add_argument("--steps", type=int, default=0, help="0: 200 (neural) or 200000 (mlp)")
    parser.add_argument("--lr", type=float, default=0, help="0: 50 (neural) or 0.1 (mlp)")
    parser.add_argument("--reg", type=float, default=0.01)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--block_size", type=int, default=3)
    parser.add_argument("--embedding", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2147483647)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    splits, chars = load_splits(args.names_dir)
    stoi = {c: i for i, c in enumerate(chars)}
    block = args.block_size if args.model == "mlp" else 1
    data = {k: examples(v, stoi, block) for k, v in splits.items()}
    vocab = len(chars)
    start = time.perf_counter()
    if args.model == "counting":
        counts = torch.full((vocab, vocab), float(args.smoothing), dtype=torch.float64)
        x, y = data["train"]
        counts.index_put_((x[:, 0], y), torch.ones(len(y), dtype=torch.float64), accumulate=True)
        log_probs = (counts / counts.sum(1, keepdim=True)).log().float()
        logits = lambda x: log_probs[x[:, 0]]
    elif args.model == "neural":
        w = torch.randn(vocab, vocab, requires_grad=True)
        x, y = data["train"]
        for step in range(args.steps or 200):
            loss = F.cross_entropy(w[x[:, 0]], y) + args.reg * (w ** 2).mean()
            w.grad = None
            loss.backward()
            with torch.no_grad():
                w -= (args.lr or 50) * w.grad
        logits = lambda x: w[x[:, 0]]
    else:
        model = Mlp(vocab, block, args.embedding, args.hidden)
        steps, lr = args.steps or 200000, args.lr or 0.1
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        x, y = data["train"]
        for step in range(steps):
            index = torch.randint(0, len(y), (args.batch_size,))
            loss = F.cross_entropy(model(x[index]), y[index])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.param_groups[0]["lr"] = lr if step < steps // 2 else lr / 10
            optimizer.step()
            if (step + 1) % 10000 == 0:
                print(f"step {step + 1}: batch loss {loss.item():.4f}", file=sys.stderr)
        logits = model
    seconds = time.perf_counter() - start
    with torch.no_grad():
        losses = {f"{k}_loss": F.cross_entropy(logits(x), y).item() for k, (x, y) in data.items()}
    print(json.dumps(dict(losses, train_seconds=seconds,
                          names={k: len(v) for k, v in splits.items()}, vocab="".join(chars))))


if __name__ == "__main__":
    main()
