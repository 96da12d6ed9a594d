"""torch.utils in ember: data (Dataset, TensorDataset, DataLoader)."""

from ember.utils import data

__all__ = ["data"]
