"""ember's tensors and autograd from Python, against hand-derived values and NumPy:
creation and dtypes, memory shared with NumPy both ways, operators and broadcasting,
indexing as views, autograd (gradients against float64 finite differences), PyTorch's
printing, errors as Python exceptions, and the GIL released during a long matmul."""

import gc
import threading
import time
import math
import unittest

import numpy as np

import ember


class CreationTest(unittest.TestCase):
    def test_tensor_infers_dtypes_as_torch(self):
        self.assertEqual(ember.tensor([1, 2]).dtype, ember.int64)
        self.assertEqual(ember.tensor([1, 2.5]).dtype, ember.float32)
        self.assertEqual(ember.tensor([True, False]).dtype, ember.bool)
        self.assertEqual(ember.tensor([[1, 2]], dtype=ember.float64).dtype, ember.float64)
        self.assertEqual(ember.tensor(3.5).shape, ())
        self.assertEqual(ember.tensor([[1, 2, 3], [4, 5, 6]]).shape, (2, 3))
        self.assertEqual(ember.tensor(np.ones((2, 2), dtype=np.float64)).dtype, ember.float64)

    def test_factories(self):
        self.assertEqual(ember.zeros(2, 3).tolist(), [[0.0] * 3] * 2)
        self.assertEqual(ember.ones((2,), dtype=ember.int64).tolist(), [1, 1])
        self.assertEqual(ember.full((2,), 7).tolist(), [7, 7])
        self.assertEqual(ember.arange(5).tolist(), [0, 1, 2, 3, 4])
        self.assertEqual(ember.arange(1, 2, 0.25).tolist(), [1.0, 1.25, 1.5, 1.75])
        self.assertTrue(ember.zeros(3, requires_grad=True).requires_grad)
        ember.manual_seed(7)
        a = ember.randn(4, 4).tolist()
        ember.manual_seed(7)
        self.assertEqual(ember.randn(4, 4).tolist(), a)
        u = ember.rand(1000).numpy()
        self.assertTrue(((u >= 0) & (u < 1)).all())

    def test_printing_as_torch(self):
        x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        self.assertEqual(repr(x), "tensor([[1., 2.],\n        [3., 4.]], requires_grad=True)")
        self.assertEqual(repr(x * 2), "tensor([[2., 4.],\n        [6., 8.]], grad_fn=<mul>)")
        self.assertEqual(repr(ember.arange(3)), "tensor([0, 1, 2])")
        self.assertEqual(repr(ember.tensor([1.5], dtype=ember.float64)), "tensor([1.5000], dtype=ember.float64)")
        self.assertEqual(repr(ember.float32), "ember.float32")
        self.assertEqual(repr(ember.device("cpu")), "device(type='cpu')")


