"""The PyTorch names composed in Python (ember/_torch_names.py, nn's activations and
containers, optim.lr_scheduler) against PyTorch's documented behaviour:
values derived by hand from the documented formulas, gradients against finite
differences."""

import math
import unittest

import numpy as np

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.optim import lr_scheduler


class TensorNamesTest(unittest.TestCase):
    def test_max_and_min_along_a_dimension_give_values_and_indices(self):
        x = ember.tensor([[1.0, 5.0, 5.0], [2.0, 0.0, 0.0]])
        values, indices = x.max(dim=1)
        self.assertEqual((values.tolist(), indices.tolist()), ([5.0, 2.0], [1, 0]))  # the first of ties
        m = ember.min(x, dim=1, keepdim=True)
        self.assertEqual((m.values.tolist(), m.indices.tolist()), ([[1.0], [0.0]], [[0], [1]]))
        self.assertEqual(x.max().item(), 5.0)

    def test_integer_reductions_keep_integers(self):
        x = ember.tensor([[3, -7, 2], [9, 0, 9]])
        self.assertEqual((x.sum().dtype, x.sum().item()), (ember.int64, 16))
        self.assertEqual(x.sum(dim=1).tolist(), [-2, 18])
        self.assertEqual(((x > 0).sum().dtype, (x > 0).sum().item()), (ember.int64, 4))
        self.assertEqual((x.max().dtype, x.max().item(), x.min().item()), (ember.int64, 9, -7))
        values, indices = x.max(dim=1)
        self.assertEqual((values.tolist(), indices.tolist()), ([3, 9], [0, 0]))
        m = ember.min(x, dim=1)
        self.assertEqual((m.values.tolist(), m.indices.tolist()), ([-7, 0], [1, 1]))
        big = ember.tensor([2**40 + 1, 3])
        self.assertEqual(big.sum().item(), 2**40 + 4)  # exact below 2^53

    def test_the_thread_count_reads_back(self):
        n = ember.get_num_threads()
        self.assertGreaterEqual(n, 1)
        try:
            ember.set_num_threads(1)
            self.assertEqual(ember.get_num_threads(), 1)
            self.assertEqual((ember.ones(64, 64) @ ember.ones(64, 64)).sum().item(), 64.0 ** 3)
        finally:
            ember.set_num_threads(n)
        with self.assertRaisesRegex(ValueError, "at least 1"):
            ember.set_num_threads(0)

    def test_reductions_and_comparisons(self):
        x = ember.tensor([[1.0, 2.0], [3.0, 6.0]])
        self.assertAlmostEqual(x.std().item(), float(np.std([1, 2, 3, 6], ddof=1)), places=6)
        self.assertAlmostEqual(x.std(unbiased=False).item(), float(np.std([1, 2, 3, 6])), places=6)
        self.assertAlmostEqual(x.norm().item(), math.sqrt(50), places=5)
        self.assertEqual(x.norm(p=1, dim=1).tolist(), [3.0, 9.0])
        self.assertEqual(x.pow(2).tolist(), [[1.0, 4.0], [9.0, 36.0]])
        self.assertEqual(x.eq(2.0).tolist(), [[False, True], [False, False]])
        self.assertEqual(x.ge(x.t()).tolist(), [[True, False], [True, True]])
        self.assertTrue((x > 0).all().item())
        self.assertFalse((x > 2).all().item())
        self.assertEqual((x > 2).any(dim=1).tolist(), [False, True])
        self.assertEqual([c.shape[0] for c in ember.ones(5, 2).chunk(2)], [3, 2])

    def test_dtype_and_shape_helpers(self):
        x = ember.tensor([1.5, -2.0])
        self.assertEqual((x.int().dtype, x.int().tolist()), (ember.int32, [1, -2]))
        self.assertEqual(x.bool().tolist(), [True, True])
        self.assertEqual(x.half().dtype, ember.float16)
        self.assertEqual(ember.arange(2).type_as(x).dtype, ember.float32)
        self.assertEqual(tuple(ember.ones(2, 3).view_as(ember.ones(6)).shape), (6,))
        new = ember.ones(2, dtype=ember.float64).new_zeros(3, 1)
        self.assertEqual((tuple(new.shape), new.dtype), ((3, 1), ember.float64))
        self.assertEqual(x.new_full((2,), 7).tolist(), [7.0, 7.0])
        self.assertEqual(x.new_tensor([1, 2]).dtype, ember.float32)
        self.assertTrue(x.is_floating_point() and not ember.arange(2).is_floating_point())
        self.assertEqual(x.element_size(), 4)

    def test_to_takes_pytorchs_forms(self):
        x = ember.tensor([1.5, 2.5])
        self.assertEqual(x.to("cpu", ember.float64).dtype, ember.float64)
        self.assertEqual(x.to(ember.float64, non_blocking=True).dtype, ember.float64)
        self.assertEqual(x.to(device="cpu", dtype=ember.int32).tolist(), [1, 2])
        self.assertEqual(x.to(ember.arange(2)).dtype, ember.int64)  # another tensor's dtype and device
        copied = x.to("cpu", copy=True)
        copied.fill_(0.0)
        self.assertEqual(x.tolist(), [1.5, 2.5])
        self.assertIs(x.pin_memory(), x)  # nanoGPT's x.pin_memory().to(device, non_blocking=True)
        self.assertEqual(x.pin_memory().to("cpu", non_blocking=True).tolist(), [1.5, 2.5])

    def test_in_place_arithmetic_returns_self_and_refuses_what_requires_grad(self):
        x = ember.ones(3)
        self.assertIs(x.add_(2.0), x)
        x.mul_(ember.tensor([1.0, 2.0, 3.0])).sub_(1.0).div_(2.0)
        self.assertEqual(x.tolist(), [1.0, 2.5, 4.0])
        x.masked_fill_(x > 2, 0.0)
        self.assertEqual(x.tolist(), [1.0, 0.0, 0.0])
        w = ember.ones(2, requires_grad=True)
        with self.assertRaisesRegex(RuntimeError, "requires grad"):
            w.add_(1.0)
        with ember.no_grad():
            w.add_(1.0)
        self.assertEqual(w.tolist(), [2.0, 2.0])
        ember.manual_seed(0)
        u = ember.zeros(1000).uniform_(-1.0, 1.0)
        self.assertTrue(-1.0 <= u.min().item() and u.max().item() < 1.0)
        self.assertAlmostEqual(ember.zeros(4000).normal_(3.0, 0.5).mean().item(), 3.0, delta=0.05)

    def test_functions_are_the_methods(self):
        x = ember.tensor([[0.5, 1.0], [2.0, 4.0]])
        for name in ("exp", "log", "sqrt", "tanh", "sigmoid", "abs", "flatten", "t", "clone"):
            self.assertEqual(getattr(ember, name)(x).tolist(), getattr(x, name)().tolist(), name)
        self.assertEqual(ember.sum(x, dim=0).tolist(), [2.5, 5.0])
        self.assertEqual(ember.transpose(x, 0, 1).tolist(), [[0.5, 2.0], [1.0, 4.0]])
        np.testing.assert_allclose(ember.softmax(x, dim=1).numpy(), x.softmax(dim=1).numpy())
        np.testing.assert_allclose(x.log_softmax(dim=1).numpy(), np.log(x.softmax(dim=1).numpy()), rtol=1e-6)
        self.assertEqual(ember.mm(x, ember.ones(2, 1)).tolist(), [[1.5], [6.0]])
        self.assertEqual(tuple(ember.bmm(ember.ones(3, 2, 4), ember.ones(3, 4, 5)).shape), (3, 2, 5))
        with self.assertRaisesRegex(ValueError, "mm: expected 2-D"):
            ember.mm(ember.ones(2, 2, 2), x)
        with self.assertRaisesRegex(ValueError, "bmm: expected"):
            ember.bmm(ember.ones(2, 2, 3), ember.ones(3, 3, 2))

    def test_clamp_where_and_their_gradients(self):
        x = ember.tensor([-2.0, -1.0, 0.5, 1.0, 3.0], requires_grad=True)
        y = x.clamp(-1.0, 1.0)
        self.assertEqual(y.tolist(), [-1.0, -1.0, 0.5, 1.0, 1.0])
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [0.0, 1.0, 1.0, 1.0, 0.0])  # the bounds pass it, as PyTorch's
        self.assertEqual(ember.clamp(ember.tensor([5.0, -5.0]), max=2.0).tolist(), [2.0, -5.0])
        self.assertEqual(ember.tensor([0.5, 3.0]).clip(min=1.0).tolist(), [1.0, 3.0])
        self.assertTrue(math.isnan(ember.tensor([float("nan")]).clamp(0.0, 1.0).item()))
        with self.assertRaisesRegex(ValueError, "at least one"):
            x.clamp()
        a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
        w = ember.where(a > 1.5, a * 2, 0.0)
        self.assertEqual(w.tolist(), [0.0, 4.0, 6.0])
        w.sum().backward()
        self.assertEqual(a.grad.tolist(), [0.0, 2.0, 2.0])
        b = ember.tensor([3.0, 1.0])
        self.assertEqual(ember.maximum(ember.tensor([1.0, 5.0]), b).tolist(), [3.0, 5.0])
        self.assertEqual(ember.max(ember.tensor([1.0, 5.0]), b).tolist(), [3.0, 5.0])  # elementwise form
        self.assertEqual(ember.minimum(ember.tensor([1.0, 5.0]), b).tolist(), [1.0, 1.0])

    def test_expand_and_repeat(self):
        x = ember.tensor([[1.0], [2.0]], requires_grad=True)
        e = x.expand(2, 3)
        self.assertEqual(e.tolist(), [[1.0] * 3, [2.0] * 3])
        self.assertEqual(tuple(x.expand(4, -1, 3).shape), (4, 2, 3))
        (e * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
        self.assertEqual(x.grad.tolist(), [[6.0], [6.0]])  # summed over the broadcast
        m = np.arange(6).reshape(2, 3)
        for sizes in ((2, 1), (1, 3), (2, 2, 1)):
            got = ember.tensor(m).repeat(*sizes)
            self.assertEqual(got.tolist(), np.tile(m, sizes).tolist(), sizes)
        with self.assertRaisesRegex(ValueError, "repeat"):
            ember.ones(2, 2).repeat(2)

    def test_creation_and_predicates(self):
        x = ember.ones(2, 3, dtype=ember.float64)
        for like, value in ((ember.zeros_like, 0.0), (ember.ones_like, 1.0), (ember.empty_like, 0.0)):
            y = like(x)
            self.assertEqual((tuple(y.shape), y.dtype, y.tolist()[0][0]), ((2, 3), ember.float64, value))
        self.assertEqual(ember.full_like(x, 2.5).tolist()[1], [2.5] * 3)
        self.assertEqual(ember.randn_like(x).dtype, ember.float64)
        self.assertEqual(tuple(ember.empty(4, 2).shape), (4, 2))
        np.testing.assert_allclose(ember.linspace(0, 1, 5).numpy(), [0, 0.25, 0.5, 0.75, 1.0])
        self.assertEqual(ember.linspace(2, 3, 1).tolist(), [3.0])
        self.assertTrue(ember.allclose(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 2.0 + 1e-6])))
        self.assertFalse(ember.allclose(ember.tensor([1.0]), ember.tensor([1.1])))
        nan = ember.tensor([float("nan")])
        self.assertFalse(ember.allclose(nan, nan))
        self.assertTrue(ember.allclose(nan, nan, equal_nan=True))
        self.assertTrue(ember.is_tensor(x) and not ember.is_tensor([1.0]))
        self.assertIs(ember.get_default_dtype(), ember.float32)
        with ember.inference_mode():
            self.assertFalse(ember.is_grad_enabled())
        self.assertTrue(ember.is_grad_enabled())

    def test_grad_mode_switches(self):
        x = ember.ones(2, requires_grad=True)
        with ember.no_grad():
            with ember.enable_grad():
                self.assertTrue((x * 2).requires_grad)
            self.assertFalse((x * 2).requires_grad)
        with ember.set_grad_enabled(False):
            self.assertFalse((x * 2).requires_grad)
        self.assertTrue(ember.is_grad_enabled())
        try:
            ember.set_grad_enabled(False)  # as a function: from here on
            self.assertFalse(ember.is_grad_enabled())
        finally:
            ember.set_grad_enabled(True)
        self.assertTrue((x * 2).requires_grad)

        @ember.enable_grad()
        def doubled(t):
            return t * 2

        with ember.no_grad():
            self.assertTrue(doubled(x).requires_grad)


