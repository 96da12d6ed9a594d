"""The reference for models/mnist:train: the same classifiers, optimizers, losses and
schedule in PyTorch 1.13 on the same Fashion-MNIST or MNIST-digits files (--data_dir),
reporting the same figures.

  OMP_WAIT_POLICY=PASSIVE /usr/bin/python3 tools/reference/mnist_torch.py --model=mlp \
      --optimizer=sgd --epochs=5 --batch_size=32 --threads=1 --metrics_out=/tmp/torch.json

The models are built as models/mnist/classifier.h describes (PyTorch's default
initialisation); each epoch visits the training set in a shuffled order (torch.randperm
with a seeded generator; ember's order comes from its own generator, so the two runs
see the same data in different orders); batches are rows picked by index, as ember's
loader does on the calling thread. train_seconds counts the training loop only.
"""
import argparse
import gzip
import json
import os
import sys
import time

import openblas_core

openblas_core.ensure()  # before numpy and torch load OpenBLAS

import numpy as np
import torch
import torch.nn as nn


def read_idx(path):
    """An IDX file, plain or with ".gz" added (ember's LoadMnist reads either)."""
    opener, name = (open, path) if os.path.exists(path) else (gzip.open, path + ".gz")
    with opener(name, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(folder, prefix):
    images = read_idx(os.path.join(folder, prefix + "-images-idx3-ubyte"))
    labels = read_idx(os.path.join(folder, prefix + "-labels-idx1-ubyte"))
    x = torch.from_numpy(images.astype(np.float32) / 255.0).reshape(-1, 1, 28, 28)
    return x, torch.from_numpy(labels.astype(np.int64))


def make_model(name):
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 10))


DEFAULT_LR = {"sgd": 0.1, "momentum": 0.01, "rmsprop": 1e-3, "adam": 1e-3}


def make_optimizer(name, params, lr):
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if name == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr)
    return torch.optim.Adam(params, lr=lr)


def loss_of(kind, logits, y, reduction="mean"):
    """cross_entropy, or squared_error: the mean squared error of the softmax against the
    one-hot label (models/mnist/classifier.h)."""
    if kind == "cross_entropy":
        return nn.functional.cross_entropy(logits, y, reduction=reduction)
    per_row = ((logits.softmax(1) - nn.functional.one_hot(y, 10).float()) ** 2).mean(1)
    return per_row.mean() if reduction == "mean" else per_row.sum()


def evaluate(model, x, y, kind):
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(x), 1000):
            logits = model(x[start:start + 1000])
            loss += loss_of(kind, logits, y[start:start + 1000], reduction="sum").item()
            correct += (logits.argmax(1) == y[start:start + 1000]).sum().item()
    model.train()
    return loss / len(x), correct / len(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--optimizer", choices=sorted(DEFAULT_LR), default="sgd")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0, help="0: the same default as ember's")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data_dir", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--loss", choices=["cross_entropy", "squared_error"], default="cross_entropy")
    parser.add_argument("--metrics_out", default="")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    train_x, train_y = load(args.data_dir, "train")
    test_x, test_y = load(args.data_dir, "t10k")
    model = make_model(args.model)
    optimizer = make_optimizer(args.optimizer, model.parameters(), args.lr or DEFAULT_LR[args.optimizer])
    order_gen = torch.Generator().manual_seed(args.seed)
    train_seconds, examples = 0.0, 0
    for epoch in range(args.epochs):
        start = time.perf_counter()
        order = torch.randperm(len(train_x), generator=order_gen)
        loss_sum = 0.0
        for b in range(0, len(order), args.batch_size):
            idx = order[b:b + args.batch_size]
            loss = loss_of(args.loss, model(train_x[idx]), train_y[idx])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * len(idx)
        train_seconds += time.perf_counter() - start
        examples += len(order)
        test_loss, accuracy = evaluate(model, test_x, test_y, args.loss)
        print(f"epoch {epoch + 1}: train loss {loss_sum / len(order):.4f}, test loss {test_loss:.4f}, "
              f"test accuracy {100 * accuracy:.2f}%, {examples / train_seconds:.0f} images/s", file=sys.stderr)
    metrics = {"test_accuracy": accuracy, "test_loss": test_loss, "train_loss": loss_sum / len(order),
               "train_seconds": train_seconds, "examples_per_second": examples / train_seconds,
               "epochs": args.epochs}
    print(json.dumps(metrics))
    if args.metrics_out:
        with open(args.metrics_out, "w") as f:
            f.write(json.dumps(metrics) + "\n")


if __name__ == "__main__":
    main()
