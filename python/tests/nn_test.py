"""ember.nn, ember.optim and ember.save/load from Python: Modules written in Python
register what they hold, the layers compute what their formulas say, the optimizers'
first steps are the hand-derived ones, a model learns, and a run saved and loaded
resumes to the same weights as one that never stopped."""

import math
import os
import tempfile
import unittest

import numpy as np

import ember
import ember.nn as nn
import ember.nn.functional as F


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 8)
        self.out = nn.Linear(8, 1)
        self.scale = nn.Parameter(ember.ones(1))
        self.note = "not registered"

    def forward(self, x):
        return self.out(F.tanh(self.hidden(x))) * self.scale


class ModuleTest(unittest.TestCase):
    def test_registration(self):
        m = MLP()
        self.assertEqual([name for name, _ in m.named_parameters()],
                         ["scale", "hidden.weight", "hidden.bias", "out.weight", "out.bias"])
        self.assertEqual(sum(p.numel() for p in m.parameters()), 1 + 16 + 8 + 8 + 1)
        self.assertTrue(all(p.requires_grad and p.is_leaf for p in m.parameters()))
        self.assertEqual(list(m.state_dict()), [name for name, _ in m.named_parameters()])
        self.assertEqual(repr(m), "MLP(\n  (hidden): Linear(in_features=2, out_features=8, bias=True)\n"
                                  "  (out): Linear(in_features=8, out_features=1, bias=True)\n)")
        self.assertEqual(len(nn.Sequential(nn.Linear(2, 2), nn.ReLU())), 2)
        self.assertIsNone(nn.Linear(2, 2, bias=False).bias)

    def test_linear_starts_as_torch(self):
        w = nn.Linear(100, 50).weight.detach().numpy()
        bound = 1 / math.sqrt(100)
        self.assertLessEqual(abs(w).max(), bound)
        self.assertGreater(abs(w).max(), 0.9 * bound)  # uniform over the whole range
        self.assertAlmostEqual(float(w.std()), bound / math.sqrt(3), delta=0.05 * bound)

    def test_layers_compute_their_formulas(self):
        x = ember.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]])
        lin = nn.Linear(3, 2)
        want = x.numpy() @ lin.weight.detach().numpy().T + lin.bias.detach().numpy()
        np.testing.assert_allclose(lin(x).detach().numpy(), want, rtol=1e-6)
        a = x.numpy()
        ln = (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(nn.LayerNorm(3)(x).detach().numpy(), ln, rtol=1e-5, atol=1e-6)
        logits, targets = ember.tensor([[2.0, 1.0, 0.1], [0.5, 2.5, 0.3]]), ember.tensor([0, 2])
        l = logits.numpy()
        ce = np.mean([np.log(np.exp(row).sum()) - row[t] for row, t in zip(l, [0, 2])])
        self.assertAlmostEqual(nn.CrossEntropyLoss()(logits, targets).item(), ce, places=6)
        emb = nn.Embedding(5, 3)
        self.assertEqual(emb(ember.tensor([4, 0])).tolist(), [emb.weight[4].tolist(), emb.weight[0].tolist()])
        image = ember.arange(16.0).reshape(1, 1, 4, 4)
        self.assertEqual(nn.MaxPool2d(2)(image).tolist(), [[[[5.0, 7.0], [13.0, 15.0]]]])
        conv = nn.Conv2d(1, 2, 3, padding=1)
        self.assertEqual(conv(image).shape, (1, 2, 4, 4))
        center = (image.numpy()[0, 0, 0:3, 0:3] * conv.weight.detach().numpy()[1, 0]).sum() + conv.bias[1].item()
        self.assertAlmostEqual(conv(image)[0, 1, 1, 1].item(), float(center), places=4)

    def test_train_eval_and_dropout(self):
        m = nn.Sequential(nn.Dropout(0.5))
        x = ember.ones(1000)
        kept = (m(x) != 0).numpy().mean()
        self.assertTrue(0.4 < kept < 0.6)
        self.assertEqual(m(x).max().item(), 2.0)  # survivors scaled by 1 / (1 - p)
        m.eval()
        self.assertFalse(m[0].training)
        self.assertEqual(m(x).tolist(), x.tolist())

    def test_load_state_dict(self):
        a, b = MLP(), MLP()
        b.load_state_dict(a.state_dict())
        x = ember.randn(4, 2)
        self.assertEqual(a(x).tolist(), b(x).tolist())
        with self.assertRaisesRegex(KeyError, "missing keys \\['scale'\\]"):
            b.load_state_dict({k: v for k, v in a.state_dict().items() if k != "scale"})
        with self.assertRaisesRegex(ValueError, "hidden.bias has shape \\(3,\\)"):
            b.load_state_dict(dict(a.state_dict(), **{"hidden.bias": ember.zeros(3)}))
        b.load_state_dict({"scale": ember.tensor([5.0])}, strict=False)
        self.assertEqual(b.scale.item(), 5.0)

    def test_module_to_keeps_the_parameters(self):
        m = nn.Linear(2, 2)
        before = m.weight
        m.to(ember.float64)
        self.assertIs(m.weight, before)
        self.assertEqual(m.weight.dtype, ember.float64)
        self.assertEqual(m(ember.ones(1, 2, dtype=ember.float64)).dtype, ember.float64)


class NanoGptNamesTest(unittest.TestCase):
    """What nanoGPT's model.py builds its GPT from, as PyTorch documents it."""

    def test_module_dict_apply_and_init(self):
        block = nn.ModuleDict(dict(wte=nn.Embedding(10, 4), h=nn.ModuleList([nn.Linear(4, 4)]),
                                   ln_f=nn.LayerNorm(4)))
        self.assertIs(block.wte, block["wte"])
        self.assertEqual(list(block.keys()), ["wte", "h", "ln_f"])
        self.assertIn("ln_f", block)
        self.assertEqual(len(block), 3)
        self.assertEqual([name for name, _ in block.named_parameters()],
                         ["wte.weight", "h.0.weight", "h.0.bias", "ln_f.weight", "ln_f.bias"])
        ember.manual_seed(0)
        seen = []

        def init(m):
            seen.append(type(m).__name__)
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)
                nn.init.zeros_(m.bias)

        self.assertIs(block.apply(init), block)
        # Children first, the module itself last (torch.nn.Module.apply's order).
        self.assertEqual(seen, ["Embedding", "Linear", "ModuleList", "LayerNorm", "ModuleDict"])
        self.assertEqual(block.h[0].bias.tolist(), [0, 0, 0, 0])
        big = ember.zeros(100000)
        nn.init.normal_(big, mean=1.0, std=0.02)
        self.assertAlmostEqual(big.mean().item(), 1.0, delta=0.001)
        self.assertAlmostEqual(math.sqrt(big.var().item()), 0.02, delta=0.001)
        self.assertTrue(block.h[0].weight.requires_grad)

    def test_buffers(self):
        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("bias", ember.tril(ember.ones(3, 3)).view(1, 1, 3, 3))
                self.register_buffer("scratch", ember.zeros(2), persistent=False)
                self.proj = nn.Linear(3, 3)

        m = Attention()
        self.assertEqual(m.bias.shape, (1, 1, 3, 3))
        self.assertEqual([name for name, _ in m.named_buffers()], ["bias", "scratch"])
        self.assertEqual(list(m.state_dict()), ["bias", "proj.weight", "proj.bias"])  # torch's order
        self.assertNotIn("bias", dict(m.named_parameters()))
        other = Attention()
        with ember.no_grad():
            other.bias[...] = 0.0
        other.load_state_dict(m.state_dict())
        self.assertEqual(other.bias[0, 0].tolist(), [[1, 0, 0], [1, 1, 0], [1, 1, 1]])
        m.to(ember.float64)
        self.assertEqual(m.bias.dtype, ember.float64)
        with self.assertRaises(TypeError):
            m.register_buffer("x", [1, 2])

    def test_scaled_dot_product_attention_is_the_causal_composite(self):
        ember.manual_seed(1)
        q, k, v = (ember.randn(2, 3, 5, 8) for _ in range(3))
        got = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        mask = ember.tril(ember.ones(5, 5)).view(1, 1, 5, 5)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(8))
        want = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1) @ v
        np.testing.assert_allclose(np.array(got.tolist()), np.array(want.tolist()), atol=1e-5)
        with self.assertRaisesRegex(ValueError, "only causal attention"):
            F.scaled_dot_product_attention(q, k, v)
        # dropout_p drops the weights with the mask rand(..., 5, 5) >= p draws after the
        # same seed (float32), scaling the rest by 1 / (1 - p).
        ember.manual_seed(5)
        got = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, is_causal=True)
        ember.manual_seed(5)
        keep = (ember.rand(2, 3, 5, 5) >= 0.5).to(ember.float32) * 2.0
        weights = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
        np.testing.assert_allclose(np.array(got.tolist()), np.array(((weights * keep) @ v).tolist()),
                                   atol=1e-5)
        self.assertFalse(np.allclose(np.array(got.tolist()), np.array(want.tolist()), atol=1e-3))

    def test_tensor_names(self):
        self.assertIs(ember.long, ember.int64)
        self.assertIs(ember.float, ember.float32)
        self.assertEqual(ember.arange(0, 3, dtype=ember.long).dtype, ember.int64)
        w = ember.arange(6.0).view(2, 3)
        self.assertEqual(w.t().tolist(), [[0, 3], [1, 4], [2, 5]])
        target = ember.zeros(2, 3)
        self.assertIs(target.copy_(w), target)
        self.assertEqual(target.tolist(), w.tolist())
        p = nn.Parameter(ember.zeros(2, 3))
        with self.assertRaisesRegex(RuntimeError, "requires grad"):
            p.copy_(w)
        with ember.no_grad():
            p.copy_(w.t().t())
        self.assertEqual(p.tolist(), w.tolist())
        self.assertIs(target.fill_(2.5), target)
        self.assertEqual(target.tolist(), [[2.5] * 3] * 2)
        target[0].zero_()  # through a view, into the tensor
        self.assertEqual(target.tolist(), [[0.0] * 3, [2.5] * 3])
        with self.assertRaisesRegex(RuntimeError, "requires grad"):
            p.fill_(1.0)


