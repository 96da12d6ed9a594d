"""torch.nn.modules.module: Module (subclass it in Python; attributes that are Parameters or
Modules register themselves; register_buffer, apply, state_dict, to, forward hooks)."""

from collections import OrderedDict

import ember
from ember.nn.parameter import Parameter

__all__ = ["Module"]


class Module:
    """torch.nn.Module: subclass it, set Parameters and Modules as attributes in
    __init__, and write forward()."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())

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
        for hook in list(self.__dict__.get("_forward_pre_hooks", {}).values()):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        output = self.forward(*args, **kwargs)
        for hook in list(self.__dict__.get("_forward_hooks", {}).values()):
            changed = hook(self, args, output)
            if changed is not None:
                output = changed
        return output

    def register_forward_pre_hook(self, hook, *, prepend: bool = False):
        """hook(module, args) runs before each forward; a value it returns (a tuple, or
        one value) replaces the positional arguments. Returns a handle whose remove()
        takes it away."""
        return _add_hook(self._forward_pre_hooks, hook, prepend)

    def register_forward_hook(self, hook, *, prepend: bool = False):
        """hook(module, args, output) runs after each forward; a value it returns
        replaces the output. Returns a handle whose remove() takes it away."""
        return _add_hook(self._forward_hooks, hook, prepend)

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


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: remove() takes its hook away."""
    _next_id = 0

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(hooks, hook, prepend):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _zero_grads(parameters, set_to_none):
    for p in parameters:
        if set_to_none:
            p.zero_grad_()
        elif p.grad is not None:
            with ember.no_grad():
                p.grad.zero_()


def _from_core(module, parameters, device=None):
    """The C++ layer's initial parameters (PyTorch's initialisations) as the module's,
    moved to device (a layer's device= argument) when one is given."""
    for name, value in parameters.items():
        setattr(module, name, Parameter(value if device is None else value.to(device)))