class NnNamesTest(unittest.TestCase):
    def test_activations_match_their_formulas_and_finite_differences(self):
        xs = np.array([-2.0, -0.5, 0.25, 3.0])
        for fn, ref in ((F.silu, lambda v: v / (1 + np.exp(-v))),
                        (lambda t: F.leaky_relu(t, 0.2), lambda v: np.where(v >= 0, v, 0.2 * v))):
            x = ember.tensor(xs, requires_grad=True)
            y = fn(x)
            np.testing.assert_allclose(y.detach().numpy(), ref(xs), rtol=1e-12)
            y.sum().backward()
            numeric = (ref(xs + 1e-6) - ref(xs - 1e-6)) / 2e-6
            np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6)
        self.assertEqual(nn.LeakyReLU(0.5)(ember.tensor([-2.0])).tolist(), [-1.0])
        self.assertEqual(repr(nn.LeakyReLU(0.5)), "LeakyReLU(negative_slope=0.5)")
        self.assertAlmostEqual(nn.SiLU()(ember.tensor([1.0])).item(), 1 / (1 + math.exp(-1)), places=6)

    def test_losses_and_normalisations_follow_their_formulas(self):
        p, y = np.array([0.2, 0.9, 0.0, 0.6]), np.array([0.0, 1.0, 1.0, 1.0])
        with np.errstate(divide="ignore"):  # log 0 = -inf, which PyTorch clamps at -100
            logs = np.maximum(np.log(np.where(y == 1, p, 1 - p)), -100)
        self.assertAlmostEqual(F.binary_cross_entropy(ember.tensor(p), ember.tensor(y)).item(), -logs.mean())
        self.assertEqual(F.binary_cross_entropy(ember.tensor(p), ember.tensor(y), reduction="none").shape[0], 4)
        x = np.array([[3.0, 4.0], [0.0, 0.0]])
        np.testing.assert_allclose(F.normalize(ember.tensor(x)).numpy(), [[0.6, 0.8], [0.0, 0.0]])
        self.assertEqual(F.pad(ember.ones(1, 2), (1, 2)).tolist(), [[0.0, 1.0, 1.0, 0.0, 0.0]])
        self.assertEqual(F.pad(ember.ones(1, 1), (0, 0, 1, 0), value=5.0).tolist(), [[5.0], [1.0]])
        self.assertEqual(F.pad(ember.arange(5.0).view(1, 5), (-1, -2)).tolist(), [[1.0, 2.0]])
        v = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
        want = v / np.sqrt((v * v).mean(axis=1, keepdims=True) + 1e-6) * np.array([1.0, 2.0, 3.0])
        norm = nn.RMSNorm(3, eps=1e-6, dtype=ember.float64)
        with ember.no_grad():
            norm.weight.copy_(ember.tensor([1.0, 2.0, 3.0]))
        np.testing.assert_allclose(norm(ember.tensor(v)).detach().numpy(), want, rtol=1e-12)

    def test_one_hot(self):
        self.assertEqual(F.one_hot(ember.tensor([0, 2]), 3).tolist(), [[1, 0, 0], [0, 0, 1]])
        self.assertEqual(tuple(F.one_hot(ember.tensor([[1], [3]])).shape), (2, 1, 4))
        with self.assertRaisesRegex(ValueError, "class values"):
            F.one_hot(ember.tensor([3]), 3)

    def test_module_helpers_and_parameter_list(self):
        model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        self.assertEqual([name for name, _ in model.named_children()], ["0", "1"])
        self.assertIs(model.requires_grad_(False), model)
        self.assertFalse(any(p.requires_grad for p in model.parameters()))
        self.assertEqual(model.double()[0].weight.dtype, ember.float64)
        params = nn.ParameterList([ember.ones(2), nn.Parameter(ember.zeros(3))])
        self.assertEqual([n for n, _ in params.named_parameters()], ["0", "1"])
        self.assertEqual((len(params), tuple(params[1].shape)), (2, (3,)))
        self.assertTrue(all(isinstance(p, nn.Parameter) for p in params))


