"""torch.nn.modules.sparse: Embedding."""

import ember
from ember import _ember
from ember.nn import functional as F
from ember.nn.modules.module import Module, _from_core

__all__ = ["Embedding"]


class Embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, dtype=ember.float32):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        _from_core(self, _ember._embedding_parameters(num_embeddings, embedding_dim, dtype))

    def forward(self, ids):
        return F.embedding(ids, self.weight)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"
