"""torch.nn's recurrent layers: RNN (tanh or relu), LSTM and GRU over any number of
layers, either direction, batch_first or not, batched or not; and their cells. PyTorch's
parameters (weight_ih_l{k}[_reverse], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}; the
gates stacked in its order: LSTM i, f, g, o and GRU r, z, n), its initialisation
(uniform in +-1/sqrt(hidden_size)) and its equations:

    RNN:  h' = act(W_ih x + b_ih + W_hh h + b_hh)
    LSTM: i, f, g, o = sigma, sigma, tanh, sigma of (W_ih x + b_ih + W_hh h + b_hh)
          c' = f c + i g,  h' = o tanh(c')
    GRU:  r, z = sigma(W_ir x + b_ir + W_hr h + b_hr), sigma(... z ...)
          n = tanh(W_in x + b_in + r (W_hn h + b_hn)),  h' = (1 - z) n + z h

Each layer projects the whole input sequence at once (one matrix product), then steps
through time: a step is the product W_hh h + b_hh and, for an LSTM or GRU, one fused
kernel for everything after it (kernels/recurrent.h), forward and backward."""

import math

import ember
from ember import _ember
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell"]

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _linear(x, weight, bias):
    return F.linear(x, weight, bias)


def _rnn_step(mode, x_proj, h, c, w_hh, b_hh):
    """One step: x_proj = W_ih x + b_ih (already computed), h (and c for an LSTM) the
    state; returns the new (h, c). An LSTM's or GRU's gates after the product
    W_hh h + b_hh are one fused kernel each way (kernels/recurrent.h)."""
    hh = _linear(h, w_hh, b_hh)
    if mode == "GRU":
        return _ember.functional._gru_cell(x_proj, hh, h), None
    if mode == "LSTM":
        return _ember.functional._lstm_cell(x_proj, hh, c)
    gates = x_proj + hh
    return (gates.tanh() if mode == "RNN_TANH" else gates.relu()), None


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters and the loop over layers,
    directions and time."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError(f"hidden_size must be a positive integer, got {hidden_size!r}")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError(f"num_layers must be a positive integer, got {num_layers!r}")
        if not 0 <= float(dropout) <= 1:
            raise ValueError(f"dropout should be a number in range [0, 1], got {dropout}")
        if proj_size:
            raise ValueError("proj_size (an LSTM with projections) is not supported")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout, self.bidirectional = bias, batch_first, float(dropout), bidirectional
        self.proj_size = 0
        directions = 2 if bidirectional else 1
        gates = _GATES[mode] * hidden_size
        dtype = dtype or ember.float32
        self._flat_weights_names = []
        for layer in range(num_layers):
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                inputs = input_size if layer == 0 else hidden_size * directions
                shapes = [("weight_ih", (gates, inputs)), ("weight_hh", (gates, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gates,)), ("bias_hh", (gates,))]
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(ember.zeros(*shape, dtype=dtype)))
                    self._flat_weights_names.append(name + suffix)
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self):
        """Nothing to do: PyTorch packs the weights into one buffer for cuDNN; ember's
        layers use them where they are."""

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in self._flat_weights_names[i:i + (4 if self.bias else 2)]]
                for i in range(0, len(self._flat_weights_names), 4 if self.bias else 2)]

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s

    def forward(self, input, hx=None):
        lstm = self.mode == "LSTM"
        batched = input.dim() == 3
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: expected a 2-d (unbatched) or 3-d input, got "
                             f"{input.dim()}-d of shape {tuple(input.shape)}")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: input.size(-1) must be equal to input_size. Expected "
                             f"{self.input_size}, got {input.shape[-1]}")
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        steps, batch = x.shape[0], x.shape[1]
        directions = 2 if self.bidirectional else 1
        state_shape = (self.num_layers * directions, batch, self.hidden_size)
        if hx is None:
            zeros = ember.zeros(*state_shape, dtype=x.dtype, device=x.device)
            h0, c0 = zeros, zeros
        else:
            states = hx if lstm else (hx,)
            if lstm and (not isinstance(hx, tuple) or len(hx) != 2):
                raise ValueError("LSTM: hx must be a tuple (h_0, c_0)")
            states = [s if batched else s.unsqueeze(1) for s in states]
            for s in states:
                if tuple(s.shape) != state_shape:
                    raise ValueError(f"{type(self).__name__}: expected hidden size {state_shape}, got "
                                     f"{tuple(s.shape)}")
            h0, c0 = states[0], states[1] if lstm else None
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                k = layer * directions + direction
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                w_ih, w_hh = getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix)
                b_ih = getattr(self, "bias_ih" + suffix) if self.bias else None
                b_hh = getattr(self, "bias_hh" + suffix) if self.bias else None
                projected = _linear(x, w_ih, b_ih)  # [T, B, gates]: every step's input at once
                h, c = h0[k], c0[k] if lstm else None
                seq = [None] * steps
                order = range(steps - 1, -1, -1) if direction else range(steps)
                for t in order:
                    h, c = _rnn_step(self.mode, projected[t], h, c, w_hh, b_hh)
                    seq[t] = h
                outputs.append(ember.stack(seq) if steps else ember.zeros(0, batch, self.hidden_size))
                h_n.append(h)
                c_n.append(c)
            x = outputs[0] if directions == 1 else ember.cat(outputs, -1)
            if self.dropout and self.training and layer + 1 < self.num_layers:
                x = F.dropout(x, self.dropout, True)
        output = x
        if batched and self.batch_first:
            output = output.transpose(0, 1)
        h_n = ember.stack(h_n)
        c_n = ember.stack(c_n) if lstm else None
        if not batched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
            c_n = c_n.squeeze(1) if lstm else None
        return output, ((h_n, c_n) if lstm else h_n)


