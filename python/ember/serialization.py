"""torch.save and torch.load in ember, in PyTorch's own file format, so that files move
both ways: a zip archive holding `archive/data.pkl` (the object, pickled with protocol 2,
each tensor as torch._utils._rebuild_tensor_v2 over a storage named by a persistent id
('storage', torch.<Type>Storage, key, location, numel)), each storage's bytes as
`archive/data/<key>` (little-endian, 64-byte aligned, as PyTorch writes them) and
`archive/version`. Anything picklable can be saved, as with torch.save: state dicts,
nested dicts and lists, NumPy arrays, whole modules and other objects (those load where
their classes can be imported). Tensors that share memory in a file written by PyTorch
(tied weights) share it again when loaded.

A path ending in .safetensors is written as a safetensors file instead (a dict of tensors
by name, optionally with str -> str metadata: the format ember's C++ binaries read and
write), and load reads either format, whatever the name."""

import collections
import io
import json
import os
import pickle
import struct
import sys
import types
import zipfile

from ember import _ember

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]

# The storage classes PyTorch names in its files, by element type (UInt16Storage is
# PyTorch 2.3's; PyTorch 1.13 has no uint16).
_STORAGE_TYPES = {
    "FloatStorage": _ember.float32, "DoubleStorage": _ember.float64, "HalfStorage": _ember.float16,
    "BFloat16Storage": _ember.bfloat16, "LongStorage": _ember.int64, "IntStorage": _ember.int32,
    "ByteStorage": _ember.uint8, "BoolStorage": _ember.bool, "UInt16Storage": _ember.uint16,
}
_STORAGE_OF_DTYPE = {dtype: name for name, dtype in _STORAGE_TYPES.items()}
_DTYPE_NAMES = {"float32": _ember.float32, "float": _ember.float32, "float64": _ember.float64,
                "double": _ember.float64, "float16": _ember.float16, "half": _ember.float16,
                "bfloat16": _ember.bfloat16, "int64": _ember.int64, "long": _ember.int64, "int32": _ember.int32,
                "int": _ember.int32, "uint8": _ember.uint8, "bool": _ember.bool, "uint16": _ember.uint16}
# Each dtype's name in PyTorch's files (torch.float32 pickles as the global torch.float32).
_NAME_OF_DTYPE = {_ember.float32: "float32", _ember.float64: "float64", _ember.float16: "float16",
                  _ember.bfloat16: "bfloat16", _ember.int64: "int64", _ember.int32: "int32",
                  _ember.uint8: "uint8", _ember.bool: "bool", _ember.uint16: "uint16"}
_ZIP_MAGIC = b"PK\x03\x04"
_STRUCTURE = "ember.structure"  # how earlier versions kept other objects in safetensors
_ALIGNMENT = 64  # PyTorch aligns each record's data so that it can be mapped in place


# ---- Writing ----

class _Global:
    """A name in torch's modules, written as pickle's GLOBAL opcode without importing
    torch (a reducer's callable must be callable; this one is never called)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):
        raise TypeError(f"{self.module}.{self.name} stands for PyTorch's function in a file; it is not called")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_DEVICE = _Global("torch", "device")


class _Storage:
    """One tensor's elements, contiguous on the host, as the record data/<key>."""

    def __init__(self, key, tensor):
        self.key, self.location = key, str(tensor.device)
        host = tensor.detach().cpu().contiguous()
        self.dtype, self.numel = host.dtype, host.numel()
        # NumPy's buffer formats have no bfloat16: its bytes are read as uint16.
        raw = host.view(_ember.uint16) if host.dtype == _ember.bfloat16 else host
        self.data = memoryview(raw).cast("B").tobytes() if self.numel else b""


