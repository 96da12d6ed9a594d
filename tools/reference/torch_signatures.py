"""Writes python/tests/testdata/torch_signatures.json: the documented parameters of the
PyTorch callables that python/tests/signatures_test.py walks on ember (DataLoader, save,
load, the optimizers, the layers), as PyTorch 1.13 declares them. The recurrent layers
declare (*args, **kwargs) in code; their documented parameters are listed here.

    /usr/bin/python3 tools/reference/torch_signatures.py python/tests/testdata/torch_signatures.json
"""

import inspect
import json
import sys

import torch
from torch import nn, optim
from torch.utils import data

RNN_PARAMETERS = {
    "RNN": ["input_size", "hidden_size", "num_layers", "nonlinearity", "bias", "batch_first", "dropout",
            "bidirectional", "device", "dtype"],
    "LSTM": ["input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional",
             "proj_size", "device", "dtype"],
    "GRU": ["input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional", "device",
            "dtype"],
}

CALLABLES = {
    "utils.data.DataLoader": data.DataLoader,
    "save": torch.save,
    "load": torch.load,
    **{f"optim.{name}": getattr(optim, name) for name in ["SGD", "Adam", "AdamW", "RMSprop", "LBFGS"]},
    **{f"optim.lr_scheduler.{name}": getattr(optim.lr_scheduler, name)
       for name in ["StepLR", "CosineAnnealingLR", "LambdaLR"]},
    **{f"nn.{name}": getattr(nn, name) for name in [
        "Linear", "Embedding", "LayerNorm", "Dropout", "Conv2d", "MaxPool2d", "ReLU", "GELU",
        "Softmax", "Flatten", "CrossEntropyLoss", "MSELoss", "NLLLoss", "L1Loss", "SmoothL1Loss",
        "MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
        "Transformer", "RNNCell", "LSTMCell", "GRUCell"]},
}


def parameters(name, fn):
    if name in RNN_PARAMETERS:
        return [[p, "keyword"] for p in RNN_PARAMETERS[name]]
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.name == "self" or p.name.startswith("_") or p.kind == p.VAR_KEYWORD:
            continue
        kind = "keyword_only" if p.kind == p.KEYWORD_ONLY else "keyword"
        out.append([p.name, kind])
    return out


def main(path):
    table = {name: parameters(name, fn) for name, fn in CALLABLES.items()}
    for name in ("RNN", "LSTM", "GRU"):
        table[f"nn.{name}"] = parameters(name, None)
    with open(path, "w") as f:
        json.dump({"torch": torch.__version__, "parameters": table}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
