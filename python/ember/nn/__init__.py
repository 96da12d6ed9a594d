"""torch.nn in ember, laid out as torch's: Parameter (parameter.py), Module and the layers
(modules/: module, linear, sparse, normalization, conv, pooling, dropout, activation,
flatten, container, loss, rnn, transformer), functional, init and utils, and from_spec.
The layers start from the C++ layers' parameters (PyTorch's initialisations) and run
ember's autograd functions (nn.functional)."""

from ember import _ember
from ember.nn import functional as F
from ember.nn import init, utils
from ember.nn.parameter import Parameter
from ember.nn import modules
from ember.nn.modules import *  # noqa: F401,F403 (every layer, as torch.nn names them)
from ember.nn.modules import __all__ as _modules_all
from ember.nn.modules.module import Module

__all__ = sorted(_modules_all + ["Parameter", "from_spec", "functional", "init", "modules", "utils"])
functional = F


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
    """The model a JSON spec describes (ember's nn/network_json.h): a chain {"layers": [{"type":
    "Linear", ...}, ...]} or a network of named layers whose "inputs" name other layers
    (residual "Add", "Concat", "FullyConnected" over several inputs, an "activation" per
    layer). `spec` is the JSON text or a file's path; a mistake raises ValueError naming
    the layer."""
    return _FromSpec(spec)
