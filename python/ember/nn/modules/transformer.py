"""torch.nn.modules.transformer: TransformerEncoderLayer, TransformerEncoder,
TransformerDecoderLayer, TransformerDecoder and Transformer over MultiheadAttention
(activation.py), with PyTorch's parameters (linear1, linear2, norm1..3, self_attn,
multihead_attn), initialisation, argument order and masks."""

import copy
import math

import ember
from ember.nn import functional as F
from ember.nn import init
from ember.nn.modules.activation import MultiheadAttention
from ember.nn.modules.container import ModuleList
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.linear import Linear
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import LayerNorm

__all__ = ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]


def _activation(activation):
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each added back (post-norm by default,
    pre-norm with norm_first)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        dtype = dtype or ember.float32
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        object.__setattr__(self, "activation", _activation(activation))
        if device is not None:
            self.to(device)

    def _sa_block(self, x, mask, padding):
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                                            need_weights=False)[0])

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff_block(self.norm2(x))
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff_block(x))


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention over the memory, then a feed-forward
    block, each added back."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        dtype = dtype or ember.float32
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1, self.dropout2, self.dropout3 = Dropout(dropout), Dropout(dropout), Dropout(dropout)
        object.__setattr__(self, "activation", _activation(activation))
        if device is not None:
            self.to(device)

    def _sa_block(self, x, mask, padding):
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=padding,
                                            need_weights=False)[0])

    def _mha_block(self, x, memory, mask, padding):
        return self.dropout2(self.multihead_attn(x, memory, memory, attn_mask=mask, key_padding_mask=padding,
                                                 need_weights=False)[0])

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self._ff_block(self.norm3(x))
        x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff_block(x))


class TransformerEncoder(Module):
    """num_layers copies of encoder_layer (each its own weights), then norm if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """num_layers copies of decoder_layer, then norm if given."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """torch.nn.Transformer: an encoder and a decoder of the layers above, each ending
    in a LayerNorm, every weight matrix initialised with xavier_uniform_."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        dtype = dtype or ember.float32
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                                            batch_first, norm_first, bias, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
        if device is not None:
            self.to(device)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The causal mask: -inf above the diagonal, 0 elsewhere."""
        mask = ember.zeros(sz, sz, dtype=dtype or ember.float32)
        return mask.masked_fill(ember.ones(sz, sz, dtype=ember.bool).triu(1), -math.inf).to(device or "cpu")