class _Pickler(pickle._Pickler):  # the Python pickler: its save_global can be extended
    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = []

    def _save_global_name(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_Global] = _save_global_name

    def _save_dtype(self, obj):
        self._save_global_name(_Global("torch", _NAME_OF_DTYPE[obj]))

    dispatch[type(_ember.float32)] = _save_dtype

    def persistent_id(self, obj):
        if isinstance(obj, _Storage):
            return ("storage", _Global("torch", _STORAGE_OF_DTYPE[obj.dtype]), obj.key, obj.location, obj.numel)
        return None

    def _save_builtin(self, obj):
        """A function of ember's extension (F.relu kept as a layer's activation) by the
        public name it has in an ember module, as pickle names Python's functions."""
        for name, module in list(sys.modules.items()):
            if name.startswith("ember.") and not name.startswith("ember._") and \
                    getattr(module, obj.__name__, None) is obj:
                return self._save_global_name(_Global(name, obj.__name__))
        return pickle._Pickler.save_global(self, obj)

    dispatch[types.BuiltinFunctionType] = _save_builtin

    def reducer_override(self, obj):
        from ember import nn  # nn imports this module's package
        if isinstance(obj, nn.Parameter):
            return _REBUILD_PARAMETER, (obj.detach(), obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, _ember.Tensor):
            storage = _Storage(str(len(self.storages)), obj)
            self.storages.append(storage)
            shape = tuple(obj.shape)
            strides, step = [], 1
            for size in reversed(shape):  # the contiguous strides of the stored copy
                strides.insert(0, step)
                step *= size
            return _REBUILD_TENSOR, (storage, 0, shape, tuple(strides), obj.requires_grad,
                                     collections.OrderedDict())
        if isinstance(obj, _ember.device):
            return _DEVICE, (str(obj),)
        return NotImplemented


def _write_record(archive, name, data):
    """A stored (uncompressed) record whose data starts at a multiple of _ALIGNMENT bytes
    in the file, padded through the local header's extra field as PyTorch's writer pads."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    try:
        start = archive.fp.tell()
    except (AttributeError, OSError):  # a stream without tell: unaligned, still valid
        start = None
    if start is not None:
        header = 30 + len(name.encode("utf-8")) + 4  # local header, name, extra field's own header
        pad = (-(start + header)) % _ALIGNMENT
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    archive.writestr(info, data)


def _save_torch(obj, f, protocol):
    buffer = io.BytesIO()
    pickler = _Pickler(buffer, protocol)
    pickler.dump(obj)
    with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_STORED) as archive:
        _write_record(archive, "archive/data.pkl", buffer.getvalue())
        _write_record(archive, "archive/byteorder", b"little")
        for storage in pickler.storages:
            _write_record(archive, f"archive/data/{storage.key}", storage.data)
        _write_record(archive, "archive/version", b"3\n")


def _is_path(f):
    return isinstance(f, (str, os.PathLike))


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True, metadata=None):
    """Writes obj to f (a path or a writable binary file object) as torch.save does.
    A path ending in .safetensors is written as safetensors: obj must be a dict of
    tensors by name, with metadata (str -> str) for its header if wanted."""
    if pickle_module is not pickle:
        raise ValueError("save: pickle_module must be Python's pickle (ember writes with its own Pickler subclass)")
    if not _use_new_zipfile_serialization:
        raise ValueError("save: _use_new_zipfile_serialization=False (PyTorch's legacy format) is not supported")
    if not isinstance(pickle_protocol, int) or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"save: pickle_protocol must be 2 to {pickle.HIGHEST_PROTOCOL}, got {pickle_protocol!r}")
    if _is_path(f) and os.fspath(f).endswith(".safetensors"):
        if not (isinstance(obj, dict) and all(isinstance(k, str) and isinstance(v, _ember.Tensor)
                                              for k, v in obj.items())):
            raise TypeError("save: a .safetensors file holds a dict of tensors by name; save anything else to "
                            "another name (PyTorch's format)")
        _ember._save(obj, os.fspath(f), metadata or {})
        return
    if metadata:
        raise ValueError("save: metadata goes into .safetensors files only")
    if _is_path(f):
        path = os.fspath(f)
        temporary = f"{path}.tmp{os.getpid()}"
        try:  # a file already there is replaced whole or not at all
            with open(temporary, "wb") as out:
                _save_torch(obj, out, pickle_protocol)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.remove(temporary)
    else:
        if not hasattr(f, "write"):
            raise TypeError(f"save: f must be a path or a binary file object, got {type(f).__name__}")
        _save_torch(obj, f, pickle_protocol)


# ---- Reading ----

class _StorageType:
    """torch.<Type>Storage as a file names it: the dtype of a storage's elements."""

    def __init__(self, name):
        self.name, self.dtype = name, _STORAGE_TYPES[name]


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    t = storage.as_strided(tuple(size), tuple(stride), storage_offset)
    return t.requires_grad_(True) if requires_grad else t


