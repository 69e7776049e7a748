"""The numeric engine: pure numpy functions, float64, no I/O, no randomness, no formatting.

Each function checks its arguments (raising :class:`examprep.errors.ParamError` or
:class:`~examprep.errors.ShapeError` with a one-line message naming the argument) and returns a
:class:`Trace`: the answer values and the intermediate values a worked solution shows.
"""
from examprep.engine._core import Trace
from examprep.engine.activations import activation
from examprep.engine.attention import attention, masked_softmax
from examprep.engine.conv import conv2d, conv_output_size, max_pool, receptive_field, same_padding
from examprep.engine.counts import lora, param_count, scaling_law
from examprep.engine.dense import dense, linear_regression, mlp_backprop
from examprep.engine.norm import layer_norm
from examprep.engine.positions import positional_encoding, rope
from examprep.engine.rnn import gru_cell, lstm_cell, rnn_cell
from examprep.engine.softmax import cross_entropy, log_softmax, softmax

__all__ = [
    "Trace", "activation", "attention", "conv2d", "conv_output_size", "cross_entropy", "dense",
    "gru_cell", "layer_norm", "linear_regression", "log_softmax", "lora", "lstm_cell", "masked_softmax",
    "max_pool", "mlp_backprop", "param_count", "positional_encoding", "receptive_field", "rnn_cell",
    "rope", "same_padding", "scaling_law", "softmax",
]


from examprep.engine.backprop import (  # noqa: E402  (issue 4: gradient flow)
    max_pool_backward, residual_block, residual_stack, rnn_unroll, vanishing_gradient,
)

__all__ += ["max_pool_backward", "residual_block", "residual_stack", "rnn_unroll", "vanishing_gradient"]

# Transformer bookkeeping (multi-head shapes and cost, cross-attention, causal mask, teacher forcing,
# RoPE scores, relative positions, LoRA memory, training time): engine/transformer.py
from examprep.engine.transformer import (  # noqa: E402
    causal_mask, causal_softmax, cross_attention, lora_memory, multi_head_shapes, positional_encoding_relative,
    rope_score, teacher_forcing, training_time,
)

__all__ += ["causal_mask", "causal_softmax", "cross_attention", "lora_memory", "multi_head_shapes",
            "positional_encoding_relative", "rope_score", "teacher_forcing", "training_time"]
