"""torch.utils.data in ember: datasets (map-style and iterable, TensorDataset, Subset,
ConcatDataset, random_split), samplers (sequential, random with or without replacement,
subset, batch) and a DataLoader that draws its order from them and collates as PyTorch's
default_collate. Laid out as torch's package: dataset.py, sampler.py, dataloader.py and
_utils/collate.py."""

from ember.utils.data._utils.collate import default_collate, default_convert
from ember.utils.data.dataloader import DataLoader, get_worker_info
from ember.utils.data.dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset,
                                      TensorDataset, random_split)
from ember.utils.data.sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = [
    "BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "RandomSampler",
    "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler", "TensorDataset", "default_collate",
    "default_convert", "get_worker_info", "random_split", "WeightedRandomSampler",
]
