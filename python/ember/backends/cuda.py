"""torch.backends.cuda: whether f32 products on a GPU may use TF32 tensor cores.

    import ember.backends.cuda
    ember.backends.cuda.matmul.allow_tf32 = True   # off by default, as in PyTorch

TF32 rounds a product's inputs to a 10-bit mantissa and sums in f32: on an H100 or H200
the f32 matmuls of GPT-2 run several times faster. It covers ember's f32 matmuls and the
forward of causal attention at head size 64. One setting for the process.
"""

from ember import _ember

__all__ = ["matmul"]


class _Matmul:
    """torch.backends.cuda.matmul: allow_tf32 reads and sets ember::cuda::SetAllowTf32."""

    @property
    def allow_tf32(self):
        return _ember._cuda_allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, allow):
        _ember._cuda_set_allow_tf32(bool(allow))

    def __repr__(self):
        return f"ember.backends.cuda.matmul(allow_tf32={self.allow_tf32})"


matmul = _Matmul()
