"""torch.distributed.tensor.parallel in ember: Megatron-LM's tensor parallelism for
Linear layers (distributed/tensor_parallel.h), in PyTorch's names.

    mesh = init_device_mesh("cpu", (2,), mesh_dim_names=("tp",))
    for block in model.transformer.h:
        parallelize_module(block.mlp, mesh, {"c_fc": ColwiseParallel(), "c_proj": RowwiseParallel()})

ColwiseParallel splits a Linear by its outputs (weight rows and bias): each rank computes
its share of the output features, and the input's gradient is summed over the ranks.
RowwiseParallel splits one by its inputs (weight columns), takes its share of the input
features (a ColwiseParallel layer's output) and sums the ranks' partial products before
its bias, which stays whole. A pair costs one all-reduce forward and one backward. Every
rank must start from the same weights (one seed); each keeps its share, which its
parameters() then hold.
"""

import ember
import ember.nn.functional as F
from ember import _ember
from ember.distributed import _placement
from ember.nn import Linear
from ember.nn.parameter import Parameter

__all__ = ["ColwiseParallel", "ParallelStyle", "RowwiseParallel", "parallelize_module"]


class ParallelStyle:
    """How parallelize_module splits one module."""

    def _apply(self, module, mesh):
        raise NotImplementedError


def _check_linear(module, style):
    if not isinstance(module, Linear):
        raise NotImplementedError(f"{style}: only nn.Linear is supported, not {type(module).__name__}")


def _share(module, name, mesh, dim):
    p = getattr(module, name)
    n, k = mesh.size(), mesh.get_local_rank()
    if p.shape[dim] % n:
        raise ValueError(f"parallelize_module: {name} of shape {tuple(p.shape)} does not split into {n} "
                         f"equal parts along dimension {dim}")
    local = Parameter(_placement.split(p, n, k, dim), requires_grad=p.requires_grad)
    _placement.record(local, p, mesh._core, mesh._axis("parallelize_module"), dim)
    setattr(module, name, local)


class ColwiseParallel(ParallelStyle):
    """A Linear split by its output features; its input whole on every rank, its output
    this rank's share (use_local_output=True, PyTorch's default)."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        if not use_local_output or output_layouts is not None or input_layouts is not None:
            raise NotImplementedError("ColwiseParallel: only the default layouts (a whole input, a local output)")

    def _apply(self, module, mesh):
        _check_linear(module, "ColwiseParallel")
        _share(module, "weight", mesh, 0)
        if module.bias is not None:
            _share(module, "bias", mesh, 0)
        axis = mesh._axis("ColwiseParallel")
        module.register_forward_pre_hook(
            lambda m, args: (_ember._to_tensor_parallel(args[0], mesh._core, axis),) + tuple(args[1:]))


class RowwiseParallel(ParallelStyle):
    """A Linear split by its input features; its input this rank's share, its output the
    sum over the ranks (whole on every rank), its bias whole."""

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        if not use_local_output or output_layouts is not None or input_layouts is not None:
            raise NotImplementedError("RowwiseParallel: only the default layouts (a local input, a whole output)")

    def _apply(self, module, mesh):
        _check_linear(module, "RowwiseParallel")
        _share(module, "weight", mesh, 1)
        axis = mesh._axis("RowwiseParallel")

        def forward(x):
            y = _ember._from_tensor_parallel(F.linear(x, module.weight), mesh._core, axis)
            return y if module.bias is None else y + module.bias

        object.__setattr__(module, "forward", forward)


def parallelize_module(module, device_mesh=None, parallelize_plan=None):
    """Splits module (a style) or its submodules (a dict of dotted names, "*" matching
    any one name, to styles) across device_mesh (1-D: a mesh's axis); returns module."""
    if device_mesh is None:
        from ember.distributed.device_mesh import init_device_mesh
        device_mesh = init_device_mesh("cpu", (ember.distributed.get_world_size(),))
    if parallelize_plan is None:
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan._apply(module, device_mesh)
        return module
    for pattern, style in parallelize_plan.items():
        matched = [m for name, m in module.named_modules() if _matches(pattern, name)]
        if not matched:
            raise ValueError(f"parallelize_module: no submodule matches {pattern!r}")
        for m in matched:
            style._apply(m, device_mesh)
    return module


def _matches(pattern, name):
    parts, names = pattern.split("."), name.split(".") if name else []
    return len(parts) == len(names) and all(p in ("*", n) for p, n in zip(parts, names))