class LrSchedulerTest(unittest.TestCase):
    def lrs(self, make, steps, lr=1.0):
        opt = ember.optim.SGD([nn.Parameter(ember.ones(1))], lr=lr)
        scheduler = make(opt)
        out = [opt.param_groups[0]["lr"]]
        for _ in range(steps):
            opt.step()
            scheduler.step()
            out.append(opt.param_groups[0]["lr"])
        self.assertEqual(scheduler.get_last_lr(), [out[-1]])
        return out

    def test_each_schedule_follows_its_formula(self):
        close = lambda got, want: np.testing.assert_allclose(got, want, rtol=1e-12)
        close(self.lrs(lambda o: lr_scheduler.StepLR(o, step_size=2, gamma=0.5), 5), [1, 1, .5, .5, .25, .25])
        close(self.lrs(lambda o: lr_scheduler.MultiStepLR(o, [1, 3], gamma=0.1), 4), [1, .1, .1, .01, .01])
        close(self.lrs(lambda o: lr_scheduler.ExponentialLR(o, 0.9), 2), [1, .9, .81])
        close(self.lrs(lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (e + 1)), 3), [1, 1 / 2, 1 / 3, 1 / 4])
        close(self.lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, T_max=4, eta_min=0.1), 4, lr=2.0),
              [0.1 + 1.9 * (1 + math.cos(math.pi * e / 4)) / 2 for e in range(5)])
        close(self.lrs(lambda o: lr_scheduler.LinearLR(o, start_factor=0.25, total_iters=3), 4),
              [0.25, 0.5, 0.75, 1.0, 1.0])

    def test_a_resumed_scheduler_continues(self):
        opt = ember.optim.SGD([nn.Parameter(ember.ones(1))], lr=1.0)
        first = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        first.step()
        first.step()
        again = ember.optim.SGD([nn.Parameter(ember.ones(1))], lr=1.0)
        resumed = lr_scheduler.StepLR(again, step_size=1, gamma=0.5)
        resumed.load_state_dict(first.state_dict())
        resumed.step()
        self.assertEqual(again.param_groups[0]["lr"], 0.125)


