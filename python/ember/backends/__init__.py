"""torch.backends' settings: ember.backends.cuda.matmul.allow_tf32, and
ember.backends.cudnn.allow_tf32 for the scripts that set it."""

from ember.backends import cuda, cudnn

__all__ = ["cuda", "cudnn"]
