"""torch.nn.modules.activation: the activation layers, and MultiheadAttention, with
PyTorch's parameters (in_proj_weight [3E, E] or q/k/v_proj_weight, in_proj_bias,
out_proj), initialisation and masks:

    attention(q, k, v) = softmax(q k^T / sqrt(d) + mask) v, per head, then out_proj

A float mask is added to the scores; a bool mask (attn_mask, or key_padding_mask over
the keys) marks with True the positions that may not be attended to. Composed from
ember's autograd ops (general masks are not the fused causal kernel's)."""

import math

import ember
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.linear import NonDynamicallyQuantizableLinear
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["GELU", "LeakyReLU", "MultiheadAttention", "ReLU", "SiLU", "Sigmoid", "Softmax", "Tanh"]


class _Activation(Module):
    def __init__(self, fn):
        super().__init__()
        object.__setattr__(self, "_fn", fn)

    def forward(self, x):
        return self._fn(x)


class ReLU(_Activation):
    """torch.nn.ReLU; inplace=True writes the result into the input, as PyTorch."""

    def __init__(self, inplace: bool = False):
        super().__init__(F.relu)
        self.inplace = inplace

    def forward(self, x):
        return x.copy_(F.relu(x)) if self.inplace else F.relu(x)


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



def _additive(mask, dtype, name):
    """A mask as the amount added to the scores: bool True -> -inf, a float as it is."""
    if mask is None:
        return None
    if mask.dtype == ember.bool:
        return ember.zeros(*mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)
    if not mask.dtype.is_floating_point:
        raise ValueError(f"{name}: only bool and floating types of masks are supported, got {mask.dtype}")
    return mask.to(dtype)


class MultiheadAttention(Module):
    """torch.nn.MultiheadAttention(embed_dim, num_heads, dropout, bias, ..., kdim, vdim,
    batch_first). forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False) -> (output, weights or
    None)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if add_bias_kv or add_zero_attn:
            raise ValueError("MultiheadAttention: add_bias_kv and add_zero_attn are not supported")
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim must be divisible by num_heads (got {embed_dim} and {num_heads})")
        dtype = dtype or ember.float32
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(ember.zeros(3 * embed_dim, embed_dim, dtype=dtype))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.q_proj_weight = Parameter(ember.zeros(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(ember.zeros(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(ember.zeros(embed_dim, self.vdim, dtype=dtype))
            self.in_proj_weight = None
        self.in_proj_bias = Parameter(ember.zeros(3 * embed_dim, dtype=dtype)) if bias else None
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        if bias:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if device is not None:
            self.to(device)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = query.dim() == 3
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        length, batch, embed = query.shape
        source = key.shape[0]
        if embed != self.embed_dim:
            raise ValueError(f"was expecting embedding dimension of {self.embed_dim}, but got {embed}")
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: is_causal=True is a hint that needs attn_mask (PyTorch's rule)")
        bias = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)
        if self._qkv_same_embed_dim:
            w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        else:
            w_q, w_k, w_v = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        heads, d = self.num_heads, self.head_dim
        # [T, N, E] -> [N, H, T, d]
        q = F.linear(query, w_q, bias[0]).view(length, batch, heads, d).permute(1, 2, 0, 3)
        k = F.linear(key, w_k, bias[1]).view(source, batch, heads, d).permute(1, 2, 0, 3)
        v = F.linear(value, w_v, bias[2]).view(source, batch, heads, d).permute(1, 2, 0, 3)
        scores = (q / math.sqrt(d)) @ k.transpose(-2, -1)  # [N, H, T, S]
        mask = _additive(attn_mask, scores.dtype, "attn_mask")
        if mask is not None:
            if mask.dim() == 3:  # [N * H, T, S]
                mask = mask.view(batch, heads, length, source)
            scores = scores + mask
        padding = _additive(key_padding_mask, scores.dtype, "key_padding_mask")
        if padding is not None:
            scores = scores + padding.view(batch, 1, 1, source)
        weights = F.softmax(scores, dim=-1)
        if self.dropout and self.training:
            weights = F.dropout(weights, self.dropout, True)
        out = (weights @ v).permute(2, 0, 1, 3).reshape(length, batch, embed)
        out = self.out_proj(out)
        if batched and self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
        if not need_weights:
            return out, None
        weights = weights.mean(dim=1) if average_attn_weights else weights
        return out, (weights if batched else weights.squeeze(0))