class RNN(RNNBase):
    """torch.nn.RNN: h' = tanh or relu of (W_ih x + b_ih + W_hh h + b_hh)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """torch.nn.LSTM (without proj_size); forward returns (output, (h_n, c_n))."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    """torch.nn.GRU."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class _CellBase(Module):
    def __init__(self, mode, input_size, hidden_size, bias, device, dtype):
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.bias = mode, input_size, hidden_size, bias
        gates = _GATES[mode] * hidden_size
        dtype = dtype or ember.float32
        self.weight_ih = Parameter(ember.zeros(gates, input_size, dtype=dtype))
        self.weight_hh = Parameter(ember.zeros(gates, hidden_size, dtype=dtype))
        self.bias_ih = Parameter(ember.zeros(gates, dtype=dtype)) if bias else None
        self.bias_hh = Parameter(ember.zeros(gates, dtype=dtype)) if bias else None
        bound = 1.0 / math.sqrt(hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)
        if device is not None:
            self.to(device)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")

    def _step(self, input, h, c):
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: expected a 1-d or 2-d input, got {input.dim()}-d")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        zeros = ember.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        h = zeros if h is None else (h if batched else h.unsqueeze(0))
        c = zeros if c is None else (c if batched else c.unsqueeze(0))
        h, c = _rnn_step(self.mode, _linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        if not batched:
            h, c = h.squeeze(0), c.squeeze(0) if c is not None else None
        return h, c


class RNNCell(_CellBase):
    """torch.nn.RNNCell: one step of RNN; forward(input, hx=None) -> h'."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, bias,
                         device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        return self._step(input, hx, None)[0]


class LSTMCell(_CellBase):
    """torch.nn.LSTMCell: forward(input, (h, c) or None) -> (h', c')."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        h, c = hx if hx is not None else (None, None)
        return self._step(input, h, c)


class GRUCell(_CellBase):
    """torch.nn.GRUCell: forward(input, hx=None) -> h'."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input, hx=None):
        return self._step(input, hx, None)[0]