class TrainingScriptNamesTest(unittest.TestCase):
    """What nanoGPT's train.py and sample.py call besides the model: randint, autocast,
    GradScaler, and torch.cuda's and torch.backends' settings."""

    def test_randint(self):
        ember.manual_seed(3)
        a = ember.randint(5, 9, (1000,))
        self.assertEqual((a.shape, a.dtype), ((1000,), ember.int64))
        self.assertEqual(sorted(set(a.tolist())), [5, 6, 7, 8])  # every value, none outside
        ember.manual_seed(3)
        self.assertEqual(ember.randint(5, 9, (1000,)).tolist(), a.tolist())
        self.assertEqual(ember.randint(3, (2, 2)).shape, (2, 2))  # randint(high, size)
        self.assertLess(max(ember.randint(3, (50,)).tolist()), 3)
        with self.assertRaisesRegex(ValueError, "low 4 must be less than high 4"):
            ember.randint(4, 4, (1,))

    def test_autocast(self):
        x, w = ember.randn(2, 4), ember.randn(4, 3)
        with ember.autocast(device_type="cpu", dtype=ember.bfloat16):
            self.assertEqual((x @ w).dtype, ember.bfloat16)
            with ember.amp.autocast(device_type="cpu", enabled=False):
                self.assertEqual((x @ w).dtype, ember.float32)
            self.assertEqual(F.cross_entropy(x @ w, ember.tensor([0, 2])).dtype, ember.float32)
        self.assertEqual((x @ w).dtype, ember.float32)

        @ember.autocast(device_type="cpu")
        def product():
            return x @ w

        self.assertEqual(product().dtype, ember.bfloat16)
        with self.assertRaisesRegex(ValueError, "no f16 autocast"):
            ember.autocast(device_type="cuda", dtype=ember.float16)

    def test_grad_scaler_and_settings(self):
        scaler = ember.cuda.amp.GradScaler(enabled=False)
        model = nn.Linear(2, 1)
        opt = ember.optim.SGD(model.parameters(), lr=0.5)
        loss = model(ember.ones(1, 2)).sum()
        self.assertIs(scaler.scale(loss), loss)
        scaler.scale(loss).backward()
        before = model.bias.item()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        self.assertAlmostEqual(model.bias.item(), before - 0.5, places=6)
        if ember.cuda.is_available():
            with self.assertRaisesRegex(ValueError, "f16 loss scaling is not supported"):
                ember.cuda.amp.GradScaler(enabled=True)
        else:  # disables itself, as PyTorch's
            with self.assertWarnsRegex(UserWarning, "CUDA is not available. Disabling"):
                self.assertFalse(ember.cuda.amp.GradScaler(enabled=True).is_enabled())
        self.assertEqual(ember.cuda.is_bf16_supported(), ember.cuda.is_available())
        ember.backends.cudnn.allow_tf32 = True
        if not ember.cuda.is_available():
            with self.assertRaises(ValueError):
                ember.cuda.set_device("cuda:0")


