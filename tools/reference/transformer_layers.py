"""Writes python/tests/testdata/transformer_layers.json: PyTorch 1.13's outputs and
parameter gradients of nn.MultiheadAttention, nn.TransformerEncoderLayer and
nn.Transformer in float64 (dropout 0), with parameters and inputs given by a formula of
position and a causal, a bool and a padding mask, for python/tests/transformer_test.py.
Run with Debian's python3-torch:

    /usr/bin/python3 tools/reference/transformer_layers.py > python/tests/testdata/transformer_layers.json
"""

import json
import math

import torch


def formula(shape, salt):
    """0.5 sin(1.3 i + salt) at flat position i (the test has its own copy)."""
    n = math.prod(shape)
    return torch.tensor([0.5 * math.sin(1.3 * i + salt) for i in range(n)], dtype=torch.float64).reshape(shape)


def set_parameters(module):
    with torch.no_grad():
        for k, (_, p) in enumerate(module.named_parameters()):
            p.copy_(formula(tuple(p.shape), k + 1))


def record(module, outputs):
    loss = sum((o * formula(tuple(o.shape), 0.5)).sum() for o in outputs)
    loss.backward()
    return {"outputs": [o.tolist() for o in outputs],
            "grads": {name: p.grad.tolist() for name, p in module.named_parameters()}}


def main():
    cases = {}
    causal = torch.nn.Transformer.generate_square_subsequent_mask(4).double()
    padding = torch.tensor([[False, False, False, False, True], [False] * 5])

    mha = torch.nn.MultiheadAttention(8, 2, batch_first=True, kdim=6, vdim=4).double()
    set_parameters(mha)
    blocked = torch.tensor([[False, True, False, False, True]] * 3)
    out, weights = mha(formula((2, 3, 8), 0.1), formula((2, 5, 6), 0.2), formula((2, 5, 4), 0.3),
                       attn_mask=blocked, key_padding_mask=padding)
    cases["mha"] = record(mha, [out, weights])

    layer = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, norm_first=True,
                                             activation="gelu").double()
    set_parameters(layer)
    cases["encoder_layer"] = record(layer, [layer(formula((4, 2, 8), 0.4), src_mask=causal)])

    model = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                                 dim_feedforward=16, dropout=0.0).double()
    set_parameters(model)
    out = model(formula((5, 2, 8), 0.6), formula((4, 2, 8), 0.7), tgt_mask=causal, src_key_padding_mask=padding,
                memory_key_padding_mask=padding)
    cases["transformer"] = record(model, [out])
    print(json.dumps({"torch": torch.__version__, "cases": cases}))


if __name__ == "__main__":
    main()
