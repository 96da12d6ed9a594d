"""torch.distributed.device_mesh in ember: the ranks as a grid of named axes, with a
process group along each (distributed/mesh.h), for fully_shard and parallelize_module.

    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    mesh["tp"].size(), mesh.get_local_rank("dp")

Row-major: the last axis varies fastest, so a "tp" group's ranks are neighbours.
"""

import math

import ember
from ember import _ember

__all__ = ["DeviceMesh", "init_device_mesh"]


class DeviceMesh:
    """torch.distributed.device_mesh.DeviceMesh: made by init_device_mesh; mesh[name]
    is the 1-D mesh along one of its axes."""

    def __init__(self, device_type, core, dims):
        self.device_type = device_type
        self._core = core  # _ember._Mesh over every axis
        self._dims = tuple(dims)  # the axes this mesh spans

    @property
    def mesh_dim_names(self):
        return self._dims

    @property
    def ndim(self):
        return len(self._dims)

    @property
    def shape(self):
        return tuple(self._core.size(d) for d in self._dims)

    def size(self, mesh_dim=None):
        """The ranks in the mesh, or along one axis (its name or index)."""
        if mesh_dim is None:
            return math.prod(self.shape)
        return self._core.size(self._name(mesh_dim))

    def get_local_rank(self, mesh_dim=None):
        """This rank's coordinate along the axis (the only one of a 1-D mesh)."""
        if mesh_dim is None:
            if self.ndim != 1:
                raise RuntimeError("get_local_rank: name the axis of a mesh of several")
            mesh_dim = 0
        return self._core.coordinate(self._name(mesh_dim))

    def get_coordinate(self):
        return [self._core.coordinate(d) for d in self._dims]

    def __getitem__(self, name):
        if name not in self._dims:
            raise KeyError(f"DeviceMesh: no axis {name!r} (its axes: {', '.join(self._dims)})")
        return DeviceMesh(self.device_type, self._core, (name,))

    def _name(self, mesh_dim):
        if isinstance(mesh_dim, int):
            return self._dims[mesh_dim]
        if mesh_dim not in self._dims:
            raise KeyError(f"DeviceMesh: no axis {mesh_dim!r} (its axes: {', '.join(self._dims)})")
        return mesh_dim

    def _axis(self, what):
        """The one axis of a 1-D mesh (for a sharding along it)."""
        if self.ndim != 1:
            raise ValueError(f"{what}: a 1-D mesh is needed (this one has the axes {', '.join(self._dims)}); "
                             "pass mesh[name]")
        return self._dims[0]

    def __repr__(self):
        return f"DeviceMesh('{self.device_type}', {dict(zip(self._dims, self.shape))})"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None):
    """The world's ranks arranged as mesh_shape (its product must be the world's size),
    its axes named mesh_dim_names (default dim_0, dim_1, ...). Collective: every rank
    calls it, after init_process_group (which it calls when nobody has)."""
    mesh_shape = tuple(int(s) for s in mesh_shape)
    names = tuple(mesh_dim_names) if mesh_dim_names is not None else \
        tuple(f"dim_{i}" for i in range(len(mesh_shape)))
    if len(names) != len(mesh_shape):
        raise ValueError(f"init_device_mesh: {len(names)} names for {len(mesh_shape)} axes")
    if not ember.distributed.is_initialized():
        ember.distributed.init_process_group()
    spec = ",".join(f"{n}:{s}" for n, s in zip(names, mesh_shape))
    return DeviceMesh(device_type, _ember._Mesh(spec), names)
