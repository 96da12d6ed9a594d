"""torch.utils.data.sampler: the orders a DataLoader draws indices in. Random ones draw
from their generator, or from ember's default generator when given none, so
ember.manual_seed fixes a run's order."""

import ember

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]


class Sampler:
    """Subclasses define __iter__ (the indices) and usually __len__."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} defines __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Without replacement: each index once per pass, a fresh permutation each pass
    (num_samples may exceed the length: whole permutations, then part of one). With
    replacement: num_samples indices drawn uniformly and independently."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if num_samples is not None and (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                                        or num_samples <= 0):
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        self.data_source, self.replacement, self._num_samples = data_source, replacement, num_samples
        self.generator = generator

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, count = len(self.data_source), self.num_samples
        if n == 0:
            return
        if self.replacement:  # drawn lazily, 32 at a time: num_samples may be 1e10
            for start in range(0, count, 32):
                yield from ember.randint(0, n, (min(32, count - start),), generator=self.generator).tolist()
            return
        for _ in range(count // n):
            yield from ember.randperm(n, generator=self.generator).tolist()
        if count % n:
            yield from ember.randperm(n, generator=self.generator).tolist()[:count % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order (a fresh one each pass)."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in ember.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """num_samples indices of 0 .. len(weights) - 1, each drawn with probability
    proportional to its weight (with replacement by default), a fresh draw each pass."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = weights if isinstance(weights, ember.Tensor) else ember.tensor(list(weights), dtype=ember.float64)
        if weights.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights, self.num_samples, self.replacement = weights.to(ember.float64), num_samples, replacement
        self.generator = generator

    def __iter__(self):
        yield from ember.multinomial(self.weights, self.num_samples, self.replacement,
                                     generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of batch_size indices from sampler (the last shorter, or dropped with
    drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
