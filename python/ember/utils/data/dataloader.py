"""torch.utils.data.dataloader: DataLoader, with PyTorch's arguments and their rules.
The order comes from a sampler (given, or SequentialSampler, or RandomSampler with
generator when shuffle=True) grouped by a batch sampler (given, or BatchSampler of
batch_size and drop_last); batch_size=None yields samples one at a time through
default_convert. Batches are made in the calling process: num_workers > 0 is accepted
and gives the same batches in the same order as num_workers=0 (prefetch_factor and
persistent_workers are accepted with it, as PyTorch's rules ask), but there are no
worker processes to initialise, so worker_init_fn and multiprocessing_context are
refused by name; get_worker_info() is None, as in PyTorch's main process. pin_memory
is accepted: ember stages host-to-GPU copies through pinned buffers of its own."""

from ember.utils.data._utils.collate import default_collate, default_convert
from ember.utils.data.dataset import IterableDataset
from ember.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]


def get_worker_info():
    """None: ember's DataLoader makes its batches in the calling process."""
    return None


class DataLoader:
    _FIXED = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device=""):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. Let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        for name, value in (("worker_init_fn", worker_init_fn), ("multiprocessing_context", multiprocessing_context)):
            if value is not None:
                raise ValueError(f"DataLoader: {name} is not supported: ember makes batches in the calling process, "
                                 "with no worker processes to set up")
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler), ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} option, but got "
                                     f"{name}={value}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                                 "drop_last")
        elif isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is None and not iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        self.num_workers, self.prefetch_factor, self.persistent_workers = num_workers, prefetch_factor, \
            persistent_workers
        self.pin_memory, self.pin_memory_device, self.timeout = pin_memory, pin_memory_device, timeout
        self.worker_init_fn, self.multiprocessing_context = worker_init_fn, multiprocessing_context
        auto_collation = batch_sampler is not None or (iterable and batch_size is not None)
        self.collate_fn = collate_fn or (default_collate if auto_collation else default_convert)
        self._initialized = True

    def __setattr__(self, name, value):
        if self.__dict__.get("_initialized") and name in self._FIXED:
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        object.__setattr__(self, name, value)

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)

    def __iter__(self):
        if isinstance(self.dataset, IterableDataset):
            yield from self._iterate_stream()
        elif self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])
        else:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])

    def _iterate_stream(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)