class NumpyTest(unittest.TestCase):
    def test_numpy_is_a_view(self):
        t = ember.zeros(2, 3)
        n = t.numpy()
        n[1, 2] = 5
        self.assertEqual(t[1, 2].item(), 5)
        self.assertEqual(np.asarray(t.T).shape, (3, 2))  # strided views share too
        np.asarray(t.T)[2, 0] = 9
        self.assertEqual(t[0, 2].item(), 9)

    def test_from_numpy_shares_and_keeps_the_array_alive(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        t = ember.from_numpy(a)
        a[0, 0] = 42
        self.assertEqual(t[0, 0].item(), 42)
        t[2, 3] = -1  # not tracked: writes are fine
        self.assertEqual(a[2, 3], -1)
        strided = ember.from_numpy(a[:, ::2])
        self.assertEqual(strided.tolist(), a[:, ::2].tolist())
        del a
        gc.collect()
        self.assertEqual(t.sum().item(), 42 + sum(range(1, 11)) - 1)
        self.assertEqual(ember.from_numpy(np.array([1, 2], dtype=np.int32)).dtype, ember.int32)

    def test_from_numpy_refuses_what_it_cannot_share(self):
        frozen = np.zeros(3)
        frozen.flags.writeable = False
        with self.assertRaisesRegex(ValueError, "read-only"):
            ember.from_numpy(frozen)
        with self.assertRaisesRegex(ValueError, "negative"):
            ember.from_numpy(np.arange(4.0)[::-1])
        with self.assertRaisesRegex(ValueError, "no ember dtype"):
            ember.from_numpy(np.zeros(2, dtype=np.complex64))
        with self.assertRaisesRegex(ValueError, "NumPy has no bfloat16"):
            ember.zeros(2, dtype=ember.bfloat16).numpy()
        with self.assertRaisesRegex(RuntimeError, "requires grad"):
            ember.zeros(2, requires_grad=True).numpy()


class OperatorTest(unittest.TestCase):
    def test_arithmetic_matches_numpy(self):
        a = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.5]], dtype=np.float32)
        b = np.array([2.0, 0.25, -3.0], dtype=np.float32)
        x, y = ember.tensor(a), ember.tensor(b)
        for got, want in [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b), (-x, -a),
                          (2 - x, 2 - a), (1 / y, 1 / b), (x * 3, a * 3), (x ** 2, a ** 2), (abs(x), abs(a)),
                          (x @ ember.tensor(a.T), a @ a.T), (x.exp(), np.exp(a)), (x.tanh(), np.tanh(a)),
                          (x.relu(), np.maximum(a, 0)), (x.sum(dim=0), a.sum(0)), (x.mean(dim=1), a.mean(1)),
                          (x.max(), a.max()), (x.softmax(dim=-1), np.exp(a) / np.exp(a).sum(1, keepdims=True))]:
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)
        self.assertEqual((x > 0).tolist(), (a > 0).tolist())
        self.assertEqual((x == y).dtype, ember.bool)
        self.assertEqual(x.argmax().item(), 4)

    def test_indexing_gives_views(self):
        t = ember.arange(12).reshape(3, 4)
        self.assertEqual(t[1].tolist(), [4, 5, 6, 7])
        self.assertEqual(t[-1, -1].item(), 11)
        self.assertEqual(t[:, 1:3].tolist(), [[1, 2], [5, 6], [9, 10]])
        self.assertEqual(t[::2, ::3].tolist(), [[0, 3], [8, 11]])
        self.assertEqual(t[..., None].shape, (3, 4, 1))
        self.assertEqual(t[None, 1].shape, (1, 4))
        t[0, :2] = 100
        t[2] = ember.tensor([1, 2, 3, 4])
        self.assertEqual(t.tolist(), [[100, 100, 2, 3], [4, 5, 6, 7], [1, 2, 3, 4]])
        self.assertEqual([row.tolist() for row in t][1], [4, 5, 6, 7])  # iteration stops at the end
        self.assertEqual(len(t), 3)
        with self.assertRaisesRegex(IndexError, "out of bounds"):
            t[3]
        with self.assertRaisesRegex(IndexError, "too many indices"):
            t[0, 0, 0]
        with self.assertRaisesRegex(ValueError, "negative step"):
            t[::-1]

    def test_shapes(self):
        t = ember.arange(6)
        self.assertEqual(t.view(2, 3).shape, (2, 3))
        self.assertEqual(t.reshape((3, -1)).shape, (3, 2))
        self.assertEqual(t.view(2, 3).T.tolist(), [[0, 3], [1, 4], [2, 5]])
        self.assertEqual(t.view(1, 2, 3).permute(2, 0, 1).shape, (3, 1, 2))
        self.assertEqual(t.view(2, 3).transpose(0, 1).is_contiguous(), False)
        self.assertEqual(ember.cat([t, t]).shape, (12,))
        self.assertEqual(ember.stack([t, t], dim=1).shape, (6, 2))