class MoreTorchNamesTest(unittest.TestCase):
    """roll, flip, narrow, add/sub with alpha, var's forms, type, nelement, Tensor(...),
    the constants and the losses composed in Python, against NumPy and the formulas."""

    def test_shapes_of_data(self):
        a = np.arange(12.0).reshape(3, 4)
        x = ember.from_numpy(a.copy())
        self.assertEqual(x.roll(1, 1).tolist(), np.roll(a, 1, 1).tolist())
        self.assertEqual(ember.roll(x, -2).tolist(), np.roll(a, -2).tolist())
        self.assertEqual(x.roll((1, 2), (0, 1)).tolist(), np.roll(a, (1, 2), (0, 1)).tolist())
        self.assertEqual(x.flip(0).tolist(), np.flip(a, 0).tolist())
        self.assertEqual(ember.flip(x, (0, 1)).tolist(), np.flip(a, (0, 1)).tolist())
        self.assertEqual(x.narrow(1, 1, 2).tolist(), a[:, 1:3].tolist())
        self.assertEqual(ember.narrow(x, 0, -1, 1).tolist(), a[-1:].tolist())
        w = ember.ones(3, 4, requires_grad=True)
        (w.roll(1, 1).flip(0) * ember.arange(4.0)).sum().backward()
        self.assertEqual(w.grad.tolist(), [[1.0, 2.0, 3.0, 0.0]] * 3)  # column c went to c + 1

    def test_arithmetic_and_types(self):
        y = ember.ones(2)
        y.add_(ember.ones(2), alpha=3)
        self.assertEqual(y.tolist(), [4.0, 4.0])
        y.sub_(1, alpha=2)
        self.assertEqual(y.tolist(), [2.0, 2.0])
        self.assertEqual(ember.add(y, ember.ones(2), alpha=0.5).tolist(), [2.5, 2.5])
        x = ember.tensor([1.0, 2.0, 3.0, 6.0])
        self.assertAlmostEqual(x.var(unbiased=False).item(), float(np.var([1, 2, 3, 6])), places=5)
        self.assertAlmostEqual(x.var(correction=0).item(), float(np.var([1, 2, 3, 6])), places=5)
        self.assertAlmostEqual(x.var().item(), float(np.var([1, 2, 3, 6], ddof=1)), places=5)
        self.assertEqual((x.type(), x.type(ember.int64).dtype, x.type("torch.DoubleTensor").dtype),
                         ("torch.FloatTensor", ember.int64, ember.float64))
        self.assertEqual(x.nelement(), 4)
        self.assertEqual(x.view(2, 2).mm(ember.tensor([[0.0, 1.0], [1.0, 0.0]])).tolist(), [[2.0, 1.0], [6.0, 3.0]])
        self.assertEqual((ember.Tensor([1, 2]).dtype, ember.Tensor(2, 3).shape), (ember.float32, (2, 3)))
        self.assertEqual((ember.inf, ember.pi, ember.e), (math.inf, math.pi, math.e))
        self.assertTrue(math.isnan(ember.nan))
        self.assertIsInstance(ember.__version__, str)

    def test_losses(self):
        a = [[0.5, -2.0], [3.0, 0.1]]
        x, zero = ember.tensor(a), ember.zeros(2, 2)
        d = np.abs(np.array(a))
        for beta in (1.0, 0.5):
            expected = np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta).mean()
            self.assertAlmostEqual(F.smooth_l1_loss(x, zero, beta=beta).item(), float(expected), places=6)
            self.assertAlmostEqual(nn.SmoothL1Loss(beta=beta)(x, zero).item(), float(expected), places=6)
        self.assertAlmostEqual(nn.L1Loss()(x, zero).item(), float(d.mean()), places=6)
        self.assertAlmostEqual(F.l1_loss(x, zero, reduction="sum").item(), float(d.sum()), places=5)
        self.assertAlmostEqual(nn.NLLLoss()(x, ember.tensor([1, 0])).item(), -(-2.0 + 3.0) / 2)

    def test_gather(self):
        a = np.random.RandomState(0).randn(3, 4, 5)
        x = ember.tensor(a.tolist(), dtype=ember.float64, requires_grad=True)
        for dim, shape in ((0, (2, 4, 5)), (1, (3, 2, 5)), (2, (2, 3, 7))):
            idx = np.random.RandomState(dim).randint(0, a.shape[dim], shape)
            # NumPy's take_along_axis on input cut to index's extent in the other dimensions.
            cut = a[tuple(slice(0, n) if d != dim else slice(None) for d, n in enumerate(shape))]
            expected = np.take_along_axis(cut, idx, dim)
            self.assertEqual(ember.gather(x, dim, ember.tensor(idx.tolist())).tolist(), expected.tolist())
        ids = ember.tensor([[1, 1], [0, 2]])
        x.zero_grad_()
        w = ember.ones(3, 3, requires_grad=True)
        w.gather(1, ids).sum().backward()  # repeated indices add up
        self.assertEqual(w.grad.tolist(), [[0, 2, 0], [1, 0, 1], [0, 0, 0]])
        with self.assertRaisesRegex(IndexError, "index 3 is out of bounds for dimension 1 with size 3"):
            w.gather(1, ember.tensor([[3]]))
        with self.assertRaisesRegex(ValueError, "sparse_grad"):
            ember.gather(w, 1, ids, sparse_grad=True)

    def test_index_add_and_scatter_add_against_numpy(self):
        r = np.random.RandomState(1)
        a = r.randn(3, 4, 5)
        for dim in (0, 1, 2):
            idx = r.randint(0, a.shape[dim], 6)  # repeats: they add up
            shape = list(a.shape)
            shape[dim] = 6
            src = r.randn(*shape)
            expected = a.copy()
            np.add.at(expected, (slice(None),) * dim + (idx,), 2.0 * src)
            got = ember.tensor(a.tolist(), dtype=ember.float64).index_add(
                dim, ember.tensor(idx.tolist()), ember.tensor(src.tolist(), dtype=ember.float64), alpha=2.0)
            np.testing.assert_allclose(got.tolist(), expected, rtol=1e-12, err_msg=f"index_add {dim}")
            index = r.randint(0, a.shape[dim], (2, 3, 4))
            src = r.randn(3, 4, 5)
            expected = a.copy()
            for p in np.ndindex(*index.shape):
                target = list(p)
                target[dim] = index[p]
                expected[tuple(target)] += src[p]
            got = ember.scatter_add(ember.tensor(a.tolist(), dtype=ember.float64), dim, ember.tensor(index.tolist()),
                                    ember.tensor(src.tolist(), dtype=ember.float64))
            np.testing.assert_allclose(got.tolist(), expected, rtol=1e-12, err_msg=f"scatter_add {dim}")
        counts = ember.zeros(4)
        counts.index_add_(0, ember.tensor([1, 1, 3]), ember.ones(3))
        self.assertEqual(counts.tolist(), [0.0, 2.0, 0.0, 1.0])
        counts.scatter_add_(0, ember.tensor([0, 0]), ember.ones(2))
        self.assertEqual(counts.tolist(), [2.0, 2.0, 0.0, 1.0])
        src = ember.ones(3, requires_grad=True)
        (ember.zeros(4).index_add(0, ember.tensor([2, 2, 0]), src) * ember.arange(4.0)).sum().backward()
        self.assertEqual(src.grad.tolist(), [2.0, 2.0, 0.0])  # each source row's target's weight
        with self.assertRaisesRegex(IndexError, "index 4 is out of bounds"):
            ember.scatter_add(ember.zeros(4), 0, ember.tensor([4]), ember.ones(1))

    def test_scatter(self):
        """Values and gradients as PyTorch 1.13 gives them (copied from its run), and
        NumPy's put_along_axis for random indices that do not repeat."""
        x = ember.zeros(3, 5, requires_grad=True)
        src = ember.arange(1, 11).float().view(2, 5).requires_grad_()
        idx = ember.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])
        y = x.scatter(0, idx, src)
        self.assertEqual(y.tolist(), [[1, 7, 8, 4, 5], [0, 2, 0, 9, 0], [6, 0, 3, 0, 10]])
        (y * ember.arange(15).float().view(3, 5)).sum().backward()
        self.assertEqual(x.grad.tolist(), [[0, 0, 0, 0, 0], [5, 0, 7, 0, 9], [0, 11, 0, 13, 0]])
        self.assertEqual(src.grad.tolist(), [[0, 6, 12, 3, 4], [10, 1, 2, 8, 14]])
        one_hot = ember.zeros(2, 4).scatter_(1, ember.tensor([[1], [3]]), 1.0)
        self.assertEqual(one_hot.tolist(), [[0, 1, 0, 0], [0, 0, 0, 1]])
        added = ember.zeros(2, 4).scatter(1, ember.tensor([[1, 1], [3, 3]]), 2.0, reduce="add")
        self.assertEqual(added.tolist(), [[0, 4, 0, 0], [0, 0, 0, 4]])
        r = np.random.RandomState(3)
        a = r.randn(4, 6)
        for dim in (0, 1):
            index = np.argsort(r.rand(*a.shape), axis=dim)[:2] if dim == 0 else np.argsort(r.rand(*a.shape), 1)[:, :3]
            values = r.randn(*index.shape)
            expected = a.copy()
            np.put_along_axis(expected, index, values, dim)
            got = ember.scatter(ember.tensor(a.tolist(), dtype=ember.float64), dim, ember.tensor(index.tolist()),
                                ember.tensor(values.tolist(), dtype=ember.float64))
            self.assertEqual(got.tolist(), expected.tolist())
        with self.assertRaisesRegex(NotImplementedError, "multiply"):
            ember.zeros(2).scatter(0, ember.tensor([0]), 2.0, reduce="multiply")
        with self.assertRaisesRegex(IndexError, "index 5 is out of bounds for dimension 0 with size 2"):
            ember.zeros(2).scatter(0, ember.tensor([5]), ember.ones(1))

    def test_cumsum_cumprod_against_numpy(self):
        r = np.random.RandomState(4)
        a = r.rand(3, 4, 5) + 0.5
        x = ember.tensor(a.tolist(), dtype=ember.float64)
        for dim in (0, 1, 2, -1):
            np.testing.assert_allclose(x.cumsum(dim).tolist(), np.cumsum(a, dim), rtol=1e-12)
            np.testing.assert_allclose(ember.cumprod(x, dim).tolist(), np.cumprod(a, dim), rtol=1e-12)
        ints = ember.tensor([[1, 2], [3, 4]], dtype=ember.int32)
        self.assertEqual((ints.cumsum(1).dtype, ints.cumsum(1).tolist()), (ember.int64, [[1, 3], [3, 7]]))
        self.assertEqual(ints.cumsum(0, dtype=ember.float32).dtype, ember.float32)
        self.assertEqual(ember.tensor([True, True, False]).cumsum(0).tolist(), [1, 2, 2])
        # Gradients as PyTorch 1.13's: cumsum's is the reverse running sum of g; cumprod's
        # exact through a zero (no division).
        v = ember.tensor([2.0, 0.0, 3.0, 4.0], requires_grad=True)
        (v.cumsum(0) * ember.tensor([1.0, 10.0, 100.0, 1000.0])).sum().backward()
        self.assertEqual(v.grad.tolist(), [1111.0, 1110.0, 1100.0, 1000.0])
        v.grad = None
        v.cumprod(0).sum().backward()
        self.assertEqual(v.grad.tolist(), [1.0, 32.0, 0.0, 0.0])

    def test_sort_and_argsort_against_numpy(self):
        r = np.random.RandomState(5)
        a = r.randint(-3, 4, (4, 6)).astype(np.float64)  # ties: a stable sort lists them by index
        x = ember.tensor(a.tolist(), dtype=ember.float64, requires_grad=True)
        for dim in (0, 1, -1):
            values, indices = ember.sort(x, dim)
            self.assertEqual(indices.tolist(), np.argsort(a, dim, kind="stable").tolist())
            self.assertEqual(values.tolist(), np.sort(a, dim).tolist())
            down = x.sort(dim=dim, descending=True, stable=True)
            self.assertEqual(down.indices.tolist(), np.argsort(-a, dim, kind="stable").tolist())
            self.assertEqual(ember.argsort(x, dim, descending=True).tolist(), down.indices.tolist())
        self.assertEqual(ember.msort(x).tolist(), np.sort(a, 0).tolist())
        nan = ember.tensor([2.0, float("nan"), -1.0])
        self.assertEqual(nan.argsort().tolist(), [2, 0, 1])  # NaN last, as PyTorch
        self.assertEqual(nan.argsort(descending=True).tolist(), [1, 0, 2])
        big = ember.tensor([2**60 + 1, 2**60])
        self.assertEqual(big.sort().values.tolist(), [2**60, 2**60 + 1])  # int64, exactly
        # The gradient goes back to where each value came from.
        w = ember.tensor([3.0, 1.0, 2.0], requires_grad=True)
        (w.sort(descending=True).values * ember.tensor([1.0, 10.0, 100.0])).sum().backward()
        self.assertEqual(w.grad.tolist(), [1.0, 100.0, 10.0])

    def test_einsum_against_numpy(self):
        r = np.random.RandomState(0)
        cases = [("ij,jk->ik", [(3, 4), (4, 5)]), ("bhid,bhjd->bhij", [(2, 3, 4, 5), (2, 3, 6, 5)]),
                 ("i,i->", [(4,), (4,)]), ("i,j->ij", [(3,), (4,)]), ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]),
                 ("bij,bjk", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
                 ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)])]
        for equation, shapes in cases:
            arrays = [r.randn(*s) for s in shapes]
            got = ember.einsum(equation, *[ember.tensor(a.tolist(), dtype=ember.float64) for a in arrays])
            np.testing.assert_allclose(got.tolist(), np.einsum(equation, *arrays), rtol=1e-12, atol=1e-12,
                                       err_msg=equation)
        a = ember.tensor(r.randn(3, 4).tolist(), dtype=ember.float64, requires_grad=True)
        b = ember.tensor(r.randn(4, 5).tolist(), dtype=ember.float64)
        ember.einsum("ij,jk->ik", a, b).sum().backward()  # d/dA sum(A B) = 1 B^T
        np.testing.assert_allclose(a.grad.tolist(), np.ones((3, 5)) @ np.array(b.tolist()).T, rtol=1e-12)
        # Repeated subscripts take diagonals (a view without gradients, as PyTorch's).
        m = r.randn(2, 3, 3)
        for equation in ("bii->bi", "bii->b", "bii", "bij,bjj->bi"):
            arrays = [m] if equation.count(",") == 0 else [m, m]
            got = ember.einsum(equation, *[ember.tensor(a.tolist(), dtype=ember.float64) for a in arrays])
            np.testing.assert_allclose(got.tolist(), np.einsum(equation, *arrays), rtol=1e-12, err_msg=equation)
        sq = ember.tensor(m[0].tolist(), dtype=ember.float64, requires_grad=True)
        ember.einsum("ii->", sq).backward()  # the trace: identity gradient
        self.assertEqual(sq.grad.tolist(), np.eye(3).tolist())
        plain = ember.zeros(3, 4)
        plain.diagonal(1).fill_(2.0)  # a view: the write reaches the tensor
        self.assertEqual(plain.tolist(), np.diag([2.0] * 3, 1)[:3, :4].tolist())
        self.assertEqual(ember.arange(12).view(3, 4).diagonal(-1).tolist(), [4, 9])

    def test_sin_and_cos(self):
        x = ember.tensor([0.0, 1.0, -2.5, 1e4], dtype=ember.float64, requires_grad=True)
        y = ember.sin(x) * 2 + x.cos()
        self.assertEqual(y.tolist(), [2 * math.sin(v) + math.cos(v) for v in (0.0, 1.0, -2.5, 1e4)])
        y.sum().backward()
        for g, v in zip(x.grad.tolist(), (0.0, 1.0, -2.5, 1e4)):
            self.assertAlmostEqual(g, 2 * math.cos(v) - math.sin(v), places=12)

    def test_compile_returns_the_model(self):
        model = nn.Linear(2, 3)
        self.assertIs(ember.compile(model), model)
        self.assertIs(ember.compile(model, mode="max-autotune", fullgraph=True, dynamic=False), model)

        @ember.compile
        def double(x):
            return x * 2

        @ember.compile(backend="inductor")
        def triple(x):
            return x * 3

        self.assertEqual((double(ember.ones(1)).tolist(), triple(ember.ones(1)).tolist()), ([2.0], [3.0]))
        with self.assertRaisesRegex(TypeError, "expected a module or a function"):
            ember.compile(3)

    def test_onnx_export_says_it_is_not_there(self):
        with self.assertRaisesRegex(NotImplementedError, "ONNX"):
            ember.onnx.export(nn.Linear(2, 2), ember.ones(1, 2), "model.onnx")


if __name__ == "__main__":
    unittest.main()
