"""torch.utils.data.dataset: map-style datasets (indexed by integers: Dataset,
TensorDataset, Subset, ConcatDataset, random_split) and iterable ones (IterableDataset,
ChainDataset)."""

import bisect
import math

import ember

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "Subset", "TensorDataset",
           "random_split"]


class Dataset:
    """A map-style dataset: subclasses define __getitem__(index) and, for the samplers,
    __len__. dataset_a + dataset_b is their ConcatDataset."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} defines __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: subclasses define __iter__; a DataLoader batches what
    it yields, in its order (no sampler)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} defines __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Row i of each tensor (their first dimensions must agree)."""

    def __init__(self, *tensors):
        if not tensors or any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("TensorDataset: expected tensors with the same first dimension (size mismatch between "
                             "tensors)")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The dataset's samples at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The datasets one after another: index i falls in the first dataset whose
    cumulative length exceeds it."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise ValueError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][index - start]


class ChainDataset(IterableDataset):
    """Iterable datasets one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


def random_split(dataset, lengths, generator=None):
    """Non-overlapping Subsets of the given lengths, or of the given fractions of
    len(dataset) (summing to 1; the remainder given one at a time, round-robin, as
    PyTorch), from a random permutation drawn from generator (default: ember's default
    generator)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, fraction in enumerate(lengths):
            if fraction < 0 or fraction > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * fraction)))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = ember.randperm(n, generator=generator).tolist()
    subsets, start = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, order[start:start + length]))
        start += length
    return subsets