def _rebuild_parameter(data, requires_grad, backward_hooks=None, state=None):
    from ember import nn
    parameter = nn.Parameter(data, requires_grad)
    for name, value in (state or {}).items():
        setattr(parameter, name, value)
    return parameter


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: func(*args), as new_type (a Parameter stays
    one), with the state's attributes set."""
    result = func(*args)
    if isinstance(new_type, type) and not isinstance(result, new_type):
        result = new_type(result) if new_type is not _ember.Tensor else result
    for name, value in (state or {}).items():
        setattr(result, name, value)
    return result


def _device(kind, index=None):
    return _ember.device(kind if index is None else f"{kind}:{index}")


def _torch_name(module, name):
    """What a torch global in a file stands for in ember, or None."""
    from ember import nn
    if module == "torch._utils":
        return {"_rebuild_tensor_v2": _rebuild_tensor_v2, "_rebuild_parameter": _rebuild_parameter,
                "_rebuild_parameter_with_state": _rebuild_parameter}.get(name)
    if module == "torch._tensor" and name == "_rebuild_from_type_v2":
        return _rebuild_from_type_v2
    if module == "torch.nn.parameter" and name == "Parameter":
        return nn.Parameter
    if module in ("torch", "torch.storage"):
        if name in _STORAGE_TYPES:
            return _StorageType(name)
        if name in _DTYPE_NAMES:
            return _DTYPE_NAMES[name]
        return {"Size": tuple, "device": _device, "Tensor": _ember.Tensor}.get(name)
    return None


# What weights_only=True lets a file name besides torch's tensors (PyTorch's own list, in
# the part that ember's objects need), and what add_safe_globals adds to it.
_WEIGHTS_ONLY = {("collections", "OrderedDict"), ("builtins", "set"), ("builtins", "frozenset"),
                 ("builtins", "bytearray"), ("builtins", "slice")}
_safe_globals = []


def add_safe_globals(safe_globals):
    """torch.serialization.add_safe_globals: classes and functions weights_only=True loads
    may name (a list of objects, or of (object, "module.name") pairs)."""
    _safe_globals.extend(safe_globals)


def get_safe_globals():
    return list(_safe_globals)


def clear_safe_globals():
    _safe_globals.clear()


class safe_globals:
    """torch.serialization.safe_globals: add_safe_globals for the body of a with block."""

    def __init__(self, safe_globals):
        self.globals = list(safe_globals)

    def __enter__(self):
        _safe_globals.extend(self.globals)

    def __exit__(self, *exc):
        del _safe_globals[len(_safe_globals) - len(self.globals):]


def _allowed(module, name):
    """Whether weights_only=True may load the global module.name: PyTorch's safe list,
    or an object add_safe_globals gave (found by identity in the module as imported: a
    function of ember's extension is named by its public module, not its own)."""
    if (module, name) in _WEIGHTS_ONLY:
        return True
    found = getattr(sys.modules.get(module), name, None)
    for item in _safe_globals:
        if isinstance(item, tuple):
            if f"{module}.{name}" == item[1]:
                return True
        elif found is not None and found is item:
            return True
    return False


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, archive, prefix, place, weights_only, **kwargs):
        super().__init__(file, **kwargs)
        self.archive, self.prefix, self.place, self.weights_only = archive, prefix, place, weights_only
        self.storages = {}

    def find_class(self, module, name):
        if module == "torch" or module.startswith("torch."):
            found = _torch_name(module, name)
            if found is None:
                raise pickle.UnpicklingError(
                    f"load: the file refers to {module}.{name}, which ember does not have (a whole PyTorch module "
                    "or another PyTorch object: save its state_dict() instead)")
            return found
        if self.weights_only and not _allowed("builtins" if module == "__builtin__" else module, name):
            raise pickle.UnpicklingError(
                f"load: weights_only=True refuses {module}.{name} (tensors, dicts, lists and numbers only); pass "
                "weights_only=False for a file you trust")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"load: unknown persistent id {pid!r} (expected a storage)")
        _, storage_type, key, location, numel = pid
        if key not in self.storages:
            if not isinstance(storage_type, _StorageType):
                raise pickle.UnpicklingError(f"load: storage {key} has an unknown type {storage_type!r}")
            record = f"{self.prefix}data/{key}"
            try:
                data = bytearray(self.archive.read(record))
            except KeyError:
                raise pickle.UnpicklingError(f"load: the archive has no record {record}") from None
            storage = _ember.frombuffer(data, dtype=storage_type.dtype, count=numel)
            self.storages[key] = self.place(storage, location)
        return self.storages[key]


