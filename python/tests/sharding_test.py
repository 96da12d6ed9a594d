"""ember.distributed's sharding in PyTorch's names: init_device_mesh, fully_shard (FSDP2)
and parallelize_module with ColwiseParallel/RowwiseParallel, on a GPT written as
nanoGPT's model.py writes it (tied head, fused q/k/v, causal attention, GELU MLP).
Under `python3 -m ember.distributed.run --nproc_per_node=N` (2 and 4), three AdamW steps with
every block and the root fully sharded (each rank on its half of the batch), and with
every MLP tensor parallel (both ranks on the whole batch), clipped by clip_grad_norm_ over
the shards, end with the gradient norms and the weights one process reaches on the whole
batch, gathered by get_model_state_dict."""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import ember
import ember.distributed as dist
import ember.nn as nn
import ember.nn.functional as F
from ember.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from ember.distributed.device_mesh import init_device_mesh
from ember.distributed.fsdp import FSDPModule, fully_shard
from ember.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

VOCAB, WIDTH, HEADS, LAYERS, T = 64, 32, 4, 2, 8
STEPS, ROWS = 3, 4


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(WIDTH, 4 * WIDTH)
        self.c_proj = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.c_attn = nn.Linear(WIDTH, 3 * WIDTH)
        self.c_proj = nn.Linear(WIDTH, WIDTH)
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.mlp = Mlp()

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, HEADS, c // HEADS).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.mlp(self.ln_2(x))


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, WIDTH)
        self.wpe = nn.Embedding(T, WIDTH)
        self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(WIDTH)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as nanoGPT's

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(ember.arange(idx.size(1)))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))


def make_model():
    ember.manual_seed(0)
    return Gpt()


def batch(step):
    rng = np.random.default_rng(step)
    tokens = rng.integers(0, VOCAB, size=(ROWS, T + 1))
    return tokens[:, :-1], tokens[:, 1:]


def train(model, rows, norms=None):
    """STEPS AdamW steps on `rows` of each global batch, clipped as nanoGPT clips (the
    limit below the norms, so that every step is scaled); each step's norm appended to
    norms."""
    opt = ember.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    for step in range(STEPS):
        x, y = batch(step)
        loss = model(ember.tensor(x[rows]), ember.tensor(y[rows]))
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        if norms is not None:
            norms.append(norm)
        opt.step()
        opt.zero_grad(set_to_none=True)
    return model


