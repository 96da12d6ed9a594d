"""Writes the PyTorch checkpoints that python/tests/serialization_test.py loads in ember
(python/tests/testdata/torch_*.pt). Every value is a formula of its position, so the
test knows them without PyTorch. Run with PyTorch 1.13 (Debian's python3-torch):

    /usr/bin/python3 tools/reference/torch_checkpoints.py python/tests/testdata
"""

import collections
import os
import sys

import torch


def values(*shape, dtype=torch.float32):
    """(i - n/2) / 8 at flat position i, in dtype (exact in every floating dtype here)."""
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.float64) - n // 2) / 8).reshape(shape).to(dtype)


def main(out):
    os.makedirs(out, exist_ok=True)
    linear = torch.nn.Linear(4, 3)
    with torch.no_grad():
        linear.weight.copy_(values(3, 4))
        linear.bias.copy_(values(3))
    torch.save(linear.state_dict(), os.path.join(out, "torch_state_dict.pt"))

    base = values(4, 6)
    checkpoint = {
        "model": collections.OrderedDict([("embed.weight", values(5, 2)), ("head.weight", values(5, 2))]),
        "iter_num": 7,
        "best_val_loss": 1.25,
        "config": {"n_layer": 2, "bias": False, "name": "tiny", "sizes": (3, 4), "none": None},
        "dtypes": {
            "float32": values(2, 3), "float64": values(2, 3, dtype=torch.float64),
            "float16": values(2, 3, dtype=torch.float16), "bfloat16": values(2, 3, dtype=torch.bfloat16),
            "int64": torch.arange(-3, 3).reshape(2, 3), "int32": torch.arange(-3, 3, dtype=torch.int32),
            "uint8": torch.arange(250, 256, dtype=torch.uint8), "bool": torch.tensor([True, False, True]),
        },
        "tied": [base, base],                   # one storage, written once
        "row": base[1],                         # a view of the same storage at an offset
        "column": base[:, 2],                   # and a strided one
        "transposed": base.t(),
        "scalar": torch.tensor(2.5),
        "empty": torch.zeros(0, 3),
        "parameter": torch.nn.Parameter(values(2, 2)),
        "frozen": torch.nn.Parameter(values(2), requires_grad=False),
        "dtype": torch.bfloat16,
        "device": torch.device("cpu"),
    }
    torch.save(checkpoint, os.path.join(out, "torch_checkpoint.pt"))
    print(f"wrote torch_state_dict.pt and torch_checkpoint.pt with PyTorch {torch.__version__} into {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "python/tests/testdata")
