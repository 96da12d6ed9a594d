"""torch.utils.data._utils.collate: how a DataLoader turns samples into a batch.
default_collate stacks tensors (NumPy arrays and scalars as tensors first), makes Python
ints, floats and bools int64, float64 and bool tensors, keeps strings as a list, and
recurses into dicts, named tuples, tuples and lists element by element; anything else is
a TypeError naming its type, as PyTorch's. default_convert (for a loader without
batches) turns NumPy arrays into tensors and leaves everything else as it is."""

import collections.abc
import sys

import ember

__all__ = ["default_collate", "default_convert"]

_UNSUPPORTED = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                "found {}")


def _numpy():
    return sys.modules.get("numpy")  # a NumPy value comes from a caller that imported NumPy


def default_convert(data):
    np = _numpy()
    if np is not None and isinstance(data, np.ndarray):
        if data.dtype.kind in "OUS":  # objects and strings have no tensor
            return data
        return ember.from_numpy(np.ascontiguousarray(data))
    if np is not None and isinstance(data, np.generic):
        return ember.tensor(data.item())
    if isinstance(data, collections.abc.Mapping):
        converted = {key: default_convert(value) for key, value in data.items()}
        return converted if type(data) is dict else type(data)(converted)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return tuple(default_convert(d) for d in data)
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    first = batch[0]
    if isinstance(first, ember.Tensor):
        return ember.stack(list(batch))
    np = _numpy()
    if np is not None and isinstance(first, np.ndarray):
        if first.dtype.kind in "OUS":
            raise TypeError(_UNSUPPORTED.format(first.dtype))
        return ember.stack([ember.from_numpy(np.ascontiguousarray(a)) for a in batch])
    if np is not None and isinstance(first, np.generic):
        return ember.from_numpy(np.array(batch))
    if isinstance(first, bool):
        return ember.tensor(list(batch), dtype=ember.bool)
    if isinstance(first, int):
        return ember.tensor(list(batch), dtype=ember.int64)
    if isinstance(first, float):
        return ember.tensor(list(batch), dtype=ember.float64)
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in first}
        return collated if type(first) is dict else type(first)(collated)
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a named tuple
        return type(first)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(item) != len(first) for item in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        collated = [default_collate(list(column)) for column in zip(*batch)]
        return tuple(collated) if isinstance(first, tuple) else collated
    raise TypeError(_UNSUPPORTED.format(type(first)))
