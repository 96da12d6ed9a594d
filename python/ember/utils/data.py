"""torch.utils.data's map-style loading: a Dataset indexed by integers, TensorDataset,
and a DataLoader that batches it (shuffled from ember's default generator, so
ember.manual_seed fixes the order) and collates as PyTorch's default_collate does:
tensors stacked, Python ints and floats as int64 and float64 tensors, NumPy arrays
through from_numpy, tuples, lists and dicts element by element. The batches are made in
the calling process (num_workers is accepted; no worker processes are started). NumPy
is not needed (arrays are collated when the caller has it)."""

import sys

import ember

__all__ = ["DataLoader", "Dataset", "TensorDataset", "default_collate"]


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} defines __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} defines __len__")


class TensorDataset(Dataset):
    """Row i of each tensor (their first dimensions must agree)."""

    def __init__(self, *tensors):
        if not tensors or any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("TensorDataset: expected tensors with the same first dimension")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


def default_collate(batch):
    first = batch[0]
    if isinstance(first, ember.Tensor):
        return ember.stack(list(batch))
    np = sys.modules.get("numpy")  # a NumPy array comes from a caller that imported it
    if np is not None and isinstance(first, np.ndarray):
        return ember.stack([ember.from_numpy(np.ascontiguousarray(a)) for a in batch])
    if isinstance(first, bool):
        return ember.tensor(list(batch), dtype=ember.bool)
    if isinstance(first, int):
        return ember.tensor(list(batch), dtype=ember.int64)
    if isinstance(first, float):
        return ember.tensor(list(batch), dtype=ember.float64)
    if isinstance(first, dict):
        return {key: default_collate([d[key] for d in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        if any(len(item) != len(first) for item in batch):
            raise ValueError("default_collate: each element in the batch should be of equal size")
        collated = [default_collate(list(column)) for column in zip(*batch)]
        return tuple(collated) if isinstance(first, tuple) else collated
    return list(batch)  # strings and other objects: as they are


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None, num_workers=0,
                 pin_memory=False, **unused):
        if batch_size is None or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be at least 1, got {batch_size}")
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.collate_fn = collate_fn or default_collate
        self.num_workers, self.pin_memory = num_workers, pin_memory

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = list(range(n))
        if self.shuffle and n:
            keys = ember.rand(n, dtype=ember.float64).tolist()
            order.sort(key=keys.__getitem__)
        for start in range(0, n, self.batch_size):
            indices = order[start:start + self.batch_size]
            if self.drop_last and len(indices) < self.batch_size:
                return
            yield self.collate_fn([self.dataset[i] for i in indices])
