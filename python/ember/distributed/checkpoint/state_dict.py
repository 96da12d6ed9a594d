"""torch.distributed.checkpoint.state_dict in ember: a sharded model's whole weights.

    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    if rank == 0:
        ember.save(full, "model.safetensors")

Each parameter fully_shard or parallelize_module split is gathered from the ranks'
shares (collective: every rank calls it); a whole one is returned as it is.
"""

from dataclasses import dataclass

from ember.distributed import _placement

__all__ = ["StateDictOptions", "get_model_state_dict"]


@dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True


def get_model_state_dict(model, *, submodules=None, options=None):
    """model.state_dict() with every split parameter whole (full_state_dict=True, the
    only form supported: ember's sharded checkpoints are written whole)."""
    if options is None or not options.full_state_dict:
        raise NotImplementedError("get_model_state_dict: only StateDictOptions(full_state_dict=True)")
    if submodules is not None:
        raise NotImplementedError("get_model_state_dict: submodules is not supported")
    out = {}
    for name, t in model._state():  # state_dict's entries, the parameters themselves
        whole = _placement.gather(t)
        out[name] = whole.cpu() if options.cpu_offload else whole
    return out