class OptimTest(unittest.TestCase):
    def setUp(self):
        self.p = nn.Parameter(ember.tensor([1.0, -2.0, 3.0]))
        self.g = np.array([0.5, -0.25, 2.0])

    def first_step(self, opt):
        (self.p * ember.tensor(self.g.astype(np.float32))).sum().backward()
        opt.step()
        return self.p.detach().numpy().astype(np.float64)

    def test_first_steps_are_the_textbook_ones(self):
        p0 = np.array([1.0, -2.0, 3.0])
        np.testing.assert_allclose(self.first_step(ember.optim.SGD([self.p], lr=0.1)), p0 - 0.1 * self.g, rtol=1e-6)
        self.setUp()
        # Adam's first step: m / (sqrt(v) + eps) = g / (|g| + eps).
        np.testing.assert_allclose(self.first_step(ember.optim.Adam([self.p], lr=0.01)),
                                   p0 - 0.01 * self.g / (abs(self.g) + 1e-8), rtol=1e-6)
        self.setUp()
        np.testing.assert_allclose(self.first_step(ember.optim.AdamW([self.p], lr=0.01, weight_decay=0.1)),
                                   p0 * (1 - 0.01 * 0.1) - 0.01 * self.g / (abs(self.g) + 1e-8), rtol=1e-6)

    def test_param_groups_drive_the_learning_rate(self):
        opt = ember.optim.SGD([self.p], lr=1.0)
        opt.param_groups[0]["lr"] = 0.0
        np.testing.assert_allclose(self.first_step(opt), [1.0, -2.0, 3.0])
        opt.zero_grad()
        self.assertIsNone(self.p.grad)

    def test_a_model_learns(self):
        ember.manual_seed(0)
        x = ember.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
        y = ember.tensor([[0.0], [1.0], [1.0], [0.0]])  # XOR
        model = MLP()
        opt = ember.optim.Adam(model.parameters(), lr=0.05)
        for _ in range(300):
            loss = F.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        self.assertLess(loss.item(), 0.01)


