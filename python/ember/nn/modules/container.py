"""torch.nn.modules.container: Sequential, ModuleList, ParameterList, ModuleDict."""

from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["ModuleDict", "ModuleList", "ParameterList", "Sequential"]


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
