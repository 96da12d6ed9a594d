"""Writes python/tests/testdata/rnn_layers.json: PyTorch 1.13's outputs, final states and
parameter gradients of its recurrent layers and cells, in float64, with parameters and
inputs given by a formula of position (so the test rebuilds them without PyTorch).
Run with Debian's python3-torch:

    /usr/bin/python3 tools/reference/rnn_layers.py > python/tests/testdata/rnn_layers.json
"""

import json
import math

import torch

CASES = [  # (class, constructor keywords, input shape)
    ("LSTM", {"num_layers": 2, "bidirectional": True}, (5, 2, 3)),
    ("LSTM", {"batch_first": True}, (2, 4, 3)),
    ("GRU", {"num_layers": 2}, (4, 3, 3)),
    ("GRU", {"bidirectional": True, "batch_first": True}, (2, 3, 3)),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}, (4, 2, 3)),
    ("RNN", {"bias": False}, (4, 3)),  # unbatched
    ("LSTMCell", {}, (2, 3)),
    ("GRUCell", {}, (2, 3)),
    ("RNNCell", {"nonlinearity": "tanh"}, (3,)),
]
HIDDEN = 4


def formula(shape, salt):
    """0.5 sin(1.7 i + salt) at flat position i: the test's own copy of this formula
    makes the same numbers."""
    n = math.prod(shape)
    return torch.tensor([0.5 * math.sin(1.7 * i + salt) for i in range(n)], dtype=torch.float64).reshape(shape)


def main():
    out = []
    for name, kwargs, shape in CASES:
        layer = getattr(torch.nn, name)(3, HIDDEN, **kwargs).double()
        with torch.no_grad():
            for k, (pname, p) in enumerate(layer.named_parameters()):
                p.copy_(formula(tuple(p.shape), k + 1))
        x = formula(shape, 0.25)
        result = layer(x)
        if name.endswith("Cell"):
            state = result if isinstance(result, tuple) else (result,)
            loss = sum((s * s).sum() for s in state)
            record = {"state": [s.tolist() for s in state]}
        else:
            output, state = result
            state = state if isinstance(state, tuple) else (state,)
            loss = output.sum() + sum((s * s).sum() for s in state)
            record = {"output": output.tolist(), "state": [s.tolist() for s in state]}
        loss.backward()
        record.update(name=name, kwargs=kwargs, input_shape=list(shape),
                      parameters=[pname for pname, _ in layer.named_parameters()],
                      grads={pname: p.grad.tolist() for pname, p in layer.named_parameters()})
        out.append(record)
    print(json.dumps({"torch": torch.__version__, "hidden_size": HIDDEN, "cases": out}))


if __name__ == "__main__":
    main()
