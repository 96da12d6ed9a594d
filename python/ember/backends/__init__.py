"""torch.backends' settings that ember has: ember.backends.cuda.matmul.allow_tf32."""

from ember.backends import cuda

__all__ = ["cuda"]
