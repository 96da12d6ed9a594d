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
        for call in (ember.cuda.synchronize, ember.cuda.get_device_name, ember.cuda.memory_allocated,
                     ember.cuda.max_memory_allocated, ember.cuda.reset_peak_memory_stats):
            with self.assertRaisesRegex(ValueError, "CUDA"):
                call()
        ember.cuda.empty_cache()  # nothing cached: nothing to do

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
