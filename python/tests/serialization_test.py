"""ember.save and ember.load in PyTorch's format: files PyTorch 1.13 wrote
(testdata/torch_*.pt, from tools/reference/torch_checkpoints.py, their values formulas
of position) load with their values, dtypes, shared storages and parameters; what ember
writes loads back in ember, through paths and file objects, and in PyTorch itself where
python3-torch is installed (the test says so when it skips that half)."""

import collections
import dataclasses
import io
import os
import pickle
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import ember
import ember.nn as nn

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")


def values(*shape, dtype=ember.float32):
    """The fixtures' formula: (i - n/2) / 8 at flat position i."""
    n = int(np.prod(shape)) if shape else 1
    return ((np.arange(n, dtype=np.float64) - n // 2) / 8).reshape(shape).tolist()


def torch_available():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True).returncode == 0


@dataclasses.dataclass
class Config:  # an arbitrary picklable object, as nanoGPT keeps its model_args
    n_layer: int
    name: str


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)


class LoadsPyTorchFilesTest(unittest.TestCase):
    def test_a_state_dict(self):
        sd = ember.load(os.path.join(TESTDATA, "torch_state_dict.pt"))
        self.assertIsInstance(sd, collections.OrderedDict)
        self.assertEqual(list(sd), ["weight", "bias"])
        self.assertEqual(sd["weight"].tolist(), values(3, 4))
        self.assertEqual(sd["bias"].tolist(), values(3))
        layer = nn.Linear(4, 3)
        layer.load_state_dict(sd)
        self.assertEqual(layer(ember.ones(1, 4)).tolist(),
                         [[sum(r) + b for r, b in zip(values(3, 4), values(3))]])

    def test_a_nested_checkpoint_of_every_dtype(self):
        c = ember.load(os.path.join(TESTDATA, "torch_checkpoint.pt"))
        self.assertEqual((c["iter_num"], c["best_val_loss"]), (7, 1.25))
        self.assertEqual(c["config"], {"n_layer": 2, "bias": False, "name": "tiny", "sizes": (3, 4), "none": None})
        self.assertEqual(c["model"]["head.weight"].tolist(), values(5, 2))
        d = c["dtypes"]
        for name in ("float32", "float64", "float16", "bfloat16"):
            self.assertEqual(d[name].dtype, getattr(ember, name))
            self.assertEqual(d[name].float().tolist(), values(2, 3), name)
        self.assertEqual((d["int64"].dtype, d["int64"].tolist()), (ember.int64, [[-3, -2, -1], [0, 1, 2]]))
        self.assertEqual((d["int32"].dtype, d["int32"].tolist()), (ember.int32, [-3, -2, -1, 0, 1, 2]))
        self.assertEqual((d["uint8"].dtype, d["uint8"].tolist()), (ember.uint8, list(range(250, 256))))
        self.assertEqual((d["bool"].dtype, d["bool"].tolist()), (ember.bool, [True, False, True]))
        self.assertEqual(c["scalar"].shape, ())
        self.assertEqual(c["scalar"].item(), 2.5)
        self.assertEqual(tuple(c["empty"].shape), (0, 3))
        self.assertEqual((c["dtype"], str(c["device"])), (ember.bfloat16, "cpu"))

    def test_views_share_their_storage_again(self):
        c = ember.load(os.path.join(TESTDATA, "torch_checkpoint.pt"))
        base = values(4, 6)
        self.assertEqual(c["row"].tolist(), base[1])
        self.assertEqual(c["column"].tolist(), [r[2] for r in base])
        self.assertEqual(c["transposed"].tolist(), [list(col) for col in zip(*base)])
        with ember.no_grad():
            c["tied"][0][1, 2] = 100.0  # one storage in the file: every view sees the write
        self.assertEqual(c["tied"][1][1, 2].item(), 100.0)
        self.assertEqual((c["row"][2].item(), c["column"][1].item(), c["transposed"][2, 1].item()),
                         (100.0, 100.0, 100.0))

    def test_parameters_stay_parameters(self):
        c = ember.load(os.path.join(TESTDATA, "torch_checkpoint.pt"))
        self.assertIsInstance(c["parameter"], nn.Parameter)
        self.assertTrue(c["parameter"].requires_grad)
        self.assertEqual(c["parameter"].tolist(), values(2, 2))
        self.assertFalse(c["frozen"].requires_grad)

    def test_map_location_and_weights_only(self):
        path = os.path.join(TESTDATA, "torch_checkpoint.pt")
        seen = []
        c = ember.load(path, map_location=lambda storage, location: seen.append(location) or storage)
        self.assertEqual(set(seen), {"cpu"})
        self.assertEqual(c["scalar"].item(), 2.5)
        self.assertEqual(ember.load(path, map_location="cpu")["iter_num"], 7)
        self.assertEqual(ember.load(path, map_location={"cpu": "cpu"})["iter_num"], 7)
        self.assertEqual(ember.load(path, weights_only=True)["iter_num"], 7)
        buffer = io.BytesIO()
        ember.save({"config": Config(2, "x")}, buffer)
        buffer.seek(0)
        with self.assertRaisesRegex(pickle.UnpicklingError, "weights_only=True refuses .*Config"):
            ember.load(buffer, weights_only=True)
        with self.assertRaisesRegex(TypeError, "map_location"):
            ember.load(path, map_location=3)


