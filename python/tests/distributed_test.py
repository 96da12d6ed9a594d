"""ember.distributed, DistributedDataParallel and the launcher from Python: a world of one
without the launcher; under `python3 -m ember.distributed.run --nproc_per_node=2` each
rank sees torchrun's variables, the collectives give the values their definitions say,
and DDP training on 2 ranks (with a no_sync micro-step, as nanoGPT accumulates) ends
at the weights one process reaches on the whole batch."""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn

STEPS, ROWS = 3, 8  # optimizer steps; rows of the global batch


def batch(step):
    rng = np.random.default_rng(step)
    return rng.normal(size=(ROWS, 5)).astype(np.float32), rng.normal(size=(ROWS, 1)).astype(np.float32)


def make_model():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))


def train(model, rows, wrap=lambda m: m):
    """STEPS AdamW steps; each global batch in two micro-batches of its `rows` (the rank's
    share), the first without synchronising when wrapped by DDP."""
    net = wrap(model)
    opt = ember.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1)
    for step in range(STEPS):
        x, y = batch(step)
        x, y = x[rows], y[rows]
        half = len(x) // 2
        for micro, part in enumerate((slice(0, half), slice(half, None))):
            if hasattr(net, "require_backward_grad_sync"):
                net.require_backward_grad_sync = micro == 1
            loss = ((net(ember.tensor(x[part])) - ember.tensor(y[part])) ** 2).mean() / 2
            loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return model


def rank_main(out_dir):
    """One rank of the launcher's run: checks the environment and the collectives, then
    trains its rows under DDP; rank 0 writes the weights."""
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    assert os.environ["LOCAL_RANK"] == str(rank) and os.environ["LOCAL_WORLD_SIZE"] == str(world)
    dist.init_process_group(backend="gloo")
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (rank, 2, "mpi")
    t = ember.tensor([1.0, 2.0]) * (rank + 1)
    dist.all_reduce(t)
    assert t.tolist() == [3.0, 6.0], t
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert t.tolist() == [3.0, 6.0], t
    b = ember.tensor([float(rank + 7)])
    dist.broadcast(b, src=1)
    assert b.tolist() == [8.0]
    gathered = ember.zeros(4)
    dist.all_gather_into_tensor(gathered, ember.tensor([rank, rank + 10.0]))
    assert gathered.tolist() == [0.0, 10.0, 1.0, 11.0], gathered
    parts = [ember.zeros(2), ember.zeros(2)]
    dist.all_gather(parts, ember.tensor([rank, -rank * 1.0]))
    assert [p.tolist() for p in parts] == [[0.0, 0.0], [1.0, -1.0]]
    scattered = ember.zeros(1)
    work = dist.reduce_scatter_tensor(scattered, ember.tensor([1.0, 2.0]) * (rank + 1), async_op=True)
    work.wait()
    assert scattered.tolist() == [3.0 * (rank + 1)], scattered
    model = make_model()
    if rank == 1:  # DDP starts every rank from rank 0's weights
        with ember.no_grad():
            for p in model.parameters():
                p.fill_(0.25)
    rows = slice(rank * ROWS // world, (rank + 1) * ROWS // world)
    ddp_holder = {}

    def wrap(m):
        ddp_holder["ddp"] = nn.parallel.DistributedDataParallel(m, bucket_cap_mb=0.0001)
        return ddp_holder["ddp"]

    train(model, rows, wrap)
    assert ddp_holder["ddp"].comm_stats()["buckets"] >= 2  # small buckets: several in flight
    if rank == 0:
        ember.save(model.state_dict(), os.path.join(out_dir, "ddp.safetensors"))
    dist.destroy_process_group()


class DistributedTest(unittest.TestCase):
    def test_a_world_of_one_without_the_launcher(self):
        dist.init_process_group(backend="nccl")  # any backend name: ember picks the transport
        try:
            self.assertTrue(dist.is_initialized())
            self.assertEqual((dist.get_rank(), dist.get_world_size()), (0, 1))
            t = ember.tensor([1.0, -2.0])
            dist.all_reduce(t)
            self.assertEqual(t.tolist(), [1.0, -2.0])
            with self.assertRaisesRegex(RuntimeError, "already initialized"):
                dist.init_process_group()
            model = make_model()
            ddp = nn.parallel.DistributedDataParallel(model)
            self.assertEqual([n for n, _ in ddp.named_parameters()][0], "module.0.weight")  # as PyTorch's
            with ddp.no_sync():
                self.assertFalse(ddp.require_backward_grad_sync)
                ddp(ember.ones(2, 5)).sum().backward()
            self.assertTrue(ddp.require_backward_grad_sync)
            ddp(ember.ones(2, 5)).sum().backward()  # synchronised: over one rank, the sum of both
            np.testing.assert_allclose(model[2].bias.grad.numpy(), [4.0])
            with self.assertRaisesRegex(ValueError, "world_size=4"):
                dist.destroy_process_group()
                dist.init_process_group(world_size=4)
        finally:
            if dist.is_initialized():
                dist.destroy_process_group()
        self.assertFalse(dist.is_initialized())
        with self.assertRaisesRegex(RuntimeError, "init_process_group"):
            dist.get_rank()
        with self.assertRaisesRegex(RuntimeError, "init_process_group"):
            nn.parallel.DistributedDataParallel(make_model())

    def test_two_ranks_train_as_one_process_on_the_whole_batch(self):
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as out:
            env = dict(os.environ)
            # OpenMPI's shared-memory files under the test's own folder (Bazel's sandboxes
            # may give two tests' ranks the same process ids).
            env["OMPI_MCA_btl_vader_backing_directory"] = out
            env["OMPI_MCA_orte_tmpdir_base"] = out
            env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
            run = subprocess.run([sys.executable, "-m", "ember.distributed.run", "--nproc_per_node=2",
                                  os.path.abspath(__file__), "--rank-main", out],
                                 env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            ddp = ember.load(os.path.join(out, "ddp.safetensors"))
        single = train(make_model(), slice(0, ROWS)).state_dict()
        self.assertEqual(sorted(ddp), sorted(single))
        for name in single:
            np.testing.assert_allclose(ddp[name].numpy(), single[name].numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=name)
        # And the weights moved: the comparison is not of two untrained models.
        self.assertGreater(np.abs(single["0.weight"].numpy() - make_model().state_dict()["0.weight"].numpy()).max(),
                           0.05)

    def test_the_launcher_refuses_what_it_cannot_do(self):
        def launch(*args):
            return subprocess.run([sys.executable, "-m", "ember.distributed.run", *args],
                                  capture_output=True, text=True, timeout=60)

        self.assertIn("no script", launch("--nproc_per_node=2", "/nonexistent.py").stderr)
        self.assertIn("one machine only", launch("--nnodes=2", __file__).stderr)
        self.assertIn("expected at least 1", launch("--nproc_per_node=0", __file__).stderr)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rank-main"]:
        rank_main(sys.argv[2])
    else:
        unittest.main()
