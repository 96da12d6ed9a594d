"""torch.distributed in ember: the processes of one run and the collectives between them,
over ember's process group (OpenMPI for CPU tensors, NCCL for CUDA tensors; a run
without mpirun is a world of one). Start the ranks with the launcher, torchrun's
counterpart, which sets RANK, LOCAL_RANK and WORLD_SIZE for each:

    python3 -m ember.distributed.run --nproc_per_node=2 train.py --batch_size=4

    import ember.distributed as dist
    dist.init_process_group(backend="gloo")     # any backend name: ember picks the transport
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    dist.destroy_process_group()

Every rank calls the collectives in the same order with tensors of one shape and dtype
(contiguous). A rank that dies ends the run; one that waits longer than the timeout
(default 10 minutes) for the others says what it waited for and exits.
"""

import datetime
import os

from ember import _ember

__all__ = [
    "ReduceOp", "all_gather", "all_gather_into_tensor", "all_reduce", "barrier", "broadcast",
    "destroy_process_group", "get_backend", "get_rank", "get_world_size", "init_process_group", "is_available",
    "is_initialized", "reduce_scatter_tensor",
]


class ReduceOp:
    """How all_reduce and reduce_scatter_tensor combine the ranks' tensors: SUM or AVG
    (PRODUCT, MIN and MAX are not supported)."""
    SUM = "sum"
    AVG = "avg"


_world = None  # (rank, size, backend) once initialized


def is_available():
    return True


def is_initialized():
    return _world is not None


def _env_int(name):
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Joins this process to the run's group. ember chooses the transport itself (MPI for
    CPU tensors, NCCL for CUDA ones), so any backend name PyTorch knows ("nccl", "gloo",
    "mpi", "cpu:gloo,cuda:nccl") is accepted; init_method and store are not needed (the
    launcher's mpirun connects the ranks). world_size and rank, when given, must be the
    launcher's."""
    global _world
    if _world is not None:
        raise RuntimeError("init_process_group: the default process group is already initialized")
    if timeout is not None:
        seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)
        _ember._set_timeout(seconds)
    got_rank, got_size, transport = _ember._world()
    expected_size = _env_int("WORLD_SIZE")
    if expected_size is not None and expected_size != got_size:
        raise RuntimeError(f"init_process_group: WORLD_SIZE is {expected_size} but this process is one of "
                           f"{got_size}; start the ranks with python3 -m ember.distributed.run "
                           f"--nproc_per_node={expected_size} (it runs them under mpirun)")
    if world_size not in (-1, None) and world_size != got_size:
        raise ValueError(f"init_process_group: world_size={world_size}, but the launcher started {got_size}")
    if rank not in (-1, None) and rank != got_rank:
        raise ValueError(f"init_process_group: rank={rank}, but the launcher made this process rank {got_rank}")
    _world = (got_rank, got_size, transport)


def _check():
    if _world is None:
        raise RuntimeError("ember.distributed: call init_process_group() first")


def destroy_process_group(group=None):
    """Leaves the group (the transport itself closes when the process ends)."""
    global _world
    _check()
    _ember._barrier()
    _world = None


def get_rank(group=None):
    _check()
    return _world[0]


def get_world_size(group=None):
    _check()
    return _world[1]


def get_backend(group=None):
    """The transport: "mpi", or "single" for a world of one started without the launcher."""
    _check()
    return _world[2]


def _run(work, async_op):
    if async_op:
        return work
    work.wait()
    return None


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """tensor = its sum (or mean, ReduceOp.AVG) over the ranks, in place. With async_op, a
    work object whose wait() completes it."""
    _check()
    return _run(_ember._all_reduce(tensor, op), async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """tensor = rank src's tensor, in place."""
    _check()
    return _run(_ember._broadcast(tensor, src), async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """output [world_size * n] = the ranks' inputs [n], in rank order."""
    _check()
    return _run(_ember._all_gather(input_tensor, output_tensor), async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """tensor_list[r] = rank r's tensor (a list of world_size tensors of its shape)."""
    _check()
    import ember
    if len(tensor_list) != _world[1]:
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors for {_world[1]} ranks")
    flat = ember.zeros(_world[1] * tensor.numel(), dtype=tensor.dtype, device=tensor.device)
    _ember._all_gather(tensor.contiguous().reshape(-1), flat).wait()
    with ember.no_grad():
        for r, out in enumerate(tensor_list):
            out.copy_(flat[r * tensor.numel():(r + 1) * tensor.numel()].view(*tensor.shape))
    return None


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """output [n] = the sum (or mean) over ranks of their input [world_size * n]'s slice
    [rank * n, (rank + 1) * n)."""
    _check()
    return _run(_ember._reduce_scatter(input, output, op), async_op)


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every rank has called it."""
    _check()
    _ember._barrier()
