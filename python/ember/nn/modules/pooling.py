"""torch.nn.modules.pooling: MaxPool2d."""

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["MaxPool2d"]


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        for name, value in (("return_indices", return_indices), ("ceil_mode", ceil_mode)):
            if value:
                raise NotImplementedError(f"MaxPool2d: {name}=True is not supported")
        self.return_indices, self.ceil_mode = False, False
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, padding={self.padding}"
