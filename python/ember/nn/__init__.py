"""torch.nn in ember: Module (subclass it in Python; attributes that are Parameters or
Modules register themselves; register_buffer, apply), Parameter, the layers, the losses,
Sequential, ModuleList, ModuleDict and init. The layers start from the C++ layers' parameters (PyTorch's
initialisations) and run ember's autograd functions (nn.functional)."""

from collections import OrderedDict

import ember
from ember import _ember
from ember.nn import functional as F
from ember.nn import init, utils

__all__ = [
    "BCEWithLogitsLoss", "Conv2d", "CrossEntropyLoss", "GRU", "GRUCell", "L1Loss", "LSTM", "LSTMCell", "NLLLoss",
    "RNN", "RNNBase", "RNNCell", "SmoothL1Loss", "modules", "Dropout", "Embedding", "Flatten", "GELU", "Identity",
    "LayerNorm", "LeakyReLU", "Linear", "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList",
    "Parameter", "ParameterList", "RMSNorm", "ReLU", "Sequential", "SiLU", "Sigmoid", "Softmax", "Tanh",
    "from_spec", "functional", "init", "utils",
]
functional = F


class Parameter(ember.Tensor):
    """A tensor that a Module registers as its parameter: a leaf that requires grad
    (sharing memory with `data`)."""

    def __init__(self, data, requires_grad: bool = True):
        super().__init__(data.detach())
        self.requires_grad_(requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """torch.nn.Module: subclass it, set Parameters and Modules as attributes in
    __init__, and write forward()."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("call super().__init__() before assigning attributes of a Module")
        if name in self._buffers and (value is None or isinstance(value, ember.Tensor)) and \
                not isinstance(value, Parameter):
            self._buffers[name] = value  # a new value for a registered buffer
            object.__setattr__(self, name, value)
            return
        for registry in (self._parameters, self._modules, self._buffers):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        for registry in (self._parameters, self._modules, self._buffers):
            registry.pop(name, None)
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor, persistent: bool = True):
        """A tensor the module keeps that is not a parameter (a mask, running statistics):
        moved by to(), in state_dict() unless persistent=False."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("call super().__init__() before register_buffer")
        if tensor is not None and not isinstance(tensor, ember.Tensor):
            raise TypeError(f"register_buffer: {name} must be a Tensor or None, not {type(tensor).__name__}")
        if name in self._parameters or name in self._modules:
            raise KeyError(f"register_buffer: {name} is already a parameter or a module")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)

    def named_buffers(self, prefix: str = "", recurse: bool = True):
        """(dotted name, buffer) of this module and (recurse) every submodule, depth first."""
        for name, b in self._buffers.items():
            if b is not None:
                yield prefix + name, b
        if recurse:
            for name, m in self._modules.items():
                yield from m.named_buffers(prefix + name + ".")

    def buffers(self, recurse: bool = True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def _state(self, prefix: str = ""):
        """state_dict's entries in PyTorch's order: a module's parameters, its persistent
        buffers, then its children's."""
        for name, p in self._parameters.items():
            if p is not None:
                yield prefix + name, p
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent:
                yield prefix + name, b
        for name, m in self._modules.items():
            yield from m._state(prefix + name + ".")

    def apply(self, fn):
        """Calls fn on every submodule (children first) and then on this module; returns
        this module."""
        for m in self._modules.values():
            m.apply(fn)
        fn(self)
        return self

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """(dotted name, parameter) of this module and (recurse) every submodule, depth
        first; a parameter held under several names (tied weights) once, under its first,
        unless remove_duplicate=False (as PyTorch)."""
        seen = set()
        named = self._named_parameters(prefix) if recurse else \
            ((prefix + name, p) for name, p in self._parameters.items() if p is not None)
        for name, p in named:
            if remove_duplicate:
                if id(p) in seen:
                    continue
                seen.add(id(p))
            yield name, p

    def _named_parameters(self, prefix):
        for name, p in self._parameters.items():
            if p is not None:
                yield prefix + name, p
        for name, m in self._modules.items():
            yield from m._named_parameters(prefix + name + ".")

    def parameters(self, recurse: bool = True):
        """The parameters, as an iterator (as PyTorch's)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_modules(self, prefix: str = ""):
        yield prefix.rstrip("."), self
        for name, m in self._modules.items():
            yield from m.named_modules(prefix + name + ".")

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def children(self):
        yield from self._modules.values()

    def named_children(self):
        yield from self._modules.items()

    def requires_grad_(self, requires_grad: bool = True):
        """Turns gradients on or off for every parameter (freezing a part of a model)."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def float(self):
        return self.to(ember.float32)

    def double(self):
        return self.to(ember.float64)

    def half(self):
        return self.to(ember.float16)

    def bfloat16(self):
        return self.to(ember.bfloat16)

    def state_dict(self):
        """Every parameter and persistent buffer by dotted name (sharing memory with the
        module)."""
        return OrderedDict((name, t.detach()) for name, t in self._state())

    def load_state_dict(self, state_dict, strict: bool = True):
        """Copies each entry into the parameter or persistent buffer of that name, in
        place. Strict: the keys must be exactly the module's; otherwise unknown and missing
        ones are skipped. A shape mismatch is always a ValueError, and nothing is changed
        then."""
        own = dict(self._state())
        missing = sorted(set(own) - set(state_dict))
        unexpected = sorted(set(state_dict) - set(own))
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing keys {missing}, unexpected keys {unexpected}")
        for name in set(own) & set(state_dict):
            if tuple(state_dict[name].shape) != tuple(own[name].shape):
                raise ValueError(f"load_state_dict: {name} has shape {tuple(state_dict[name].shape)} in the state "
                                 f"and {tuple(own[name].shape)} in the module")
        with ember.no_grad():
            for name in set(own) & set(state_dict):
                own[name][...] = state_dict[name].to(own[name].dtype)

    def train(self, mode: bool = True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def to(self, where):
        """Moves (or casts) every parameter in place: the same Parameter objects, as in
        PyTorch, so an optimizer made before still holds them. Buffers move to a device
        (a dtype casts only floating-point ones, as PyTorch)."""
        for p in self.parameters():
            moved = p.detach().to(where)
            if moved.dtype != p.dtype or moved.device != p.device:
                p.data = moved
        for m in self.modules():
            for name, b in list(m._buffers.items()):
                if b is None or (isinstance(where, ember.dtype) and not b.dtype.is_floating_point):
                    continue
                setattr(m, name, b.to(where))
        return self

    def cuda(self, device=None):
        """to(cuda:0), or to the GPU `device` names (an int N: cuda:N)."""
        if device is None or isinstance(device, int):
            device = f"cuda:{device or 0}"
        return self.to(device)

    def cpu(self):
        return self.to("cpu")

    def zero_grad(self, set_to_none: bool = True):
        """Every parameter's gradient dropped (set_to_none, PyTorch 2's default) or set to
        zeros in place."""
        _zero_grads(self.parameters(), set_to_none)

    def extra_repr(self) -> str:
        return ""

    def __repr__(self):
        lines = [f"({name}): " + repr(m).replace("\n", "\n  ") for name, m in self._modules.items()]
        if not lines:
            return f"{type(self).__name__}({self.extra_repr()})"
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


def _zero_grads(parameters, set_to_none):
    for p in parameters:
        if set_to_none:
            p.zero_grad_()
        elif p.grad is not None:
            with ember.no_grad():
                p.grad.zero_()


def _from_core(module, parameters):
    for name, value in parameters.items():
        setattr(module, name, Parameter(value))


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype=ember.float32):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.bias = None
        _from_core(self, _ember._linear_parameters(in_features, out_features, bias, dtype))

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, dtype=ember.float32):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        _from_core(self, _ember._embedding_parameters(num_embeddings, embedding_dim, dtype))

    def forward(self, ids):
        return F.embedding(ids, self.weight)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, bias: bool = True, dtype=ember.float32):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = Parameter(ember.ones(*self.normalized_shape, dtype=dtype))
        self.bias = Parameter(ember.zeros(*self.normalized_shape, dtype=dtype)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, list(self.normalized_shape), self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}"