class TorchNamesTest(unittest.TestCase):
    """tril/triu, masked_fill, split, topk and multinomial as PyTorch documents them (the
    values below are what torch 1.13 gives for the same calls)."""

    def test_tril_and_triu(self):
        ones = ember.ones(3, 4)
        self.assertEqual(ember.tril(ones).tolist(),
                         [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0]])
        self.assertEqual(ones.tril(diagonal=-1).tolist(),
                         [[0, 0, 0, 0], [1, 0, 0, 0], [1, 1, 0, 0]])
        self.assertEqual(ember.triu(ones, 1).tolist(),
                         [[0, 1, 1, 1], [0, 0, 1, 1], [0, 0, 0, 1]])
        # Over the last two dimensions of a batch, as nanoGPT's causal mask buffer.
        mask = ember.tril(ember.ones(4, 4)).view(1, 1, 4, 4)
        self.assertEqual(mask.shape, (1, 1, 4, 4))
        self.assertEqual(mask[0, 0, 1].tolist(), [1, 1, 0, 0])
        with self.assertRaisesRegex(ValueError, "tril: expected at least 2 dimensions"):
            ember.tril(ember.ones(3))

    def test_masked_fill_with_minus_infinity(self):
        att = ember.zeros(2, 2)
        mask = ember.tril(ember.ones(2, 2))
        filled = att.masked_fill(mask == 0, float("-inf"))
        self.assertEqual(filled.tolist(), [[0, float("-inf")], [0, 0]])
        self.assertEqual(filled.softmax(dim=-1).tolist(), [[1, 0], [0.5, 0.5]])
        self.assertEqual(ember.masked_fill(att, mask == 1, 2.5).tolist(), [[2.5, 0], [2.5, 2.5]])

    def test_split(self):
        t = ember.arange(10).view(2, 5)
        pieces = t.split(2, dim=1)
        self.assertEqual([p.shape for p in pieces], [(2, 2), (2, 2), (2, 1)])
        self.assertEqual(pieces[2].tolist(), [[4], [9]])
        a, b = ember.split(t, [1, 4], dim=-1)
        self.assertEqual((a.tolist(), b.tolist()), ([[0], [5]], [[1, 2, 3, 4], [6, 7, 8, 9]]))
        with self.assertRaisesRegex(ValueError, "add up to 4, not to dimension 1's 5"):
            t.split([1, 3], dim=1)

    def test_topk_is_a_named_tuple_largest_first(self):
        logits = ember.tensor([[1.0, 5.0, 3.0, 5.0], [0.0, -1.0, 2.0, 1.0]])
        values, indices = ember.topk(logits, 2)
        self.assertEqual(values.tolist(), [[5, 5], [2, 1]])
        self.assertEqual(indices.tolist(), [[1, 3], [2, 3]])
        self.assertEqual(logits.topk(1).values.tolist(), [[5], [2]])
        with self.assertRaisesRegex(ValueError, "only along the last dimension"):
            logits.topk(1, dim=0)
        weights = ember.tensor([1.0, 2.0], requires_grad=True)
        with self.assertRaisesRegex(ValueError, "under ember.no_grad"):
            weights.topk(1)
        with ember.no_grad():
            self.assertEqual(weights.topk(1).indices.tolist(), [1])

    def test_multinomial(self):
        probs = ember.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
        drawn = ember.multinomial(probs, num_samples=1)
        self.assertEqual(drawn.shape, (2, 1))
        self.assertEqual(drawn.dtype, ember.int64)
        self.assertEqual(drawn.tolist(), [[1], [2]])
        self.assertEqual(ember.tensor([0.0, 0.0, 1.0]).multinomial(1).tolist(), [2])
        self.assertEqual(probs.multinomial(3, replacement=True).tolist(), [[1, 1, 1], [2, 2, 2]])
        pairs = ember.tensor([[1.0, 1.0, 0.0]]).expand(200, 3).multinomial(2)
        self.assertEqual({tuple(sorted(p)) for p in pairs.tolist()}, {(0, 1)})  # without replacement
        self.assertEqual({p[0] for p in pairs.tolist()}, {0, 1})
        with self.assertRaisesRegex(ValueError, "without replacement"):
            probs.multinomial(4)
        with self.assertRaisesRegex(ValueError, "no positive weight"):
            probs.multinomial(2)  # a row's only positive weight is drawn first
        g = ember.Generator().manual_seed(4)
        first = ember.multinomial(ember.ones(8), 8, generator=g).tolist()
        self.assertEqual(sorted(first), list(range(8)))
        self.assertEqual(ember.multinomial(ember.ones(8), 8, generator=g.manual_seed(4)).tolist(), first)


