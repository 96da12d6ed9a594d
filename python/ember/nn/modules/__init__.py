"""torch.nn.modules' layout: the layers that live in their own files here (rnn.py:
the recurrent layers and cells); ember.nn names them all."""

from ember.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell"]
