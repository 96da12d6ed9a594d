"""ember.utils.data and ember's generators against PyTorch's documented behaviour: the
samplers' orders (permutations, draws with replacement, subsets, batches), a DataLoader
that follows sampler=, batch_sampler=, shuffle= with generator=, batch_size=None and
iterable datasets, PyTorch's rules for its arguments (each documented keyword honoured or
refused by name), default_collate, and Generator objects whose streams are their own."""

import collections
import inspect
import os
import unittest

import numpy as np

import ember
from ember.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                              SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, default_collate,
                              get_worker_info, random_split)
from ember.utils.data import dataloader, sampler  # torch's module paths


class Range(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


def flat(loader):
    return [int(v) for batch in loader for v in batch.tolist()]


class GeneratorTest(unittest.TestCase):
    def test_a_generator_is_its_own_stream(self):
        g = ember.Generator().manual_seed(7)
        a = ember.rand(5, generator=g).tolist()
        ember.manual_seed(0)
        ember.rand(3)  # the default generator moves; g does not
        self.assertEqual(ember.rand(5, generator=ember.Generator().manual_seed(7)).tolist(), a)
        self.assertEqual(g.initial_seed(), 7)
        state = g.get_state()
        b = ember.randn(4, generator=g).tolist()
        g.set_state(state)
        self.assertEqual(ember.randn(4, generator=g).tolist(), b)
        self.assertIs(g.manual_seed(1), g)  # chains, as torch.Generator().manual_seed(...)
        self.assertEqual(str(ember.Generator(device="cpu").device), "cpu")
        self.assertIsInstance(ember.default_generator, ember.Generator)
        self.assertEqual(ember.Generator().manual_seed(-1).initial_seed(), 2**64 - 1)  # modulo 2^64
        with self.assertRaisesRegex(TypeError, "generator"):
            ember.rand(2, generator=3)

    def test_randperm_and_randint_take_a_generator(self):
        p = ember.randperm(50, generator=ember.Generator().manual_seed(2))
        self.assertEqual((p.dtype, sorted(p.tolist())), (ember.int64, list(range(50))))
        self.assertEqual(ember.randperm(50, generator=ember.Generator().manual_seed(2)).tolist(), p.tolist())
        self.assertEqual(ember.randperm(4, dtype=ember.int32).dtype, ember.int32)
        r = ember.randint(3, 6, (200,), generator=ember.Generator().manual_seed(1))
        self.assertEqual(sorted(set(r.tolist())), [3, 4, 5])
        ember.manual_seed(9)
        first = ember.randperm(10).tolist()
        ember.manual_seed(9)
        self.assertEqual(ember.randperm(10).tolist(), first)
        ember.cuda.manual_seed_all(9)  # one generator for every device
        self.assertEqual(ember.randperm(10).tolist(), first)


class SamplerTest(unittest.TestCase):
    def test_random_sampler_without_replacement_is_whole_permutations(self):
        data = Range(10)
        order = list(RandomSampler(data, generator=ember.Generator().manual_seed(1)))
        self.assertEqual(sorted(order), list(range(10)))
        longer = list(RandomSampler(data, num_samples=25, generator=ember.Generator().manual_seed(1)))
        self.assertEqual(len(longer), 25)
        self.assertEqual((sorted(longer[:10]), sorted(longer[10:20])), (list(range(10)), list(range(10))))
        self.assertEqual(len(set(longer[20:])), 5)

    def test_random_sampler_with_replacement_draws_independently(self):
        drawn = list(RandomSampler(Range(4), replacement=True, num_samples=4000,
                                   generator=ember.Generator().manual_seed(3)))
        self.assertEqual(len(drawn), 4000)
        counts = collections.Counter(drawn)
        self.assertEqual(sorted(counts), [0, 1, 2, 3])
        for c in counts.values():  # 1000 expected; 6 standard deviations is 164
            self.assertLess(abs(c - 1000), 164)
        with self.assertRaisesRegex(ValueError, "num_samples should be a positive integer"):
            RandomSampler(Range(4), num_samples=0)
        with self.assertRaisesRegex(TypeError, "replacement should be a boolean"):
            RandomSampler(Range(4), replacement=1)

    def test_weighted_random_sampler_follows_the_weights(self):
        from ember.utils.data import WeightedRandomSampler
        drawn = list(WeightedRandomSampler([1.0, 0.0, 3.0], 8000, generator=ember.Generator().manual_seed(2)))
        counts = collections.Counter(drawn)
        self.assertEqual(counts[1], 0)  # a zero weight is never drawn
        self.assertLess(abs(counts[0] - 2000), 6 * (8000 * 0.25 * 0.75) ** 0.5)
        once = list(WeightedRandomSampler([1.0, 1.0, 1.0, 1.0], 4, replacement=False))
        self.assertEqual(sorted(once), [0, 1, 2, 3])  # without replacement: each index once
        with self.assertRaisesRegex(ValueError, "num_samples should be a positive integer"):
            WeightedRandomSampler([1.0], 0)

    def test_subset_sequential_and_batch_samplers(self):
        self.assertEqual(list(SequentialSampler(Range(3))), [0, 1, 2])
        picked = list(SubsetRandomSampler([5, 7, 9], generator=ember.Generator().manual_seed(0)))
        self.assertEqual(sorted(picked), [5, 7, 9])
        self.assertEqual(list(BatchSampler(range(7), 3, drop_last=False)), [[0, 1, 2], [3, 4, 5], [6]])
        self.assertEqual(len(BatchSampler(range(7), 3, drop_last=True)), 2)
        with self.assertRaisesRegex(ValueError, "batch_size should be a positive integer"):
            BatchSampler(range(7), 0, drop_last=False)


class DataLoaderTest(unittest.TestCase):
    def test_batches_collate_as_pytorch(self):
        data = TensorDataset(ember.arange(10.0).view(5, 2), ember.arange(5))
        batches = list(DataLoader(data, batch_size=2))
        self.assertEqual(len(batches), 3)
        x, y = batches[0]
        self.assertEqual((x.tolist(), y.tolist()), ([[0.0, 1.0], [2.0, 3.0]], [0, 1]))
        self.assertEqual(len(DataLoader(data, batch_size=2, drop_last=True)), 2)
        self.assertEqual(len(list(DataLoader(data, batch_size=2, drop_last=True))), 2)

        class Records:
            def __len__(self):
                return 3

            def __getitem__(self, i):
                return {"n": i, "x": float(i) / 2, "a": np.full(2, i, dtype=np.float32), "s": f"#{i}"}

        batch = next(iter(DataLoader(Records(), batch_size=3)))
        self.assertEqual((batch["n"].dtype, batch["n"].tolist()), (ember.int64, [0, 1, 2]))
        self.assertEqual((batch["x"].dtype, batch["x"].tolist()), (ember.float64, [0.0, 0.5, 1.0]))
        self.assertEqual(batch["a"].tolist(), [[0, 0], [1, 1], [2, 2]])
        self.assertEqual(batch["s"], ["#0", "#1", "#2"])

    def test_default_collate_keeps_named_tuples_and_refuses_other_objects(self):
        Point = collections.namedtuple("Point", "x y")
        batch = default_collate([Point(1, 2.0), Point(3, 4.0)])
        self.assertIsInstance(batch, Point)
        self.assertEqual((batch.x.tolist(), batch.y.tolist()), ([1, 3], [2.0, 4.0]))
        self.assertEqual(default_collate([np.float32(1.5), np.float32(2.5)]).tolist(), [1.5, 2.5])
        with self.assertRaisesRegex(TypeError, "default_collate: batch must contain"):
            default_collate([object(), object()])
        with self.assertRaisesRegex(RuntimeError, "equal size"):
            default_collate([[1, 2], [3]])

    def test_shuffle_follows_the_generator(self):
        data = TensorDataset(ember.arange(20))
        orders = []
        for _ in range(2):
            ember.manual_seed(3)
            orders.append([int(v) for (batch,) in DataLoader(data, batch_size=6, shuffle=True)
                           for v in batch.tolist()])
        self.assertEqual(orders[0], orders[1])
        self.assertEqual(sorted(orders[0]), list(range(20)))
        self.assertNotEqual(orders[0], list(range(20)))
        loader = DataLoader(Range(20), batch_size=6, shuffle=True, generator=ember.Generator().manual_seed(5))
        again = DataLoader(Range(20), batch_size=6, shuffle=True, generator=ember.Generator().manual_seed(5))
        self.assertEqual(flat(loader), flat(again))
        self.assertNotEqual(flat(loader), flat(loader))  # a fresh permutation each epoch

    def test_a_given_sampler_decides_the_order(self):
        order = [3, 1, 4, 1, 5, 9, 2, 6]

        class Fixed(sampler.Sampler):
            def __iter__(self):
                return iter(order)

            def __len__(self):
                return len(order)

        self.assertEqual(flat(DataLoader(Range(10), batch_size=3, sampler=Fixed())), order)
        self.assertEqual(len(DataLoader(Range(10), batch_size=3, sampler=Fixed())), 3)
        drawn = DataLoader(Range(5), batch_size=4,
                           sampler=RandomSampler(Range(5), replacement=True, num_samples=12))
        self.assertEqual((len(drawn), len(flat(drawn))), (3, 12))
        batches = [b.tolist() for b in DataLoader(Range(10), batch_sampler=[[0, 9], [5], [2, 2, 2]])]
        self.assertEqual(batches, [[0, 9], [5], [2, 2, 2]])

    def test_without_batches_and_from_a_stream(self):
        self.assertEqual(list(DataLoader(Range(3), batch_size=None)), [0, 1, 2])  # default_convert
        arrays = DataLoader([np.ones(2, dtype=np.float32)], batch_size=None)
        self.assertIsInstance(next(iter(arrays)), ember.Tensor)
        self.assertEqual([b.tolist() for b in DataLoader(Stream(7), batch_size=3)], [[0, 1, 2], [3, 4, 5], [6]])
        self.assertEqual(len(DataLoader(Stream(7), batch_size=3, drop_last=True)), 2)
        self.assertEqual(list(DataLoader(Stream(2), batch_size=None)), [0, 1])
        self.assertIsNone(get_worker_info())

    def test_datasets_compose(self):
        both = Range(3) + Range(2)
        self.assertIsInstance(both, ConcatDataset)
        self.assertEqual([both[i] for i in range(len(both))], [0, 1, 2, 0, 1])
        self.assertEqual(both[-1], 1)
        self.assertEqual([Subset(Range(10), [7, 3])[i] for i in range(2)], [7, 3])
        parts = random_split(Range(10), [0.5, 0.3, 0.2], generator=ember.Generator().manual_seed(1))
        self.assertEqual([len(p) for p in parts], [5, 3, 2])
        self.assertEqual(sorted(i for p in parts for i in p.indices), list(range(10)))
        with self.assertRaisesRegex(ValueError, "Sum of input lengths"):
            random_split(Range(10), [4, 4])

    def test_every_documented_argument_is_honoured_or_refused_by_name(self):
        # PyTorch's DataLoader signature, keyword for keyword.
        documented = ["dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn",
                      "pin_memory", "drop_last", "timeout", "worker_init_fn", "multiprocessing_context",
                      "generator", "prefetch_factor", "persistent_workers", "pin_memory_device"]
        self.assertEqual(list(inspect.signature(DataLoader).parameters), documented)
        data = Range(6)
        self.assertEqual(flat(DataLoader(data, batch_size=4, num_workers=2, prefetch_factor=2,
                                         persistent_workers=True, pin_memory=True, timeout=5)),
                         list(range(6)))  # the same batches as in one process
        self.assertEqual(DataLoader(data, collate_fn=lambda b: len(b), batch_size=4).collate_fn([1]), 1)
        refused = [({"shuffle": True, "sampler": SequentialSampler(data)}, "mutually exclusive with shuffle"),
                   ({"batch_sampler": [[0]], "batch_size": 2}, "batch_sampler option is mutually exclusive"),
                   ({"batch_size": None, "drop_last": True}, "disables auto-batching"),
                   ({"num_workers": -1}, "num_workers option should be non-negative"),
                   ({"timeout": -1}, "timeout option should be non-negative"),
                   ({"prefetch_factor": 2}, "prefetch_factor option could only be specified"),
                   ({"persistent_workers": True}, "persistent_workers option needs num_workers > 0"),
                   ({"worker_init_fn": print, "num_workers": 2}, "worker_init_fn is not supported"),
                   ({"multiprocessing_context": "spawn", "num_workers": 2}, "multiprocessing_context is not"),
                   ({"batch_size": 0}, "batch_size should be a positive integer")]
        for kwargs, message in refused:
            with self.assertRaisesRegex(ValueError, message, msg=str(kwargs)):
                DataLoader(data, **kwargs)
        with self.assertRaisesRegex(ValueError, "IterableDataset: expected unspecified shuffle"):
            DataLoader(Stream(3), shuffle=True)
        with self.assertRaises(TypeError):
            DataLoader(data, batchsize=2)  # a misspelt keyword is an error, not ignored
        loader = DataLoader(data, batch_size=2)
        with self.assertRaisesRegex(ValueError, "batch_size attribute should not be set"):
            loader.batch_size = 3
        self.assertIs(dataloader.DataLoader, DataLoader)


class SummaryWriterTest(unittest.TestCase):
    def test_scalars_land_in_a_tensorboard_event_file(self):
        import struct
        import tempfile

        from ember.utils import tensorboard
        self.assertEqual(tensorboard.crc32c(b"123456789"), 0xE3069283)  # CRC-32C's check value
        with tempfile.TemporaryDirectory() as tmp:
            with tensorboard.SummaryWriter(log_dir=tmp, max_queue=2) as writer:
                writer.add_scalar("Loss/train", 2.5, 0)
                writer.add_scalar("Loss/train", ember.tensor(1.25), 10)
                writer.add_scalar("Loss/test", 3.0, global_step=10)
            (name,) = os.listdir(tmp)
            self.assertTrue(name.startswith("events.out.tfevents."))
            with open(os.path.join(tmp, name), "rb") as f:
                data = f.read()
        events = []
        while data:  # length, its masked CRC, the event, its masked CRC
            (length,) = struct.unpack("<Q", data[:8])
            masked = struct.unpack("<I", data[8:12])[0]
            self.assertEqual(masked, tensorboard._masked(tensorboard.crc32c(data[:8])))
            event = data[12:12 + length]
            self.assertEqual(struct.unpack("<I", data[12 + length:16 + length])[0],
                             tensorboard._masked(tensorboard.crc32c(event)))
            events.append(event)
            data = data[16 + length:]
        self.assertEqual(len(events), 4)
        self.assertIn(b"brain.Event:2", events[0])
        # Event: wall_time (0x09, 8 bytes), step (0x10, varint), summary (0x2a): value (0x0a):
        # tag (0x0a) and simple_value (0x15, float).
        step, tag, value = events[2][10], events[2][17:17 + events[2][16]], events[2][-4:]
        self.assertEqual((step, tag, struct.unpack("<f", value)[0]), (10, b"Loss/train", 1.25))
        with self.assertRaisesRegex(ValueError, "purge_step"):
            tensorboard.SummaryWriter(log_dir=tmp, purge_step=3)


class ModuleIterationTest(unittest.TestCase):
    def test_parameters_are_iterators_and_zero_grad_either_way(self):
        model = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.ReLU(), ember.nn.Linear(3, 1))
        params = model.parameters()
        self.assertIs(iter(params), params)  # a generator, as PyTorch's
        self.assertEqual(len(list(params)), 4)
        self.assertEqual(len(list(model[0].parameters(recurse=False))), 2)
        self.assertEqual(len(list(model.parameters(recurse=False))), 0)
        model(ember.ones(4, 2)).sum().backward()
        model.zero_grad(set_to_none=False)
        self.assertEqual(model[0].weight.grad.tolist(), [[0.0, 0.0]] * 3)
        model(ember.ones(4, 2)).sum().backward()
        self.assertNotEqual(model[2].weight.grad.abs().sum().item(), 0.0)
        model.zero_grad()
        self.assertIsNone(model[0].weight.grad)
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        model(ember.ones(4, 2)).sum().backward()
        opt.zero_grad(set_to_none=False)
        self.assertEqual(model[2].bias.grad.tolist(), [0.0])
        opt.zero_grad()
        self.assertIsNone(model[2].bias.grad)


if __name__ == "__main__":
    unittest.main()