class TensorIndexTest(unittest.TestCase):
    """Integer and bool tensors (and lists) as indices, against NumPy's advanced indexing,
    which PyTorch's follows; gradients scatter-add back."""

    def test_reads_match_numpy(self):
        a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
        x = ember.from_numpy(a.copy())
        i2, j2 = np.array([[2, 0], [1, 1]]), np.array([3, -1])
        cases = [
            (lambda t, T: t[T(i2)]), (lambda t, T: t[:, T(j2)]), (lambda t, T: t[..., T(j2)]),
            (lambda t, T: t[T(i2[0]), T(j2)]), (lambda t, T: t[:, T(j2), T(np.array([0, 4]))]),
            (lambda t, T: t[T(np.array([0, 2])), :, T(np.array([1, 3]))]),  # apart: B goes first
            (lambda t, T: t[1, T(j2)]), (lambda t, T: t[T(np.array(2))]), (lambda t, T: t[[2, 0]]),
            (lambda t, T: t[t > 30] if T is ember.tensor else t[t > 30]),
            (lambda t, T: t[:, T(np.array([True, False, True, True]))]),
            (lambda t, T: t[T(np.array([], dtype=np.int64))]),
        ]
        for n, f in enumerate(cases):
            expected = f(a, lambda v: v)
            got = f(x, ember.tensor)
            self.assertEqual(tuple(got.shape), expected.shape, n)
            self.assertEqual(got.tolist(), expected.tolist(), n)

    def test_gradients_add_up_over_repeated_indices(self):
        w = ember.zeros(4, 3, requires_grad=True)
        (w[ember.tensor([[1, 1], [3, 0]])] * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
        self.assertEqual(w.grad.tolist(), [[1, 2, 3], [2, 4, 6], [0, 0, 0], [1, 2, 3]])
        v = ember.ones(2, 3, requires_grad=True)
        v[ember.tensor([0, 1, 1]), ember.tensor([2, 0, 0])].sum().backward()
        self.assertEqual(v.grad.tolist(), [[0, 0, 1], [2, 0, 0]])

    def test_assignment_through_integer_indices_matches_numpy(self):
        a = np.zeros((3, 4))
        x = ember.zeros(3, 4, dtype=ember.float64)
        for key_np, key_em, value in (
                ((np.array([0, 2]),), (ember.tensor([0, 2]),), 1.0),
                ((slice(None), [1, 3]), (slice(None), [1, 3]), np.array([5.0, 6.0])),
                ((np.array([1]), np.array([0])), (ember.tensor([1]), ember.tensor([0])), 9.0),
                ((np.arange(3), np.array([2, 0, 3])), (ember.arange(3), ember.tensor([2, 0, 3])), -1.0)):
            a[key_np] = value
            x[key_em] = ember.tensor(value.tolist(), dtype=ember.float64) if isinstance(value, np.ndarray) else value
            self.assertEqual(x.tolist(), a.tolist())
        labels = ember.zeros(4, dtype=ember.int64)
        labels[ember.tensor([1, 3])] = ember.tensor([7, 8])
        self.assertEqual(labels.tolist(), [0, 7, 0, 8])
        t = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = ember.tensor([10.0, 20.0], requires_grad=True)
        y = t * 2
        y[ember.tensor([2, 0])] = v * 3  # values and gradients as PyTorch 1.13 gives them
        (y * ember.tensor([1.0, 2.0, 3.0])).sum().backward()
        self.assertEqual((y.tolist(), t.grad.tolist(), v.grad.tolist()), ([60.0, 4.0, 30.0], [0.0, 4.0, 0.0], [9.0, 3.0]))
        z = ember.zeros(3)
        z[ember.tensor([1, 1])] = 4.0  # a number: picking a position twice is fine
        self.assertEqual(z.tolist(), [0.0, 4.0, 0.0])
        with self.assertRaisesRegex(IndexError, "picks a position twice"):
            z[ember.tensor([1, 1])] = ember.tensor([1.0, 2.0])

    def test_errors_name_the_index(self):
        x = ember.zeros(3, 4)
        with self.assertRaisesRegex(IndexError, "index 3 is out of bounds for dimension 0 with size 3"):
            x[ember.tensor([0, 3])]
        with self.assertRaisesRegex(IndexError, "index 4 is out of bounds for dimension 1 with size 4"):
            x[ember.tensor([0]), ember.tensor([4])]
        with self.assertRaisesRegex(IndexError, "shape of the mask \\[4\\] at index 0 does not match"):
            x[ember.ones(4, dtype=ember.bool)]
        with self.assertRaisesRegex(IndexError, "must be integer or bool"):
            x[ember.tensor([0.0])]
        self.assertEqual(ember.nonzero(ember.tensor([[0, 1], [1, 1]])).tolist(), [[0, 1], [1, 0], [1, 1]])
        self.assertEqual([t.tolist() for t in ember.tensor([0, 2, 0, 5]).nonzero(as_tuple=True)], [[1, 3]])
        self.assertEqual(ember.index_select(x, 1, ember.tensor([3, 3])).shape, (3, 2))


class InPlaceAutogradTest(unittest.TestCase):
    """In-place ops on results of recorded ops, as PyTorch's version counters allow them:
    the write is recorded (gradients flow through it), and a backward that saved the old
    values refuses, naming the op; a leaf, and a view of a recorded tensor, are refused."""

    def test_safe_writes_are_recorded(self):
        x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x * 2
        y.masked_fill_(y < 0, 0.0)  # attention's scores.masked_fill_(mask, -inf)
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [2.0, 0.0, 2.0])
        x.zero_grad_()
        y = x * 3
        y[1] = 5.0  # d/dx sum(y^2): 2 * 3x * 3 where not overwritten
        (y * y).sum().backward()
        self.assertEqual(x.grad.tolist(), [18.0, 0.0, 54.0])
        x.zero_grad_()
        y = x * 1
        y.mul_(x)  # x^2: mul_ keeps a copy of y's old values for its own backward
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [2.0, -4.0, 6.0])
        x.zero_grad_()
        y = x + 1
        z = y.sigmoid()  # saves its output, not y
        y.copy_(x * 5)
        (z.sum() + y.sum()).backward()
        s = [1 / (1 + math.exp(-(v + 1))) for v in (1.0, -2.0, 3.0)]
        for g, sv in zip(x.grad.tolist(), s):
            self.assertAlmostEqual(g, sv * (1 - sv) + 5, places=6)
        x.zero_grad_()
        y = x * 3
        y.zero_()
        (y + x).sum().backward()
        self.assertEqual(x.grad.tolist(), [1.0, 1.0, 1.0])

    def test_assigning_a_recorded_value_records_the_write(self):
        """PyTorch's CopySlices: out[key] = v with v requiring grad gives out v's history,
        whether out recorded before or not (values as PyTorch 1.13 gives them)."""
        x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        out = ember.zeros(3, 2, 2)  # a plain buffer, rows filled in a loop
        for t in range(3):
            out[t] = x * (t + 1)
        self.assertFalse(out.is_leaf)
        (out * out).sum().backward()  # sum_t (t + 1)^2 x^2: 2 x (1 + 4 + 9)
        self.assertEqual(x.grad.tolist(), [[28.0, 56.0], [84.0, 112.0]])
        x.grad = None
        y = x * 1
        y[:, 0] = x[:, 1] * 3  # into a recorded tensor: both gradients
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [[0.0, 4.0], [0.0, 4.0]])
        x.grad = None
        z = ember.zeros(2, 2)
        z[z.sum(1) == 0] = x  # a bool mask
        z[0, 1] = 7.0  # and a later plain write into the recorded result
        z.sum().backward()
        self.assertEqual(x.grad.tolist(), [[1.0, 0.0], [1.0, 1.0]])
        with self.assertRaisesRegex(RuntimeError, "into a view of another tensor"):
            ember.zeros(2, 2)[0][:1] = x[0, :1]  # the buffer would not learn of it

    def test_unsafe_writes_fail_in_backward(self):
        x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x.exp()  # saves y
        before = y._version
        y.add_(1)
        self.assertEqual(y._version, before + 1)
        with self.assertRaisesRegex(ValueError, "modified by an in-place operation.*that exp saved"):
            y.sum().backward()
        y = x.exp()
        y[0] = 1.0
        with self.assertRaisesRegex(ValueError, "that exp saved is at version"):
            y.sum().backward()

    def test_refused_writes(self):
        x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
        with self.assertRaisesRegex(RuntimeError, "a leaf Variable that requires grad"):
            x.add_(1)
        with self.assertRaisesRegex(RuntimeError, "in-place write to a view \\(slice\\)"):
            (x * 3)[1:].add_(1)
        with ember.no_grad():
            x.add_(1)  # a parameter's update
        self.assertEqual(x.tolist(), [2.0, -1.0, 4.0])

    def test_custom_functions_check_their_saved_tensors(self):
        class Square(ember.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a * a

            @staticmethod
            def backward(ctx, grad):
                (a,) = ctx.saved_tensors
                return grad * 2 * a

        x = ember.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        out = Square.apply(h)
        h.add_(1)
        with self.assertRaisesRegex(RuntimeError, "modified by an inplace operation"):
            out.sum().backward()


class RawMemoryTest(unittest.TestCase):
    """frombuffer, as_strided and view(dtype): views of memory as it lies, as PyTorch's."""

    def test_frombuffer_shares_a_writable_buffer(self):
        data = bytearray(np.array([1.5, -2.0, 4.0], dtype=np.float32).tobytes())
        t = ember.frombuffer(data, dtype=ember.float32)
        self.assertEqual(t.tolist(), [1.5, -2.0, 4.0])
        t[0] = 8.0
        self.assertEqual(np.frombuffer(bytes(data[:4]), dtype=np.float32)[0], 8.0)  # the same memory
        self.assertEqual(ember.frombuffer(data, dtype=ember.float32, count=1, offset=4).tolist(), [-2.0])
        self.assertEqual(ember.frombuffer(b"\x01\x00\x02\x00", dtype=ember.uint16).tolist(), [1, 2])  # copied
        with self.assertRaisesRegex(ValueError, "not a whole number"):
            ember.frombuffer(bytearray(6), dtype=ember.float32)
        with self.assertRaisesRegex(ValueError, "need 16 bytes"):
            ember.frombuffer(bytearray(8), dtype=ember.float32, count=4)

    def test_as_strided_and_stride(self):
        x = ember.arange(12.0)
        self.assertEqual(x.as_strided((3, 2), (4, 1), 1).tolist(), [[1.0, 2.0], [5.0, 6.0], [9.0, 10.0]])
        window = x.as_strided((2, 3), (0, 1))  # stride 0: the same row twice
        self.assertEqual(window.tolist(), [[0.0, 1.0, 2.0]] * 2)
        y = x.view(3, 4).t()
        self.assertEqual((y.stride(), y.stride(0), y.storage_offset()), ((1, 4), 1, 0))
        self.assertEqual(x[5:].storage_offset(), 5)
        with self.assertRaisesRegex(ValueError, "needs .* bytes"):
            x.as_strided((4,), (4,))
        with self.assertRaisesRegex(ValueError, "records no gradient"):
            ember.ones(2, requires_grad=True).as_strided((2,), (1,))

    def test_view_as_another_dtype(self):
        x = ember.tensor([1.0, -2.0])
        self.assertEqual(x.view(ember.int32).tolist(), [1065353216, -1073741824])  # IEEE 754 bits
        self.assertEqual(x.view(ember.uint8).shape, (8,))
        self.assertEqual(x.view(ember.uint8).view(ember.float32).tolist(), [1.0, -2.0])
        self.assertEqual(ember.tensor([1.0]).to(ember.bfloat16).view(ember.uint16).tolist(), [0x3F80])
        pairs = ember.zeros(2, 4, dtype=ember.uint8).view(ember.uint16)
        self.assertEqual(pairs.shape, (2, 2))
        self.assertEqual(x.view(2, 1).shape, (2, 1))  # view(*shape) as before
        with self.assertRaisesRegex(ValueError, "last dimension must be contiguous"):
            ember.zeros(4, 2).t().view(ember.float64)
        with self.assertRaisesRegex(ValueError, "not a whole number of 8-byte elements"):
            ember.zeros(3).view(ember.float64)


class AdvancedIndexTest(unittest.TestCase):
    """A list of integers as an index (a copy, the dimension kept) and a bool mask on the
    left of an assignment, as nanoGPT's generate() uses them; values from torch 1.13."""

    def test_a_list_index(self):
        t = ember.arange(12).view(3, 4)
        self.assertEqual(t[:, [-1]].tolist(), [[3], [7], [11]])
        self.assertEqual(t[[0, 2]].tolist(), [[0, 1, 2, 3], [8, 9, 10, 11]])
        self.assertEqual(t[:, [1, 1]].shape, (3, 2))
        x = ember.arange(6.0).view(2, 3).detach()
        x.requires_grad_(True)
        x[:, [1, 1]].sum().backward()
        self.assertEqual(x.grad.tolist(), [[0, 2, 0], [0, 2, 0]])
        self.assertEqual(t[[0, 2], [1, 3]].tolist(), [1, 11])  # paired element by element
        with self.assertRaisesRegex(IndexError, "out of bounds"):
            t[:, [4]]

    def test_a_bool_mask_assignment(self):
        logits = ember.tensor([[1.0, 5.0, 3.0], [2.0, 0.0, 4.0]])
        v, _ = ember.topk(logits, 2)
        logits[logits < v[:, [-1]]] = -float("Inf")
        self.assertEqual(logits.tolist(), [[-float("inf"), 5, 3], [2, -float("inf"), 4]])
        m = ember.zeros(2, 3)
        m[m == 0] = ember.tensor(2.0)
        self.assertEqual(m.tolist(), [[2, 2, 2], [2, 2, 2]])
        with self.assertRaisesRegex(IndexError, "must be integer or bool, not f32"):
            m[ember.zeros(2, 3)] = 1.0


class ProtocolTest(unittest.TestCase):
    def test_index_and_format_as_torch(self):
        a = np.arange(10)
        i = ember.tensor(3)
        self.assertEqual(a[i:i + 2].tolist(), [3, 4])  # __index__: nanoGPT's get_batch
        with self.assertRaisesRegex(TypeError, "integer tensors of a single element"):
            a[ember.tensor(1.0):]
        self.assertEqual(f"{ember.tensor(2.5):.3f}", "2.500")  # a 0-d tensor as its number
        self.assertEqual(f"{ember.tensor([1.0, 2.0])}", str(ember.tensor([1.0, 2.0])))


class AutogradTest(unittest.TestCase):
    def f(self, x, w):
        return ((x @ w).tanh() * x.sum(dim=1, keepdim=True) - 0.5 / (1 + x * x).sqrt().sum()).mean()

    def test_gradients_match_finite_differences(self):
        rng = np.random.default_rng(3)
        xs, ws = rng.normal(size=(3, 4)), rng.normal(size=(4, 4))
        x = ember.tensor(xs, requires_grad=True)
        w = ember.tensor(ws, requires_grad=True)
        self.assertEqual(x.dtype, ember.float64)
        loss = self.f(x, w)
        self.assertEqual(loss.grad_fn, "mean")
        loss.backward()
        for param, values in [(x, xs), (w, ws)]:
            numeric = np.zeros_like(values)
            for i in np.ndindex(values.shape):
                for sign in (1, -1):
                    shifted = values.copy()
                    shifted[i] += sign * 1e-6
                    args = (ember.tensor(shifted), w.detach()) if param is x else (x.detach(), ember.tensor(shifted))
                    numeric[i] += sign * self.f(*args).item() / 2e-6
            np.testing.assert_allclose(param.grad.numpy(), numeric, rtol=1e-5, atol=1e-8)

    def test_grad_mode(self):
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        self.assertIsNone(x.grad)
        self.assertTrue(x.is_leaf)
        with ember.no_grad():
            self.assertFalse(ember.is_grad_enabled())
            self.assertFalse((x * 2).requires_grad)
        self.assertTrue(ember.is_grad_enabled())
        self.assertFalse(x.detach().requires_grad)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        self.assertEqual(x.grad.tolist(), [4.0, 8.0])  # accumulated twice
        with self.assertRaises(RuntimeError):
            x[0] = 1.0  # in place on a leaf that requires grad
        (x * ember.tensor([1.0, 1.0])).backward(ember.tensor([1.0, 0.5]))
        self.assertEqual(x.grad.tolist(), [5.0, 8.5])

        @ember.no_grad()  # as a decorator, as torch.no_grad()
        def doubled(t):
            self.assertFalse(ember.is_grad_enabled())
            return t * 2

        self.assertFalse(doubled(x).requires_grad)
        self.assertEqual(doubled.__name__, "doubled")
        self.assertTrue(ember.is_grad_enabled())


class ScaledSoftplus(ember.autograd.Function):
    """y = log(1 + e^(a x)) / a, as torch.autograd.Function is documented: a tensor and
    a plain number in, the gradient by hand."""

    @staticmethod
    def forward(ctx, x, a):
        ctx.a = a
        ctx.save_for_backward(x)
        return (1 + (x * a).exp()).log() / a

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x * ctx.a).sigmoid(), None