class CheckpointTest(unittest.TestCase):
    def run_steps(self, model, opt, steps):
        ember.manual_seed(123)  # the same batches whether or not the run was interrupted
        for _ in range(steps):
            loss = F.mse_loss(model(ember.randn(8, 2)), ember.randn(8, 1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()

    def test_save_load_resumes_exactly(self):
        with tempfile.TemporaryDirectory() as tmp:
            ember.manual_seed(5)
            model = MLP()
            opt = ember.optim.AdamW(model.parameters(), lr=0.01)
            self.run_steps(model, opt, 3)
            ember.save(model.state_dict(), os.path.join(tmp, "model.safetensors"))
            ember.save(opt.state_dict(), os.path.join(tmp, "opt.safetensors"))
            self.run_steps(model, opt, 2)

            resumed = MLP()
            resumed.load_state_dict(ember.load(os.path.join(tmp, "model.safetensors")))
            resumed_opt = ember.optim.AdamW(resumed.parameters(), lr=0.01)
            resumed_opt.load_state_dict(ember.load(os.path.join(tmp, "opt.safetensors")))
            self.run_steps(resumed, resumed_opt, 2)
            for (name, a), (_, b) in zip(model.named_parameters(), resumed.named_parameters()):
                self.assertEqual(a.tolist(), b.tolist(), name)

    def test_a_nested_checkpoint_resumes_exactly(self):
        # nanoGPT's checkpoint: state dicts beside ints, floats, strings, None and dicts.
        with tempfile.TemporaryDirectory() as tmp:
            ember.manual_seed(5)
            model = MLP()
            opt = ember.optim.AdamW(model.parameters(), lr=0.01)
            self.run_steps(model, opt, 3)
            path = os.path.join(tmp, "ckpt.pt")
            ember.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                        "model_args": {"n_layer": 2, "bias": False, "dropout": 0.0},
                        "iter_num": 3, "best_val_loss": ember.tensor(1.5), "note": None,
                        "config": {"dataset": "brown_char", "lr": 1e-3, "betas": (0.9, 0.95), "ids": [1, 2]}},
                       path)
            self.run_steps(model, opt, 2)

            checkpoint = ember.load(path, map_location="cpu")
            self.assertEqual(checkpoint["iter_num"], 3)
            self.assertEqual(checkpoint["model_args"], {"n_layer": 2, "bias": False, "dropout": 0.0})
            self.assertEqual(checkpoint["config"]["betas"], (0.9, 0.95))
            self.assertEqual(checkpoint["config"]["ids"], [1, 2])
            self.assertIsNone(checkpoint["note"])
            self.assertEqual(checkpoint["best_val_loss"].item(), 1.5)
            resumed = MLP()
            resumed.load_state_dict(checkpoint["model"])
            resumed_opt = ember.optim.AdamW(resumed.parameters(), lr=0.01)
            resumed_opt.load_state_dict(checkpoint["optimizer"])
            self.run_steps(resumed, resumed_opt, 2)
            for (name, a), (_, b) in zip(model.named_parameters(), resumed.named_parameters()):
                self.assertEqual(a.tolist(), b.tolist(), name)
            # A dict of tensors stays a plain safetensors file, as the C++ binaries write.
            ember.save(model.state_dict(), os.path.join(tmp, "plain.safetensors"))
            self.assertEqual(sorted(ember.load(os.path.join(tmp, "plain.safetensors"))),
                             sorted(model.state_dict()))
            ember.save({"x": {1, 2}}, path)  # anything picklable, as torch.save
            self.assertEqual(ember.load(path)["x"], {1, 2})

    def test_errors(self):
        with self.assertRaises(FileNotFoundError):
            ember.load("/nowhere/model.safetensors")
        with tempfile.NamedTemporaryFile(suffix=".safetensors") as f:
            f.write(b"not a safetensors file")
            f.flush()
            with self.assertRaises(ValueError):
                ember.load(f.name)
        with self.assertRaisesRegex(ValueError, "empty parameter list"):
            ember.optim.SGD([], lr=0.1)


