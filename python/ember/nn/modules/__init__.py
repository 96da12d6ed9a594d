"""torch.nn.modules, file for file: module (Module), linear, sparse, normalization,
conv, pooling, dropout, activation (with MultiheadAttention), flatten, container, loss,
rnn and transformer."""

from ember.nn.modules.activation import GELU, LeakyReLU, MultiheadAttention, ReLU, SiLU, Sigmoid, Softmax, Tanh
from ember.nn.modules.container import ModuleDict, ModuleList, ParameterList, Sequential
from ember.nn.modules.conv import Conv2d
from ember.nn.modules.dropout import Dropout
from ember.nn.modules.flatten import Flatten
from ember.nn.modules.linear import Identity, Linear, NonDynamicallyQuantizableLinear
from ember.nn.modules.loss import BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import LayerNorm, RMSNorm
from ember.nn.modules.pooling import MaxPool2d
from ember.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell
from ember.nn.modules.sparse import Embedding
from ember.nn.modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                                          TransformerEncoder, TransformerEncoderLayer)

__all__ = [
    "BCEWithLogitsLoss", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "GELU", "GRU", "GRUCell",
    "Identity", "L1Loss", "LSTM", "LSTMCell", "LayerNorm", "LeakyReLU", "Linear", "MSELoss", "MaxPool2d", "Module",
    "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss", "ParameterList", "RMSNorm", "RNN", "RNNBase",
    "RNNCell", "ReLU", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Tanh", "Transformer",
    "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
]