def _placer(map_location):
    """map_location as torch.load takes it: None (where each was saved), a device or its
    name, a dict from saved location to location, or a function (storage, location) ->
    storage (None from it: where it was saved)."""
    from ember import cuda

    def saved(storage, location):
        if location.startswith("cuda") and not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but ember.cuda.is_available() is False. If you "
                "are running on a CPU-only machine, please use ember.load with map_location='cpu' to map your "
                "storages to the CPU.")
        return storage if location == "cpu" else storage.to(location)

    if map_location is None:
        return saved
    if isinstance(map_location, (str, _ember.device)):
        return lambda storage, location: storage.to(map_location)
    if isinstance(map_location, dict):
        return lambda storage, location: saved(storage, str(map_location.get(location, location)))
    if callable(map_location):
        def call(storage, location):
            result = map_location(storage, location)
            return saved(storage, location) if result is None else result
        return call
    raise TypeError(f"load: map_location must be None, a device, a dict or a function, not "
                    f"{type(map_location).__name__}")


def _load_torch(f, place, weights_only, pickle_load_args):
    with zipfile.ZipFile(f) as archive:
        names = archive.namelist()
        pickles = [n for n in names if n == "data.pkl" or n.endswith("/data.pkl")]
        if not pickles:
            raise pickle.UnpicklingError("load: the zip archive has no data.pkl (not a file torch.save wrote)")
        prefix = pickles[0][:-len("data.pkl")]
        unpickler = _Unpickler(io.BytesIO(archive.read(pickles[0])), archive, prefix, place, weights_only,
                               **pickle_load_args)
        return unpickler.load()


def _decode(node, tensors):
    """The structure an earlier ember.save kept in a safetensors file's metadata."""
    if "tensor" in node:
        return tensors[node["tensor"]]
    if "dict" in node:
        return {key: _decode(value, tensors) for key, value in node["dict"]}
    if "list" in node:
        return [_decode(v, tensors) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, tensors) for v in node["tuple"])
    return node["value"]


def _load_safetensors(path, place):
    tensors, metadata = _ember._load(path)
    tensors = {name: place(t, "cpu") for name, t in tensors.items()}
    if _STRUCTURE in metadata:
        return _decode(json.loads(metadata[_STRUCTURE]), tensors)
    return tensors


def load(f, map_location=None, pickle_module=pickle, *, weights_only=False, mmap=None, **pickle_load_args):
    """Reads what torch.save or ember.save wrote (PyTorch's zip format), or a safetensors
    file (a dict of tensors), from a path or a readable binary file object.
    map_location: see _placer. weights_only=True: only tensors, dicts, lists, tuples,
    numbers and strings (PyTorch's safe subset). pickle_load_args go to the Unpickler
    (encoding=...)."""
    if pickle_module is not pickle:
        raise ValueError("load: pickle_module must be Python's pickle")
    if mmap:
        raise ValueError("load: mmap=True is not supported (ember reads the records into memory)")
    place = _placer(map_location)
    if _is_path(f):
        path = os.fspath(f)
        with open(path, "rb") as file:
            head = file.read(8)
            if head.startswith(_ZIP_MAGIC):
                file.seek(0)
                return _load_torch(file, place, weights_only, pickle_load_args)
        return _load_safetensors(path, place)
    if not hasattr(f, "read"):
        raise TypeError(f"load: f must be a path or a binary file object, got {type(f).__name__}")
    start = f.tell()
    head = f.read(4)
    f.seek(start)
    if head != _ZIP_MAGIC:
        raise pickle.UnpicklingError("load: the file object does not hold a zip archive (PyTorch's format); "
                                     "a safetensors file is read from its path")
    return _load_torch(f, place, weights_only, pickle_load_args)
