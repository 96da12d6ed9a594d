"""torch.nn.parallel in ember: DistributedDataParallel, data parallelism across the ranks
that ember.distributed.run started."""

import contextlib

import ember
from ember import _ember
from ember.nn import Module

__all__ = ["DistributedDataParallel"]

# Wrappers whose forward armed their averager: the next backward's end finishes them.
_armed = []


def _finish_armed():
    while _armed:
        _armed.pop(0).finish()


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel: wraps a module so that after each
    backward every parameter's gradient is its mean over the ranks, as one process
    would compute it on all the ranks' rows together.

    At construction rank 0's parameters and buffers are broadcast to every rank. The
    gradients travel in buckets of about bucket_cap_mb (distributed/data_parallel.h:
    each bucket's all-reduce starts as soon as backward has finished its gradients,
    while backward goes on), and backward returns once all are averaged. Under
    no_sync(), or with require_backward_grad_sync set False (nanoGPT's gradient
    accumulation), a forward's backward accumulates gradients on each rank alone; the
    next synchronised one averages the sums."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if not ember.distributed.is_initialized():
            raise RuntimeError("DistributedDataParallel: call ember.distributed.init_process_group() first")
        if dim != 0:
            raise ValueError("DistributedDataParallel: dim must be 0 (each rank feeds its own batch)")
        self.module = module
        self.require_backward_grad_sync = True
        with ember.no_grad():
            for t in module.state_dict().values():
                ember.distributed.broadcast(t, 0)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise ValueError("DistributedDataParallel: the module has no parameter that requires grad")
        object.__setattr__(self, "_averager",
                           _ember._GradientAverager(params, int(bucket_cap_mb * (1 << 20))))

    def forward(self, *inputs, **kwargs):
        if ember.is_grad_enabled() and self.require_backward_grad_sync:
            self._averager.arm()
            if self._averager not in _armed:
                _armed.append(self._averager)
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward inside (or of a forward made inside) accumulates on each rank alone."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def comm_stats(self):
        """The last synchronised backward's buckets, bytes all-reduced, and the seconds of
        communication and of waiting for it at backward's end."""
        return self._averager.stats()
