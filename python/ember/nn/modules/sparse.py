"""torch.nn.modules.sparse: Embedding."""

import ember
from ember import _ember
from ember.nn import functional as F
from ember.nn.modules.module import Module, _from_core
from ember.nn.parameter import Parameter

__all__ = ["Embedding"]


class Embedding(Module):
    """torch.nn.Embedding. padding_idx's row starts at zero and gets no gradient, as in
    PyTorch; max_norm, scale_grad_by_freq and sparse are refused by name."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        for name, value, default in (("max_norm", max_norm, None), ("scale_grad_by_freq", scale_grad_by_freq, False),
                                     ("sparse", sparse, False), ("_freeze", _freeze, False)):
            if value != default:
                raise NotImplementedError(f"Embedding: {name}={value!r} is not supported")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type, self.scale_grad_by_freq, self.sparse = None, norm_type, False, False
        if _weight is not None:
            self.weight = Parameter(_weight)
        else:
            _from_core(self, _ember._embedding_parameters(num_embeddings, embedding_dim, dtype or ember.float32),
                       device)
            if padding_idx is not None:
                with ember.no_grad():
                    self.weight[padding_idx].fill_(0)

    def forward(self, ids):
        out = F.embedding(ids, self.weight)
        if self.padding_idx is None:
            return out
        # The same values; the padding rows' gradient stopped (PyTorch's embedding
        # backward skips padding_idx).
        keep = (ids != self.padding_idx).unsqueeze(-1)
        return ember.where(keep, out, out.detach())

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}" + (
            f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
