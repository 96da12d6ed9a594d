"""torch.nn.modules.conv: Conv2d."""

import ember
from ember import _ember
from ember.nn import functional as F
from ember.nn.modules.module import Module, _from_core

__all__ = ["Conv2d"]


class Conv2d(Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias: bool = True, padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups != 1:
            raise NotImplementedError(f"Conv2d: groups={groups!r} is not supported (1)")
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d: padding_mode={padding_mode!r} is not supported ('zeros')")
        self.groups, self.padding_mode = groups, padding_mode
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.bias = None
        _from_core(self, _ember._conv2d_parameters(in_channels, out_channels, list(self.kernel_size), bias,
                                                   dtype or ember.float32), device)

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")
