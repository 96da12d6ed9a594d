"""ember.cuda, ember.backends.cuda and moving tensors and modules (.cuda(), .cpu(),
is_cuda): torch's names over ember::cuda. Without a GPU (every CI machine) the calls
that need one raise ValueError naming CUDA; with one, the allocator's counters follow a
tensor's life and a module's parameters move in place; the TF32 switch reads back what
was set."""

import unittest

import ember
import ember.backends.cuda


class CudaTest(unittest.TestCase):
    def test_availability_is_the_device_count(self):
        self.assertEqual(ember.cuda.is_available(), ember.cuda.device_count() > 0)
        self.assertGreaterEqual(ember.cuda.device_count(), 0)

    def test_without_a_gpu_the_calls_that_need_one_say_why(self):
        if ember.cuda.is_available():
            self.skipTest("a GPU is here")
        for call in (ember.cuda.synchronize, ember.cuda.get_device_name, ember.cuda.reset_peak_memory_stats):
            with self.assertRaisesRegex(ValueError, "CUDA"):
                call()
        ember.cuda.empty_cache()  # nothing cached: nothing to do
        # The memory queries answer as PyTorch's do before CUDA is initialised.
        self.assertEqual((ember.cuda.memory_allocated(), ember.cuda.max_memory_allocated()), (0, 0))
        self.assertEqual(ember.cuda.memory_stats(), {})

    def test_devices_are_named_as_in_torch(self):
        with self.assertRaisesRegex(ValueError, "expected a CUDA device"):
            ember.cuda.synchronize("cpu")
        with self.assertRaises(ValueError):
            ember.cuda.synchronize("tpu:0")

    def test_the_allocator_counts_a_tensor_on_the_gpu(self):
        if not ember.cuda.is_available():
            self.skipTest("no GPU here")
        ember.cuda.synchronize()
        self.assertTrue(ember.cuda.get_device_name())  # "NVIDIA H200", say
        before = ember.cuda.memory_allocated()
        ember.cuda.reset_peak_memory_stats()
        x = ember.zeros(1024, 256, device="cuda")
        self.assertEqual(ember.cuda.memory_allocated("cuda:0") - before, 1024 * 256 * 4)
        del x
        self.assertEqual(ember.cuda.memory_allocated(0), before)
        self.assertGreaterEqual(ember.cuda.max_memory_allocated(), before + 1024 * 256 * 4)
        self.assertGreaterEqual(ember.cuda.memory_stats()["cached_bytes"], 1024 * 256 * 4)

    def test_tensors_and_modules_move_as_in_torch(self):
        x = ember.ones(2, 3)
        model = ember.nn.Linear(3, 2)
        self.assertFalse(x.is_cuda)
        # A conversion to where the tensor is already returns the tensor itself, as torch's.
        for same in (x.cpu(), x.float(), x.to("cpu"), x.to(ember.float32), x.to(x)):
            self.assertIs(same, x)
        self.assertIsNot(x.double(), x)
        self.assertIs(model.cpu(), model)
        self.assertFalse(model.weight.is_cuda)
        with self.assertRaisesRegex(ValueError, "not a CUDA device"):
            x.cuda("cpu")
        if not ember.cuda.is_available():
            for move in (x.cuda, lambda: x.cuda(0), lambda: x.cuda("cuda:0"), model.cuda):
                with self.assertRaisesRegex(ValueError, "CUDA"):
                    move()
            return
        y = x.cuda()
        self.assertTrue(y.is_cuda)
        self.assertEqual(str(y.device), "cuda:0")
        self.assertIs(y.cuda(0), y)  # already there: the same tensor
        self.assertEqual(y.cpu().tolist(), x.tolist())
        weight = model.weight
        self.assertIs(model.cuda(), model)
        self.assertIs(model.weight, weight)  # moved in place, as torch's parameters
        self.assertTrue(weight.is_cuda)

    def test_a_training_step_on_the_gpu_under_bf16_autocast_matches_the_cpu(self):
        """nanoGPT's GPU path: .cuda() model and batch, a forward under bf16 autocast,
        backward and AdamW; the loss and gradients within bf16's rounding of the same
        step in f32 on the CPU, the master weights f32 and stepped."""
        if not ember.cuda.is_available():
            self.skipTest("no GPU here")
        import numpy as np
        import ember.nn as nn
        import ember.nn.functional as F

        def step(device, autocast):
            ember.manual_seed(5)
            model = nn.Sequential(nn.Embedding(50, 64), nn.LayerNorm(64), nn.Linear(64, 256), nn.GELU(),
                                  nn.Linear(256, 50)).to(device)
            before = [p.detach().cpu().numpy() for p in model.parameters()]
            opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
            ids = ember.tensor(np.arange(64).reshape(4, 16) % 50).to(device)
            with ember.autocast(device_type=device, dtype=ember.bfloat16, enabled=autocast):
                logits = model(ids)
                loss = F.cross_entropy(logits.view(-1, 50), ids.view(-1))
            loss.backward()
            grads = [p.grad.cpu().numpy() for p in model.parameters()]
            opt.step()
            after = [p.detach().cpu().numpy() for p in model.parameters()]
            return loss.item(), grads, before, after

        cpu_loss, cpu_grads, _, _ = step("cpu", False)
        gpu_loss, gpu_grads, before, after = step("cuda", True)
        self.assertAlmostEqual(gpu_loss, cpu_loss, delta=0.01 * cpu_loss)
        for got, want in zip(gpu_grads, cpu_grads):
            self.assertEqual(got.dtype, np.float32)  # gradients reach the f32 masters
            np.testing.assert_allclose(got, want, rtol=0.05, atol=0.02 * float(np.abs(want).max()))
        for b, a in zip(before, after):
            self.assertEqual(a.dtype, np.float32)
            self.assertGreater(float(np.abs(a - b).max()), 5e-3)  # AdamW's first step: about lr

    def test_tf32_is_off_by_default_and_reads_back(self):
        matmul = ember.backends.cuda.matmul
        self.assertFalse(matmul.allow_tf32)
        try:
            matmul.allow_tf32 = True
            self.assertTrue(matmul.allow_tf32)
            self.assertIn("allow_tf32=True", repr(matmul))
        finally:
            matmul.allow_tf32 = False
        self.assertFalse(matmul.allow_tf32)


if __name__ == "__main__":
    unittest.main()
