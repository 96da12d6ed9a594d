"""No argument is ignored silently: the documented keyword arguments of PyTorch's
DataLoader, save, load, optimizers, schedulers and layers (PyTorch 1.13's signatures in
testdata/torch_signatures.json, from tools/reference/torch_signatures.py) are walked on
ember. Each must be a parameter of ember's callable, of the same kind and in PyTorch's
positional order, with no catch-all **kwargs; each that ember does not implement must
be refused naming it (REFUSED below); the ones implemented here for this walk do what
PyTorch does (the checks after it)."""

import contextlib
import inspect
import io
import json
import os
import unittest

import ember
from ember import nn, optim
from ember.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))

# Arguments of PyTorch's own that collect more arguments by design.
CATCH_ALL = {"load": "pickle_load_args"}


def resolve(name):
    obj = ember
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def params():
    return [ember.zeros(2, requires_grad=True)]


# (callable, arguments, keyword that must be named in the error): each a value PyTorch
# gives a meaning ember does not implement.
REFUSED = [
    (nn.Conv2d, dict(in_channels=2, out_channels=2, kernel_size=3, groups=2), "groups"),
    (nn.Conv2d, dict(in_channels=2, out_channels=2, kernel_size=3, padding_mode="reflect"), "padding_mode"),
    (nn.Embedding, dict(num_embeddings=4, embedding_dim=2, max_norm=1.0), "max_norm"),
    (nn.Embedding, dict(num_embeddings=4, embedding_dim=2, scale_grad_by_freq=True), "scale_grad_by_freq"),
    (nn.Embedding, dict(num_embeddings=4, embedding_dim=2, sparse=True), "sparse"),
    (nn.MaxPool2d, dict(kernel_size=2, return_indices=True), "return_indices"),
    (nn.MaxPool2d, dict(kernel_size=2, ceil_mode=True), "ceil_mode"),
    (nn.LSTM, dict(input_size=2, hidden_size=4, proj_size=2), "proj_size"),
    (optim.SGD, dict(params=params(), lr=0.1, differentiable=True), "differentiable"),
    (optim.Adam, dict(params=params(), amsgrad=True), "amsgrad"),
    (optim.AdamW, dict(params=params(), amsgrad=True), "amsgrad"),
    (ember.utils.data.DataLoader, dict(dataset=[1, 2], num_workers=2, worker_init_fn=print), "worker_init_fn"),
    (ember.load, dict(f=io.BytesIO(), mmap=True), "mmap"),
    (ember.save, dict(obj=1, f=io.BytesIO(), _use_new_zipfile_serialization=False),
     "_use_new_zipfile_serialization"),
]


class SignaturesTest(unittest.TestCase):
    def test_every_documented_argument_is_a_parameter(self):
        with open(os.path.join(HERE, "testdata", "torch_signatures.json")) as f:
            table = json.load(f)["parameters"]
        self.assertGreater(len(table), 30)
        for name, documented in sorted(table.items()):
            with self.subTest(name):
                signature = inspect.signature(resolve(name))
                ours = signature.parameters
                extra = [p.name for p in ours.values() if p.kind == p.VAR_KEYWORD]
                self.assertEqual(extra, [CATCH_ALL[name]] if name in CATCH_ALL else [], f"{name} swallows arguments")
                positional = [p for p in ours if ours[p].kind == ours[p].POSITIONAL_OR_KEYWORD]
                order = [positional.index(p) for p, kind in documented if kind == "keyword" and p in positional]
                self.assertEqual(order, sorted(order), f"{name}: positional order differs from PyTorch's")
                for parameter, kind in documented:
                    self.assertIn(parameter, ours, f"{name} has no parameter {parameter!r}")
                    if kind == "keyword_only":
                        self.assertEqual(ours[parameter].kind, inspect.Parameter.KEYWORD_ONLY, f"{name}.{parameter}")

    def test_what_is_not_implemented_is_refused_by_name(self):
        for fn, kwargs, named in REFUSED:
            with self.subTest(f"{getattr(fn, '__name__', fn)} {named}"):
                with self.assertRaises(Exception) as caught:
                    fn(**kwargs)
                self.assertIn(named, str(caught.exception))

    def test_layer_arguments_do_what_pytorch_does(self):
        # padding_idx: its row starts at zero and gets no gradient.
        emb = nn.Embedding(5, 3, padding_idx=-1, device="cpu")
        self.assertEqual(emb.padding_idx, 4)
        self.assertEqual(emb.weight[4].tolist(), [0.0, 0.0, 0.0])
        emb(ember.tensor([1, 4, 4])).sum().backward()
        self.assertEqual(emb.weight.grad[4].tolist(), [0.0, 0.0, 0.0])
        self.assertEqual(emb.weight.grad[1].tolist(), [1.0, 1.0, 1.0])
        # elementwise_affine=False: no parameters.
        self.assertEqual(list(nn.LayerNorm(4, elementwise_affine=False).parameters()), [])
        # inplace=True writes into the input.
        x = ember.tensor([-1.0, 2.0])
        self.assertIs(nn.ReLU(inplace=True)(x), x)
        self.assertEqual(x.tolist(), [0.0, 2.0])
        # The legacy size_average/reduce fold into reduction as PyTorch folds them.
        a, b = ember.tensor([1.0, 3.0]), ember.zeros(2)
        self.assertEqual(nn.MSELoss(size_average=False)(a, b).item(), 10.0)
        self.assertEqual(nn.L1Loss(reduce=False)(a, b).tolist(), [1.0, 3.0])
        self.assertEqual(nn.MSELoss(reduction="none")(a, b).tolist(), [1.0, 9.0])
        # Class weights: the mean divides by the picked weights' sum.
        logits = ember.tensor([[0.0, 0.0], [0.0, 0.0]])
        loss = F.cross_entropy(logits, ember.tensor([0, 1]), weight=ember.tensor([1.0, 3.0]), reduction="sum")
        self.assertAlmostEqual(loss.item(), 4 * 0.6931471805599453, places=6)

    def test_optimizer_arguments_do_what_pytorch_does(self):
        # maximize: the step ascends; the gradient is left as it was.
        w = ember.tensor([1.0], requires_grad=True)
        opt = optim.SGD([w], lr=0.5, maximize=True, foreach=False)
        (w * 2).sum().backward()
        opt.step()
        self.assertEqual(w.tolist(), [2.0])
        self.assertEqual(w.grad.tolist(), [2.0])
        # step(closure): called with gradients on, its loss returned.
        opt = optim.Adam([w], lr=0.1, fused=True, capturable=False)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss

        with ember.no_grad():
            self.assertEqual(opt.step(closure).item(), 4.0)
        self.assertAlmostEqual(w.item(), 1.9, places=6)
        # verbose schedulers say each change, as PyTorch 1.13 does.
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            optim.lr_scheduler.StepLR(optim.SGD([w], lr=1.0), step_size=1, gamma=0.5, verbose=True).step()
        self.assertEqual(out.getvalue().splitlines(),
                         ["Adjusting learning rate of group 0 to 1.0000e+00.",
                          "Adjusting learning rate of group 0 to 5.0000e-01."])


if __name__ == "__main__":
    unittest.main()
