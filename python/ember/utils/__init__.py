"""torch.utils in ember: data (datasets, samplers, DataLoader) and tensorboard
(SummaryWriter, imported by name as in torch)."""

from ember.utils import data

__all__ = ["data"]