class SavesTest(unittest.TestCase):
    def roundtrip(self, obj, **kwargs):
        buffer = io.BytesIO()
        ember.save(obj, buffer, **kwargs)
        buffer.seek(0)
        return ember.load(buffer)

    def test_objects_round_trip_through_a_file_object(self):
        x = ember.randn(3, 5)
        obj = {"x": x, "t": x.t(), "bf": x.to(ember.bfloat16), "ints": ember.arange(4), "mask": x > 0,
               "s": ember.tensor(1.5), "e": ember.zeros(0, 2), "config": Config(3, "gpt"),
               "array": np.arange(6).reshape(2, 3), "list": [1, "a", None, (2.0,)], "dtype": ember.float16}
        back = self.roundtrip(obj)
        self.assertEqual(back["x"].tolist(), x.tolist())
        self.assertEqual(back["t"].tolist(), x.t().tolist())
        self.assertEqual(back["bf"].dtype, ember.bfloat16)
        self.assertEqual(back["bf"].float().tolist(), x.to(ember.bfloat16).float().tolist())
        self.assertEqual(back["mask"].tolist(), (x > 0).tolist())
        self.assertEqual((back["s"].item(), tuple(back["e"].shape)), (1.5, (0, 2)))
        self.assertEqual(back["config"], Config(3, "gpt"))
        self.assertEqual(back["array"].tolist(), [[0, 1, 2], [3, 4, 5]])
        self.assertEqual((back["list"], back["dtype"]), ([1, "a", None, (2.0,)], ember.float16))

    def test_a_whole_module_and_an_optimizer(self):
        model = TinyNet()
        opt = ember.optim.AdamW(model.parameters(), lr=0.1)
        model(ember.ones(4, 3)).sum().backward()
        opt.step()
        back = self.roundtrip({"model": model, "opt": opt.state_dict()})
        self.assertIsInstance(back["model"], TinyNet)
        self.assertIsInstance(back["model"].fc.weight, nn.Parameter)
        x = ember.randn(2, 3)
        self.assertEqual(back["model"](x).tolist(), model(x).tolist())
        resumed = ember.optim.AdamW(back["model"].parameters(), lr=0.1)
        resumed.load_state_dict(back["opt"])

    def test_paths_are_replaced_whole_and_safetensors_by_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ckpt.pt")
            ember.save({"a": ember.ones(2)}, path)
            with open(path, "rb") as f:
                self.assertEqual(f.read(4), b"PK\x03\x04")
            with self.assertRaises(pickle.PicklingError):
                ember.save({"a": lambda: 0}, path)  # fails while pickling: the file stays as it was
            self.assertEqual(ember.load(path)["a"].tolist(), [1.0, 1.0])
            self.assertEqual(os.listdir(tmp), ["ckpt.pt"])
            st = os.path.join(tmp, "model.safetensors")
            ember.save({"w": ember.ones(2, 2)}, st, metadata={"format": "pt"})
            with open(st, "rb") as f:
                self.assertNotEqual(f.read(4), b"PK\x03\x04")
            self.assertEqual(ember.load(st)["w"].tolist(), [[1.0, 1.0], [1.0, 1.0]])
            with self.assertRaisesRegex(TypeError, "dict of tensors"):
                ember.save({"n": 1}, st)

    def test_arguments_are_honoured_or_refused_by_name(self):
        self.assertEqual(self.roundtrip([ember.ones(1)], pickle_protocol=4)[0].tolist(), [1.0])
        for kwargs, message in (({"pickle_protocol": 1}, "pickle_protocol"),
                                ({"_use_new_zipfile_serialization": False}, "legacy"),
                                ({"pickle_module": object()}, "pickle_module"),
                                ({"metadata": {"a": "b"}}, "metadata")):
            with self.assertRaisesRegex(ValueError, message):
                ember.save({"a": ember.ones(1)}, io.BytesIO(), **kwargs)
        with self.assertRaisesRegex(ValueError, "mmap"):
            ember.load(os.path.join(TESTDATA, "torch_state_dict.pt"), mmap=True)
        with self.assertRaisesRegex(pickle.UnpicklingError, "zip archive"):
            ember.load(io.BytesIO(b"not a checkpoint"))
        with self.assertRaises(FileNotFoundError):
            ember.load("/nowhere/ckpt.pt")

    def test_pytorch_reads_what_ember_writes(self):
        if not torch_available():
            self.skipTest(f"PyTorch is not installed for {sys.executable} (apt-get install python3-torch)")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "from_ember.pt")
            model = nn.Linear(3, 2)
            ember.save({"model": model.state_dict(), "bf": ember.tensor([1.5, -2.0]).to(ember.bfloat16),
                        "ints": ember.arange(3).to(ember.int32), "mask": ember.tensor([True, False]),
                        "half": ember.tensor([0.5]).to(ember.float16), "t": ember.arange(6.0).view(2, 3).t(),
                        "p": nn.Parameter(ember.ones(2)), "step": 3, "dtype": ember.bfloat16}, path)
            script = f"""
import torch
c = torch.load({path!r})
assert c["model"]["weight"].shape == (2, 3) and c["model"]["weight"].dtype == torch.float32
assert c["bf"].dtype == torch.bfloat16 and c["bf"].tolist() == [1.5, -2.0]
assert c["ints"].dtype == torch.int32 and c["ints"].tolist() == [0, 1, 2]
assert c["mask"].tolist() == [True, False] and c["half"].dtype == torch.float16
assert c["t"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
assert isinstance(c["p"], torch.nn.Parameter) and c["p"].requires_grad
assert c["step"] == 3 and c["dtype"] == torch.bfloat16
print(repr(c["model"]["weight"].tolist()))
"""
            result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(eval(result.stdout), model.weight.tolist())


if __name__ == "__main__":
    unittest.main()
