"""torch.distributed.fsdp in ember: fully_shard (FSDP2), ZeRO-3 over the ranks of a 1-D
mesh, with distributed/fsdp.h doing the gathers and reductions.

    mesh = init_device_mesh("cpu", (world_size,))
    for block in model.transformer.h:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = ember.optim.AdamW(model.parameters(), lr=...)  # this rank's shards

Each call splits the module's parameters (but those of modules sharded before it)
across the mesh's ranks along their first dimension that divides evenly (PyTorch's
Shard(0), without padding: a parameter no dimension of which divides stays whole on
every rank, its gradient averaged), and the module's parameters() become this rank's
shards. At the first forward the outermost sharded module is the root: every sharded
module inside it is a unit whose whole weights are gathered just before its forward,
freed after it, gathered again for its backward, and whose gradients are
reduce-scattered into the shards' .grad (the mean over the ranks) as backward finishes
them; the root's own weights stay gathered until an optimizer changes their shards. So
N ranks, each on its rows, take the steps one process takes on all of them.
ember.distributed.checkpoint.state_dict.get_model_state_dict gathers the whole weights.
"""

import ember
from ember import _ember
from ember.distributed import _placement
from ember.distributed.device_mesh import init_device_mesh
from ember.nn import parallel as _parallel
from ember.nn.parameter import Parameter

__all__ = ["FSDPModule", "fully_shard"]


class FSDPModule:
    """The class fully_shard mixes into a module's (isinstance(m, FSDPModule))."""


class _Unit:
    """One fully_shard call's parameters, each (owner module, attribute, whole, dim,
    shard, alias): whole is what the owner's forward uses while the unit is gathered,
    shard what its parameters() hold; dim -1 for a parameter kept whole (then whole is
    shard); alias marks a second owner of a tied parameter."""

    def __init__(self, module, mesh, entries):
        self.module, self.mesh, self.entries = module, mesh, entries

    def use_whole(self, whole):
        for owner, name, w, dim, shard, _ in self.entries:
            if dim >= 0:
                object.__setattr__(owner, name, w if whole else shard)

    def core_entries(self):
        return [(w, dim, shard if dim >= 0 else None) for _, _, w, dim, shard, alias in self.entries if not alias]


class _State:
    """The sharded model under one root: the C++ FSDP over its units (units[0] the
    root's), and each unit module's index."""

    def __init__(self, units):
        self.units = units
        self.index = {id(u.module): i for i, u in enumerate(units)}
        mesh = units[0].mesh
        self.core = _ember._FullyShardedData(mesh._core, mesh._axis("fully_shard"),
                                             [u.core_entries() for u in units])

    def finish(self):  # at the end of each backward (ember.Tensor.backward)
        self.core.end_backward()


_units = {}  # id(module) -> _Unit, for every module fully_shard was called on
_states = {}  # id(root module) -> _State, once its first forward has run
_active = []  # the states whose root's forward is running


def _first_divisible(shape, n):
    for d, size in enumerate(shape):
        if size % n == 0:
            return d
    return -1


def fully_shard(module, *, mesh=None, reshard_after_forward=True, mp_policy=None, offload_policy=None):
    """Shards module's parameters (but those of modules sharded before) across mesh's
    ranks (default: a 1-D mesh of the world); returns module, now also an FSDPModule.
    Collective: every rank calls it on the same modules in the same order, before the
    optimizer is made."""
    if mp_policy is not None or offload_policy is not None:
        raise NotImplementedError("fully_shard: mp_policy and offload_policy are not supported "
                                  "(autocast gives bf16 products; the shards stay on the module's device)")
    if reshard_after_forward is not True:
        raise NotImplementedError("fully_shard: only reshard_after_forward=True (a unit is freed after its forward)")
    if id(module) in _units:
        raise ValueError(f"fully_shard: {type(module).__name__} is sharded already")
    if any(id(m) in _states for m in module.modules()):
        raise ValueError("fully_shard: a module inside this one has run as a root already; shard every "
                         "module before the first forward")
    if mesh is None:
        mesh = init_device_mesh("cpu", (ember.distributed.get_world_size(),))
    axis = mesh._axis("fully_shard")
    n, k = mesh.size(), mesh.get_local_rank()
    # The parameters of units inside this module are theirs (their shards by now).
    inner = {id(e[4]) for m in module.modules() if m is not module and id(m) in _units
             for e in _units[id(m)].entries}
    entries, made = [], {}  # made: id(original parameter) -> (whole, dim, shard)
    for owner in module.modules():
        for name, p in list(owner._parameters.items()):
            if p is None or id(p) in inner:
                continue
            if id(p) in made:  # tied: the same whole and shard under a second name
                whole, dim, shard = made[id(p)]
                if dim >= 0:
                    owner._parameters[name] = shard
                    object.__setattr__(owner, name, shard)
                entries.append((owner, name, whole, dim, shard, True))
                continue
            dim = _first_divisible(p.shape, n) if n > 1 else -1
            if dim < 0:
                made[id(p)] = (p, -1, p)
                entries.append((owner, name, p, -1, p, False))
                continue
            # The whole weight in memory of its own (the gathers free and refill it).
            whole = Parameter(p.detach().clone(), requires_grad=p.requires_grad)
            shard = Parameter(_placement.split(p, n, k, dim), requires_grad=p.requires_grad)
            _placement.record(shard, p, mesh._core, axis, dim)
            owner._parameters[name] = shard
            object.__setattr__(owner, name, shard)
            made[id(p)] = (whole, dim, shard)
            entries.append((owner, name, whole, dim, shard, False))
    _units[id(module)] = _Unit(module, mesh, entries)
    module.__class__ = type(f"FSDP{type(module).__name__}", (FSDPModule, type(module)), {})
    module.register_forward_pre_hook(_pre_forward)
    module.register_forward_hook(_post_forward)
    return module


def _pre_forward(module, args):
    unit = _units[id(module)]
    if not _active:  # the outermost sharded module: the root
        state = _states.get(id(module))
        if state is None:
            inside = [_units[id(m)] for m in module.modules() if m is not module and id(m) in _units]
            state = _states[id(module)] = _State([unit] + inside)
        _active.append(state)
        state.core.begin_forward()
        if ember.is_grad_enabled() and state not in _parallel._armed:
            _parallel._armed.append(state)
    else:
        state = _active[-1]
        u = state.index.get(id(module))
        if u is None:
            raise RuntimeError(f"fully_shard: {type(module).__name__} ran inside a root it was not sharded under")
        state.core.before(u, ember.empty(0))
    unit.use_whole(True)


def _post_forward(module, args, output):
    _units[id(module)].use_whole(False)
    state = _active[-1]
    u = state.index[id(module)]
    if u == 0:
        _active.pop()
        return None
    return _map_tensors(output, lambda y: state.core.after(u, y))


def _map_tensors(output, fn):
    if isinstance(output, ember.Tensor):
        return fn(output)
    if isinstance(output, tuple):
        return tuple(_map_tensors(o, fn) for o in output)
    if isinstance(output, list):
        return [_map_tensors(o, fn) for o in output]
    return output