class SpecTest(unittest.TestCase):
    def test_a_network_from_a_spec_trains_from_python(self):
        ember.manual_seed(0)
        net = nn.from_spec("""{"input_size": 4, "layers": [
            {"name": "h1", "type": "Linear", "in_features": 4, "out_features": 8, "activation": "relu"},
            {"name": "h2", "type": "Linear", "in_features": 8, "out_features": 8, "inputs": ["h1"]},
            {"name": "res", "type": "Add", "inputs": ["h1", "h2"]},
            {"name": "out", "type": "FullyConnected", "inputs": ["h1", "res"], "size": 1}]}""")
        names = [n for n, _ in net.named_parameters()]
        self.assertEqual(names, ["h1.weight", "h1.bias", "h2.weight", "h2.bias", "out.weight_0", "out.weight_1", "out.bias"])
        x = ember.randn(32, 4)
        y = (x * ember.tensor([2.0, -1.0, 0.5, 0.0])).sum(dim=1, keepdim=True)  # learnable
        opt = ember.optim.Adam(net.parameters(), lr=1e-2)
        losses = []
        for _ in range(100):
            loss = ((net(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        self.assertLess(losses[-1], 0.1 * losses[0])
        self.assertIn("h1.weight", net.state_dict())
        with self.assertRaisesRegex(ValueError, 'layer a: unknown input "b"'):
            nn.from_spec('{"layers": [{"name": "a", "type": "ReLU", "inputs": ["b"]}]}')

    def test_gpt2_written_as_a_spec_learns_a_sequence(self):
        # GPT-2's blocks from the registry, its initialisation, and the head tied to wte.
        ember.manual_seed(0)
        net = nn.from_spec("""{"init": "gpt2", "layers": [
            {"name": "wte", "type": "Embedding", "num_embeddings": 11, "embedding_dim": 16},
            {"name": "wpe", "type": "PositionEmbedding", "num_positions": 8, "embedding_dim": 16},
            {"name": "h.0", "type": "GPT2Block", "n_embd": 16, "n_head": 2},
            {"name": "ln_f", "type": "LayerNorm", "normalized_shape": 16},
            {"name": "lm_head", "type": "TiedLinear", "weight_of": "wte"}]}""")
        names = [n for n, _ in net.named_parameters()]
        self.assertEqual(names[:3], ["wte.weight", "wpe.weight", "h.0.ln_1.weight"])
        self.assertEqual(len(names), 2 + 12 + 2)  # no lm_head.weight: it is wte's
        self.assertAlmostEqual(net.state_dict()["wte.weight"].std().item(), 0.02, delta=0.005)
        ids = ember.tensor([[1, 2, 3, 4, 5, 6, 7, 8, 9]] * 4)
        x, y = ids[:, :-1], ids[:, 1:]
        opt = ember.optim.AdamW(net.parameters(), lr=1e-2)
        losses = []
        for _ in range(40):
            logits = net(x)
            loss = F.cross_entropy(logits.reshape(-1, 11), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        self.assertAlmostEqual(losses[0], math.log(11), delta=0.1)
        self.assertLess(losses[-1], 0.1)


if __name__ == "__main__":
    unittest.main()
