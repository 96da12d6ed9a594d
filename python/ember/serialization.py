"""torch.save and torch.load in ember: safetensors files. A dict of tensors by name (a
state_dict) is written as it is, the file the C++ binaries read and write. Anything else
(nanoGPT's checkpoint: the model's and the optimizer's state dicts beside ints, floats,
strings, None, lists and dicts of them) is written as its tensors under their paths plus
the structure around them as JSON in the file's "__metadata__" (key "ember.structure"),
so the file stays a valid safetensors file that other readers can list."""

import json

from ember import _ember

__all__ = ["load", "save"]

_STRUCTURE = "ember.structure"


def _encode(obj, path, tensors):
    if isinstance(obj, _ember.Tensor):
        name = f"{len(tensors)}:{'.'.join(path)}"
        tensors[name] = obj
        return {"tensor": name}
    if isinstance(obj, dict):
        items = []
        for key, value in obj.items():
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise TypeError(f"save: dict keys must be str or int, got {type(key).__name__} at {'.'.join(path)}")
            items.append([key, _encode(value, path + [str(key)], tensors)])
        return {"dict": items}
    if isinstance(obj, (list, tuple)):
        return {"tuple" if isinstance(obj, tuple) else "list":
                [_encode(v, path + [str(i)], tensors) for i, v in enumerate(obj)]}
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return {"value": obj}
    raise TypeError(f"save: cannot save a {type(obj).__name__} (at {'.'.join(path) or 'the top'}): "
                    "tensors, dicts, lists, tuples, str, int, float, bool and None only")


def _decode(node, tensors):
    if "tensor" in node:
        return tensors[node["tensor"]]
    if "dict" in node:
        return {key: _decode(value, tensors) for key, value in node["dict"]}
    if "list" in node:
        return [_decode(v, tensors) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, tensors) for v in node["tuple"])
    return node["value"]


def _flat(obj):
    return isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, _ember.Tensor) for k, v in obj.items())


def save(obj, f, metadata=None):
    """Writes obj to the file f (a path). metadata: str -> str pairs for the file's header
    (with a dict of tensors only)."""
    path = str(f)
    if _flat(obj):
        _ember._save(obj, path, metadata or {})
        return
    if metadata:
        raise ValueError("save: metadata goes with a dict of tensors only")
    tensors = {}
    structure = _encode(obj, [], tensors)
    _ember._save(tensors, path, {_STRUCTURE: json.dumps(structure)})


def load(f, map_location=None, weights_only=None):
    """Reads what save wrote. map_location: a device (or its name, or a function as
    torch.load takes) to put the tensors on; by default they load on the CPU."""
    tensors, metadata = _ember._load(str(f))
    if map_location is not None:
        if callable(map_location):
            tensors = {k: map_location(v, "cpu") for k, v in tensors.items()}
        else:
            tensors = {k: v.to(map_location) for k, v in tensors.items()}
    if _STRUCTURE in metadata:
        return _decode(json.loads(metadata[_STRUCTURE]), tensors)
    return tensors
