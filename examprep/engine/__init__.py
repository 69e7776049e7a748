"""The numeric engine: pure numpy functions, float64, no I/O, no randomness, no formatting.

One module per subject area (softmax, activations, dense, residual, regression, conv, pool, network, rnn,
bptt, norm, groupnorm, dropout, positions, attention, decoder, counts, optim); ops.py holds only generic arithmetic
for ECF rules.
Each function checks its arguments (raising :class:`examprep.errors.ParamError` or
:class:`~examprep.errors.ShapeError` with a one-line message naming the argument) and returns a
:class:`Trace`: the answer values and the intermediate values a worked solution shows.
"""
from examprep.engine._core import Trace
from examprep.engine.activations import activation, max_derivative
from examprep.engine.attention import attention, masked_softmax, multi_head_shapes, self_attention
from examprep.engine.bptt import rnn_bptt, rnn_bptt_output
from examprep.engine.conv import conv2d, conv_output_size, receptive_field, same_padding
from examprep.engine.counts import lora, lora_memory, param_count, scaling_law, training_time
from examprep.engine.decoder import causal_mask, causal_softmax, cross_attention, teacher_forcing
from examprep.engine.dense import dense, mlp_backprop, mlp_regression
from examprep.engine.dropout import dropout
from examprep.engine.groupnorm import group_norm, instance_norm
from examprep.engine.minimize import minimize
from examprep.engine.network import network_shapes
from examprep.engine.norm import batch_norm, layer_norm
from examprep.engine.optim import optimizer_step
from examprep.engine.pool import avg_pool, max_pool, max_pool_backward
from examprep.engine.positions import positional_encoding, positional_encoding_relative, rope, rope_score
from examprep.engine.regression import linear_regression, logistic_regression
from examprep.engine.residual import residual_block, residual_stack
from examprep.engine.rnn import gru_cell, lstm_cell, rnn_cell, rnn_unroll, vanishing_gradient
from examprep.engine.schedule import lr_schedule
from examprep.engine.softmax import cross_entropy, log_softmax, softmax

__all__ = [
    "Trace", "activation", "attention", "avg_pool", "batch_norm", "causal_mask", "causal_softmax", "conv2d",
    "conv_output_size", "cross_attention", "cross_entropy", "dense", "dropout", "group_norm", "gru_cell",
    "instance_norm", "layer_norm", "linear_regression", "log_softmax", "logistic_regression", "lora", "lora_memory",
    "lr_schedule", "lstm_cell", "masked_softmax", "max_derivative", "max_pool", "max_pool_backward", "minimize",
    "mlp_backprop", "mlp_regression", "multi_head_shapes", "network_shapes", "optimizer_step", "param_count",
    "positional_encoding", "positional_encoding_relative", "receptive_field",
    "residual_block", "residual_stack", "rnn_bptt", "rnn_bptt_output", "rnn_cell", "rnn_unroll", "rope", "rope_score",
    "same_padding",
    "scaling_law", "self_attention", "softmax", "teacher_forcing", "training_time", "vanishing_gradient",
]