def rank_main(out_dir):
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,), mesh_dim_names=("dp",))
    assert (mesh.size(), mesh.get_local_rank(), mesh.mesh_dim_names) == (world, rank, ("dp",))
    full = StateDictOptions(full_state_dict=True)

    # FSDP: each block a unit, the root the rest; each rank its rows.
    model = make_model()
    for block in model.h:
        fully_shard(block, mesh=mesh)
    fully_shard(model, mesh=mesh)
    assert isinstance(model, FSDPModule) and isinstance(model.h[0], FSDPModule)
    assert tuple(model.wte.weight.shape) == (VOCAB // world, WIDTH), model.wte.weight.shape
    assert model.lm_head.weight is model.wte.weight  # still tied: one shard
    assert len(list(model.parameters())) == len(list(make_model().parameters()))
    per_rank = ROWS // world
    norms = []
    train(model, slice(rank * per_rank, (rank + 1) * per_rank), norms)
    state = get_model_state_dict(model, options=full)
    if rank == 0:
        state["norms"] = ember.tensor(norms, dtype=ember.float64)
        ember.save(state, os.path.join(out_dir, f"fsdp{world}.safetensors"))

    # Tensor parallel: every MLP split, Megatron's way; the ranks share the whole batch.
    model = make_model()
    for block in model.h:
        parallelize_module(block.mlp, mesh, {"c_fc": ColwiseParallel(), "c_proj": RowwiseParallel()})
    assert tuple(model.h[0].mlp.c_fc.weight.shape) == (4 * WIDTH // world, WIDTH)
    assert tuple(model.h[0].mlp.c_proj.weight.shape) == (WIDTH, 4 * WIDTH // world)
    norms = []
    train(model, slice(0, ROWS), norms)
    state = get_model_state_dict(model, options=full)
    if rank == 0:
        state["norms"] = ember.tensor(norms, dtype=ember.float64)
        ember.save(state, os.path.join(out_dir, f"tp{world}.safetensors"))
    dist.destroy_process_group()


class ShardingTest(unittest.TestCase):
    def test_two_and_four_ranks_train_as_one_process(self):
        sharded = {}
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as out:
            env = dict(os.environ)
            # OpenMPI's shared-memory files under the test's own folder (as distributed_test).
            env["OMPI_MCA_btl_vader_backing_directory"] = out
            env["OMPI_MCA_orte_tmpdir_base"] = out
            env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
            for world in (2, 4):
                run = subprocess.run([sys.executable, "-m", "ember.distributed.run", f"--nproc_per_node={world}",
                                      os.path.abspath(__file__), "--rank-main", out],
                                     env=env, capture_output=True, text=True, timeout=300)
                self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
                for how in ("fsdp", "tp"):
                    sharded[f"{how}{world}"] = ember.load(os.path.join(out, f"{how}{world}.safetensors"))
        norms = []
        single = train(make_model(), slice(0, ROWS), norms).state_dict()
        start = make_model().state_dict()
        for how, state in sharded.items():
            # clip_grad_norm_ over the shards: the whole model's norm, every step.
            np.testing.assert_allclose(state.pop("norms").numpy(), norms, rtol=1e-5, err_msg=how)
            self.assertGreater(min(norms), 0.1)
            self.assertEqual(sorted(state), sorted(single), how)
            for name in single:
                got, want = state[name].numpy(), single[name].numpy()
                if name.endswith("c_attn.bias"):
                    # The keys' bias has a gradient of zero in exact arithmetic (softmax
                    # ignores a constant added to every score), so its steps are rounding
                    # noise scaled by lr / eps: compare the queries' and values' thirds.
                    got, want = np.delete(got, np.s_[WIDTH:2 * WIDTH]), np.delete(want, np.s_[WIDTH:2 * WIDTH])
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{how}: {name}")
        # The weights moved: the comparison is not of two untrained models.
        self.assertGreater(np.abs(single["h.0.mlp.c_fc.weight"].numpy() - start["h.0.mlp.c_fc.weight"].numpy()).max(),
                           0.01)

    def test_a_world_of_one(self):
        mesh = init_device_mesh("cpu", (1,))
        try:
            self.assertEqual(mesh.mesh_dim_names, ("dim_0",))  # PyTorch's default names
            with self.assertRaisesRegex(KeyError, "no axis 'tp'"):
                mesh["tp"]
            with self.assertRaisesRegex(ValueError, "2 names for 1 axes"):
                init_device_mesh("cpu", (1,), mesh_dim_names=("a", "b"))
            # Sharded over one rank: the same steps as the plain model.
            model = make_model()
            for block in model.h:
                fully_shard(block, mesh=mesh)
            fully_shard(model, mesh=mesh)
            with self.assertRaisesRegex(ValueError, "sharded already"):
                fully_shard(model, mesh=mesh)
            got = train(model, slice(0, ROWS)).state_dict()
            want = train(make_model(), slice(0, ROWS)).state_dict()
            for name in want:
                np.testing.assert_allclose(got[name].numpy(), want[name].numpy(), rtol=1e-6, atol=1e-7,
                                           err_msg=name)
            with self.assertRaisesRegex(NotImplementedError, "only nn.Linear"):
                parallelize_module(make_model().h[0], mesh, {"ln_1": ColwiseParallel()})
            with self.assertRaisesRegex(ValueError, "no submodule matches 'nope'"):
                parallelize_module(make_model(), mesh, {"nope": ColwiseParallel()})
        finally:
            dist.destroy_process_group()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rank-main"]:
        rank_main(sys.argv[2])
    else:
        unittest.main()
