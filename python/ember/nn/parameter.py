"""torch.nn.parameter: Parameter."""

import ember

__all__ = ["Parameter"]


class Parameter(ember.Tensor):
    """A tensor that a Module registers as its parameter: a leaf that requires grad
    (sharing memory with `data`)."""

    def __init__(self, data, requires_grad: bool = True):
        super().__init__(data.detach())
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