class FunctionTest(unittest.TestCase):
    def test_a_custom_function_gradient_matches_finite_differences(self):
        xs = np.array([-2.0, -0.3, 0.0, 0.7, 3.0])
        x = ember.tensor(xs, requires_grad=True)
        w = ember.tensor(np.linspace(0.5, 1.5, 5), requires_grad=True)
        y = ScaledSoftplus.apply(x * w, 1.7)
        self.assertEqual(y.grad_fn, "ScaledSoftplus")
        np.testing.assert_allclose(y.detach().numpy(), np.log1p(np.exp(1.7 * xs * w.detach().numpy())) / 1.7,
                                   rtol=1e-12)
        (y * y).sum().backward()  # through the function and the ops around it
        f = lambda v: float(np.sum((np.log1p(np.exp(1.7 * v * w.detach().numpy())) / 1.7) ** 2))
        numeric = [(f(xs + e) - f(xs - e)) / 2e-6 for e in np.eye(5) * 1e-6]
        np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-6)
        self.assertIsNotNone(w.grad)

    def test_apply_records_only_where_a_gradient_is_needed(self):
        plain = ScaledSoftplus.apply(ember.tensor([1.0]), 2.0)
        self.assertFalse(plain.requires_grad)
        x = ember.tensor([1.0], requires_grad=True)
        with ember.no_grad():
            self.assertFalse(ScaledSoftplus.apply(x, 2.0).requires_grad)
        seen = []

        class Identity(ember.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                seen.append(ctx.needs_input_grad)
                return a  # an input returned as it is: the node goes on a new handle

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None

        out = Identity.apply(x, ember.tensor([5.0]))
        self.assertEqual(seen, [(True, False)])
        self.assertTrue(x.is_leaf)
        out.sum().backward()
        self.assertEqual(x.grad.tolist(), [2.0])

    def test_mistakes_are_named(self):
        class TwoOutputs(ember.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1, x * 2

        class WrongCount(ember.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                return grad, grad

        x = ember.tensor([1.0], requires_grad=True)
        with self.assertRaisesRegex(NotImplementedError, "one output"):
            TwoOutputs.apply(x)
        with self.assertRaisesRegex(ValueError, "returned 2 values for 1 arguments"):
            WrongCount.apply(x).sum().backward()
        with self.assertRaisesRegex(TypeError, "save_for_backward takes tensors"):
            ember.autograd.FunctionCtx(()).save_for_backward(1.0)


class ErrorTest(unittest.TestCase):
    def test_errors_are_exceptions_with_embers_message(self):
        with self.assertRaisesRegex(ValueError, r"add: shapes \[2\] and \[3\] cannot be broadcast"):
            ember.tensor([1, 2]) + ember.tensor([1, 2, 3])
        with self.assertRaisesRegex(ValueError, "matmul"):
            ember.ones(2, 3) @ ember.ones(2, 3)
        with self.assertRaisesRegex(ValueError, "has 4 elements, not 1"):
            ember.ones(2, 2).item()
        with self.assertRaisesRegex(ValueError, "unknown device|expected"):
            ember.zeros(2, device="tpu")
        with self.assertRaises(ValueError):
            ember.zeros(2).to("cuda:7")  # no such GPU, or no CUDA in this build
        with self.assertRaisesRegex(TypeError, "expected a Tensor or a number"):
            ember.ones(2) + "a"
        with self.assertRaisesRegex(ValueError, "rectangular|ragged|length"):
            ember.tensor([[1, 2], [3]])


class GilTest(unittest.TestCase):
    def test_matmul_releases_the_gil(self):
        a = ember.randn(1536, 1536)
        done = threading.Event()
        worker = threading.Thread(target=lambda: ([a @ a for _ in range(3)], done.set()))
        ticks = 0
        worker.start()
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)
        worker.join()
        self.assertGreater(ticks, 10)


if __name__ == "__main__":
    unittest.main()
