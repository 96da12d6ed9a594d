"""ember.nn's MultiheadAttention and Transformer layers against PyTorch 1.13
(testdata/transformer_layers.json, from tools/reference/transformer_layers.py): outputs,
attention weights and every parameter's gradient in float64, with the same parameters
and inputs and causal, bool and key-padding masks; names and copies as PyTorch's."""

import io
import json
import math
import os
import unittest

import numpy as np

import ember
import ember.nn as nn

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "transformer_layers.json")


def formula(shape, salt):
    n = math.prod(shape)
    return ember.tensor(np.array([0.5 * math.sin(1.3 * i + salt) for i in range(n)]).reshape(shape).tolist(),
                        dtype=ember.float64)


def set_parameters(module):
    with ember.no_grad():
        for k, (_, p) in enumerate(module.named_parameters()):
            p[...] = formula(tuple(p.shape), k + 1)


class AgainstPyTorchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(FIXTURE) as f:
            cls.cases = json.load(f)["cases"]

    def check(self, module, outputs, expected):
        for got, want in zip(outputs, expected["outputs"]):
            np.testing.assert_allclose(got.tolist(), want, rtol=1e-10, atol=1e-12)
        loss = sum((o * formula(tuple(o.shape), 0.5)).sum() for o in outputs)
        loss.backward()
        self.assertEqual(sorted(n for n, _ in module.named_parameters()), sorted(expected["grads"]))
        for name, p in module.named_parameters():
            np.testing.assert_allclose(p.grad.tolist(), expected["grads"][name], rtol=1e-9, atol=1e-11,
                                       err_msg=name)

    def test_multihead_attention(self):
        mha = nn.MultiheadAttention(8, 2, batch_first=True, kdim=6, vdim=4, dtype=ember.float64)
        set_parameters(mha)
        padding = ember.tensor([[False, False, False, False, True], [False] * 5])
        blocked = ember.tensor([[False, True, False, False, True]] * 3)
        out, weights = mha(formula((2, 3, 8), 0.1), formula((2, 5, 6), 0.2), formula((2, 5, 4), 0.3),
                           attn_mask=blocked, key_padding_mask=padding)
        self.check(mha, [out, weights], self.cases["mha"])

    def test_encoder_layer(self):
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, norm_first=True,
                                           activation="gelu", dtype=ember.float64)
        set_parameters(layer)
        causal = nn.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
        self.check(layer, [layer(formula((4, 2, 8), 0.4), src_mask=causal)], self.cases["encoder_layer"])

    def test_transformer(self):
        model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16,
                               dropout=0.0, dtype=ember.float64)
        set_parameters(model)
        causal = nn.Transformer.generate_square_subsequent_mask(4, dtype=ember.float64)
        padding = ember.tensor([[False, False, False, False, True], [False] * 5])
        out = model(formula((5, 2, 8), 0.6), formula((4, 2, 8), 0.7), tgt_mask=causal,
                    src_key_padding_mask=padding, memory_key_padding_mask=padding)
        self.check(model, [out], self.cases["transformer"])


class LayoutTest(unittest.TestCase):
    def test_module_paths_copies_and_pickling(self):
        self.assertIs(nn.modules.activation.MultiheadAttention, nn.MultiheadAttention)
        self.assertIs(nn.modules.linear.NonDynamicallyQuantizableLinear.__mro__[1], nn.Linear)
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
        encoder = nn.TransformerEncoder(layer, 2)
        a, b = encoder.layers[0].linear1.weight, encoder.layers[1].linear1.weight
        self.assertEqual(a.tolist(), b.tolist())
        with ember.no_grad():
            a[0, 0] = 5.0  # each copy has its own weights
        self.assertNotEqual(b[0, 0].item(), 5.0)
        self.assertEqual(nn.Transformer.generate_square_subsequent_mask(3).tolist(),
                         [[0.0, -math.inf, -math.inf], [0.0, 0.0, -math.inf], [0.0, 0.0, 0.0]])
        buffer = io.BytesIO()
        ember.save(encoder, buffer)  # a whole module: its activation is a function of ember's extension
        buffer.seek(0)
        with ember.serialization.safe_globals([nn.TransformerEncoder, nn.TransformerEncoderLayer,
                                               nn.MultiheadAttention, nn.ModuleList, nn.Linear, nn.LayerNorm,
                                               nn.Dropout, nn.modules.linear.NonDynamicallyQuantizableLinear,
                                               nn.functional.relu]):
            back = ember.load(buffer, weights_only=True)
        x = ember.randn(3, 1, 8)
        encoder.eval(), back.eval()
        np.testing.assert_allclose(back(x).tolist(), encoder(x).tolist(), rtol=1e-6)
        buffer.seek(0)
        with self.assertRaisesRegex(Exception, "weights_only=True refuses"):
            ember.load(buffer, weights_only=True)  # outside the block: not allowed


if __name__ == "__main__":
    unittest.main()