class RMSNorm(Module):
    """torch.nn.RMSNorm: x / sqrt(mean(x^2) + eps) * weight over the last dimensions."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True, dtype=ember.float32):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = Parameter(ember.ones(*self.normalized_shape, dtype=dtype)) if elementwise_affine else None

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class Conv2d(Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 bias: bool = True, dtype=ember.float32):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.bias = None
        _from_core(self, _ember._conv2d_parameters(in_channels, out_channels, list(self.kernel_size), bias, dtype))

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1):
        super().__init__()
        self.kernel_size, self.stride, self.padding, self.dilation = kernel_size, stride, padding, dilation

    def forward(self, x):
        return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride or self.kernel_size}, padding={self.padding}"


class Dropout(Module):
    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class _Activation(Module):
    def __init__(self, fn):
        super().__init__()
        object.__setattr__(self, "_fn", fn)

    def forward(self, x):
        return self._fn(x)


class ReLU(_Activation):
    def __init__(self):
        super().__init__(F.relu)


class SiLU(_Activation):
    def __init__(self):
        super().__init__(F.silu)


class LeakyReLU(_Activation):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__(lambda x: F.leaky_relu(x, negative_slope))
        self.negative_slope = negative_slope

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}"


class Tanh(_Activation):
    def __init__(self):
        super().__init__(F.tanh)


class Sigmoid(_Activation):
    def __init__(self):
        super().__init__(F.sigmoid)


class GELU(_Activation):
    def __init__(self, approximate: str = "none"):
        super().__init__(lambda x: F.gelu(x, approximate))
        self.approximate = approximate

    def extra_repr(self):
        return f"approximate='{self.approximate}'"


class Softmax(_Activation):
    def __init__(self, dim: int = -1):
        super().__init__(lambda x: F.softmax(x, dim))


class Identity(_Activation):
    def __init__(self):
        super().__init__(lambda x: x)


class Flatten(Module):
    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return x.flatten(self.start_dim, self.end_dim)


class Sequential(Module):
    def __init__(self, *modules):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)


class ModuleList(Module):
    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, m):
        setattr(self, str(len(self._modules)), m)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)


class ParameterList(Module):
    """torch.nn.ParameterList: parameters registered under "0", "1", ..."""

    def __init__(self, values=()):
        super().__init__()
        for p in values:
            self.append(p)

    def append(self, value):
        setattr(self, str(len(self._parameters)), value if isinstance(value, Parameter) else Parameter(value))
        return self

    def __getitem__(self, i):
        return list(self._parameters.values())[i]

    def __iter__(self):
        return iter(self._parameters.values())

    def __len__(self):
        return len(self._parameters)


class ModuleDict(Module):
    """torch.nn.ModuleDict: modules by name, each also an attribute, in insertion order."""

    def __init__(self, modules=None):
        super().__init__()
        for name, m in dict(modules or {}).items():
            self[name] = m

    def __getitem__(self, name):
        return self._modules[name]

    def __setitem__(self, name, m):
        setattr(self, name, m)

    def __delitem__(self, name):
        delattr(self, name)

    def __contains__(self, name):
        return name in self._modules

    def __iter__(self):
        return iter(self._modules)

    def __len__(self):
        return len(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


class _Loss(Module):
    def __init__(self, fn):
        super().__init__()
        object.__setattr__(self, "_fn", fn)

    def forward(self, input, target):
        return self._fn(input, target)


class CrossEntropyLoss(_Loss):
    def __init__(self, ignore_index: int = -100, label_smoothing: float = 0.0):
        super().__init__(lambda x, y: F.cross_entropy(x, y, ignore_index, label_smoothing))


class MSELoss(_Loss):
    def __init__(self):
        super().__init__(F.mse_loss)


class NLLLoss(_Loss):
    """-input[i, target[i]] averaged over the targets not equal to ignore_index."""

    def __init__(self, ignore_index: int = -100):
        super().__init__(lambda x, y: F.nll_loss(x, y, ignore_index))


class L1Loss(_Loss):
    def __init__(self, reduction: str = "mean"):
        super().__init__(lambda x, y: F.l1_loss(x, y, reduction))


class SmoothL1Loss(_Loss):
    def __init__(self, reduction: str = "mean", beta: float = 1.0):
        super().__init__(lambda x, y: F.smooth_l1_loss(x, y, reduction, beta))


class BCEWithLogitsLoss(_Loss):
    def __init__(self):
        super().__init__(F.binary_cross_entropy_with_logits)


class _FromSpec(Module):
    """A model ember's C++ builds from a JSON spec: its forward runs the C++ network, and
    its parameters are the C++ layers' own tensors (named "h1.weight", ...), so an
    optimizer, state_dict() and to() act on them."""

    def __init__(self, spec: str):
        super().__init__()
        object.__setattr__(self, "_net", _ember._model_from_spec(spec))
        for name, p in self._net.named_parameters():
            self._parameters[name] = p

    def forward(self, x):
        self._net.train(self.training)
        return self._net.forward(x)

    def __repr__(self):
        return repr(self._net)


def from_spec(spec: str) -> Module:
    """The model a JSON spec describes (ember's nn/spec.h): a chain {"layers": [{"type":
    "Linear", ...}, ...]} or a network of named layers whose "inputs" name other layers
    (residual "Add", "Concat", "FullyConnected" over several inputs, an "activation" per
    layer). `spec` is the JSON text or a file's path; a mistake raises ValueError naming
    the layer."""
    return _FromSpec(spec)


# The layers in nn/modules/ (they subclass Module above).
from ember.nn import modules  # noqa: E402
from ember.nn.modules import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell  # noqa: E402
