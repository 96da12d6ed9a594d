"""torch.nn.modules.flatten: Flatten."""

from ember.nn.modules.module import Module

__all__ = ["Flatten"]


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)
