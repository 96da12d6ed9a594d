"""Where a sharded parameter's values lie: for each tensor fully_shard or
parallelize_module made a rank's share of a whole one, the splits that made it (a mesh
axis and a dimension, in the order they were applied), so that the whole can be
gathered back (checkpoint.state_dict)."""

import ember
from ember import _ember

_splits = {}  # id(shard) -> (shard, [(core mesh, axis, dim), ...])


def record(shard, source, core, axis, dim):
    """shard is `source`'s share along dim over the mesh axis (source may itself be a
    share)."""
    earlier = _splits.get(id(source), (None, []))[1]
    _splits[id(shard)] = (shard, earlier + [(core, axis, dim)])


def any_split(tensors):
    return any(_splits.get(id(t), (None,))[0] is t for t in tensors)


def grad_norm(params):
    """The L2 norm of the whole model's gradients from this rank's shares (collective
    over the world): a share split along axes of sizes n1, n2, ... has world / (n1 n2
    ...) copies across the ranks, so each rank weighs its sum of squares by the
    inverse."""
    world = ember.distributed.get_world_size()
    total = None  # kept on the gradients' device, read once
    for p in params:
        recorded, splits = _splits.get(id(p), (None, []))
        parts = 1
        for core, axis, _ in splits if recorded is p else []:
            parts *= core.size(axis)
        term = (p.grad.double() ** 2).sum() * (parts / world)
        total = term if total is None else total + term
    t = (total if total is not None else ember.zeros((), dtype=ember.float64)).reshape(1).contiguous()
    ember.distributed.all_reduce(t)
    return float(t.item()) ** 0.5


def split(t, n, k, dim):
    """Share k of n of t along dim, a contiguous copy."""
    size = t.shape[dim] // n
    with ember.no_grad():
        return t.narrow(dim, k * size, size).contiguous().clone()


def gather(t):
    """The whole tensor of which t is this rank's share (t itself when it is whole):
    collective over the axes it was split along."""
    recorded, splits = _splits.get(id(t), (None, []))
    if recorded is not t:
        splits = []
    out = t.detach().contiguous()
    for core, axis, dim in reversed(splits):
        n = core.size(axis)
        flat = ember.empty(n * out.numel(), dtype=out.dtype, device=out.device)
        _ember._all_gather_axis(out.reshape(-1), flat, core, axis)
        out = ember.cat([p.reshape(out.shape) for p in flat.chunk(n)], dim)
    return out
