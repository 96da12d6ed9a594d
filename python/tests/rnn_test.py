"""ember.nn's recurrent layers and cells against PyTorch 1.13 (testdata/rnn_layers.json,
written by tools/reference/rnn_layers.py): outputs, final states and every parameter's
gradient in float64, with the same parameters and inputs (a formula of position);
PyTorch's parameter names, shapes and argument errors."""

import json
import math
import os
import unittest

import numpy as np

import ember
import ember.nn as nn

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "rnn_layers.json")


def formula(shape, salt):
    n = math.prod(shape)
    values = [0.5 * math.sin(1.7 * i + salt) for i in range(n)]
    return ember.tensor(np.array(values).reshape(shape).tolist(), dtype=ember.float64)


class AgainstPyTorchTest(unittest.TestCase):
    def test_every_case(self):
        with open(FIXTURE) as f:
            fixture = json.load(f)
        for case in fixture["cases"]:
            with self.subTest(name=case["name"], kwargs=case["kwargs"]):
                layer = getattr(nn, case["name"])(3, fixture["hidden_size"], dtype=ember.float64, **case["kwargs"])
                self.assertEqual([n for n, _ in layer.named_parameters()], case["parameters"])
                with ember.no_grad():
                    for k, (name, p) in enumerate(layer.named_parameters()):
                        p[...] = formula(tuple(p.shape), k + 1)
                result = layer(formula(tuple(case["input_shape"]), 0.25))
                if case["name"].endswith("Cell"):
                    state = result if isinstance(result, tuple) else (result,)
                    loss = sum((s * s).sum() for s in state)
                else:
                    output, state = result
                    state = state if isinstance(state, tuple) else (state,)
                    np.testing.assert_allclose(output.tolist(), case["output"], rtol=1e-12, atol=1e-13)
                    loss = output.sum() + sum((s * s).sum() for s in state)
                for got, expected in zip(state, case["state"]):
                    np.testing.assert_allclose(got.tolist(), expected, rtol=1e-12, atol=1e-13)
                loss.backward()
                for name, p in layer.named_parameters():
                    np.testing.assert_allclose(p.grad.tolist(), case["grads"][name], rtol=1e-10, atol=1e-12,
                                               err_msg=name)


class ShapesAndErrorsTest(unittest.TestCase):
    def test_shapes_and_initialisation(self):
        lstm = nn.LSTM(10, 20, num_layers=2, bidirectional=True)
        self.assertEqual(tuple(lstm.weight_ih_l1_reverse.shape), (80, 40))
        bound = 1 / math.sqrt(20)
        self.assertTrue(all(p.abs().max().item() <= bound for p in lstm.parameters()))
        out, (h, c) = lstm(ember.randn(7, 3, 10))
        self.assertEqual((out.shape, h.shape, c.shape), ((7, 3, 40), (4, 3, 20), (4, 3, 20)))
        gru = nn.GRU(10, 20, batch_first=True)
        out, h = gru(ember.randn(3, 7, 10), ember.zeros(1, 3, 20))
        self.assertEqual((out.shape, h.shape), ((3, 7, 20), (1, 3, 20)))
        h, c = nn.LSTMCell(10, 20)(ember.randn(3, 10))
        self.assertEqual((h.shape, c.shape), ((3, 20), (3, 20)))
        self.assertEqual(repr(nn.GRU(3, 4, 2, dropout=0.5)), "GRU(3, 4, num_layers=2, dropout=0.5)")

    def test_dropout_only_while_training_and_between_layers(self):
        rnn = nn.RNN(4, 4, num_layers=2, dropout=0.5)
        x = ember.randn(6, 2, 4)
        rnn.eval()
        first, _ = rnn(x)
        again, _ = rnn(x)
        self.assertEqual(first.tolist(), again.tolist())
        rnn.train()
        ember.manual_seed(1)
        a, _ = rnn(x)
        ember.manual_seed(2)
        b, _ = rnn(x)
        self.assertNotEqual(a.tolist(), b.tolist())

    def test_errors(self):
        with self.assertRaisesRegex(ValueError, "input.size\\(-1\\) must be equal to input_size"):
            nn.LSTM(3, 4)(ember.zeros(2, 1, 5))
        with self.assertRaisesRegex(ValueError, "expected hidden size"):
            nn.GRU(3, 4)(ember.zeros(2, 1, 3), ember.zeros(2, 1, 4))
        with self.assertRaisesRegex(ValueError, "hx must be a tuple"):
            nn.LSTM(3, 4)(ember.zeros(2, 1, 3), ember.zeros(1, 1, 4))
        with self.assertRaisesRegex(ValueError, "Unknown nonlinearity"):
            nn.RNN(3, 4, nonlinearity="gelu")
        with self.assertRaisesRegex(ValueError, "proj_size"):
            nn.LSTM(3, 4, proj_size=2)


if __name__ == "__main__":
    unittest.main()
