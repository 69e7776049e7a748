"""`examprep verify` and the tests: independent torch references of the numpy engine.

Wherever torch has the operation it is used as torch users would use it (torch.nn modules,
torch.nn.functional and autograd); conventions torch lacks (the lecture's GRU blend, ε added to σ)
are written in torch from their papers' formulas, separately from the engine. One module per
subject area, as engine/ and solve/: ``verify/<area>.py``.

``REFERENCES[topic](params)`` takes a solve-contract params dict (defaults as the contract) and
returns {answer name: numpy value}; ``random_params(topic, rng)`` draws a valid params dict;
``verify()`` checks the engine against the references on random instances.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from examprep.verify import (
    activations, attention, bptt, conv, counts, dense, dropout, network, norm, optim, pool, positions, regression, rnn,
    softmax,
)

REFERENCES: dict[str, Callable[[dict], dict]] = {
    "softmax": softmax.ref_softmax, "activation": activations.ref_activation, "cross-entropy": softmax.ref_cross_entropy,
    "dense": dense.ref_dense, "mlp-backprop": dense.ref_mlp_backprop, "linear-regression": regression.ref_linear_regression,
    "conv-output-size": conv.ref_conv_output_size, "receptive-field": conv.ref_receptive_field, "conv2d": conv.ref_conv2d,
    "max-pool": pool.ref_max_pool, "rnn-cell": rnn.ref_rnn_cell, "lstm-cell": rnn.ref_lstm_cell,
    "gru-cell": rnn.ref_gru_cell, "param-count": counts.ref_param_count, "layer-norm": norm.ref_layer_norm,
    "positional-encoding": positions.ref_positional_encoding, "rope": positions.ref_rope,
    "attention": attention.ref_attention, "lora": counts.ref_lora,
    "residual": dense.ref_residual, "residual-stack": dense.ref_residual_stack, "rnn-unroll": rnn.ref_rnn_unroll,
    "vanishing-gradient": rnn.ref_vanishing_gradient,
    "multi-head-shapes": attention.ref_multi_head_shapes, "cross-attention": attention.ref_cross_attention,
    "causal-mask": attention.ref_causal_mask, "rope-score": positions.ref_rope_score,
    "positional-encoding-relative": positions.ref_positional_encoding_relative, "lora-memory": counts.ref_lora_memory,
    "avg-pool": pool.ref_avg_pool, "network-shapes": network.ref_network_shapes, "batch-norm": norm.ref_batch_norm,
    "dropout": dropout.ref_dropout, "mlp-regression": dense.ref_mlp_regression,
    "logistic-regression": regression.ref_logistic_regression, "rnn-bptt": bptt.ref_rnn_bptt,
    "self-attention": attention.ref_self_attention, "optimizer-step": optim.ref_optimizer_step,
}

RANDOM: dict[str, Callable[[np.random.Generator], dict]] = {
    "softmax": softmax.random_softmax, "activation": activations.random_activation,
    "cross-entropy": softmax.random_cross_entropy, "dense": dense.random_dense, "mlp-backprop": dense.random_mlp_backprop,
    "linear-regression": regression.random_linear_regression, "conv-output-size": conv.random_conv_output_size,
    "receptive-field": conv.random_receptive_field, "conv2d": conv.random_conv2d, "max-pool": pool.random_max_pool,
    "rnn-cell": rnn.random_rnn_cell, "lstm-cell": rnn.random_lstm_cell, "gru-cell": rnn.random_gru_cell,
    "param-count": counts.random_param_count, "layer-norm": norm.random_layer_norm,
    "positional-encoding": positions.random_positional_encoding, "rope": positions.random_rope,
    "attention": attention.random_attention, "lora": counts.random_lora,
    "residual": dense.random_residual, "residual-stack": dense.random_residual_stack, "rnn-unroll": rnn.random_rnn_unroll,
    "vanishing-gradient": rnn.random_vanishing_gradient,
    "multi-head-shapes": attention.random_multi_head_shapes, "cross-attention": attention.random_cross_attention,
    "causal-mask": attention.random_causal_mask, "rope-score": positions.random_rope_score,
    "positional-encoding-relative": positions.random_positional_encoding_relative,
    "lora-memory": counts.random_lora_memory,
    "avg-pool": pool.random_avg_pool, "network-shapes": network.random_network_shapes, "batch-norm": norm.random_batch_norm,
    "dropout": dropout.random_dropout, "mlp-regression": dense.random_mlp_regression,
    "logistic-regression": regression.random_logistic_regression, "rnn-bptt": bptt.random_rnn_bptt,
    "self-attention": attention.random_self_attention, "optimizer-step": optim.random_optimizer_step,
}


def random_params(topic: str, rng: np.random.Generator) -> dict:
    """A random valid instance of a topic (sizes small, values of order 1). KeyError for a topic
    without a reference."""
    return RANDOM[topic](rng)


# ---------------------------------------------------------------------------- the check itself

RTOL, ATOL = 1e-9, 1e-11


@dataclass
class TopicCheck:
    topic: str
    instances: int
    max_abs_diff: float
    max_rel_diff: float
    failures: int
    first_failure: dict | None = None     # {"params", "answer", "ours", "torch"} of the first disagreement

    @property
    def passed(self) -> bool:
        return self.failures == 0


def _ragged(value: Any) -> bool:
    """A list of lists of different lengths (network-shapes' output shapes, say)."""
    return isinstance(value, (list, tuple)) and len({np.shape(v) for v in value}) > 1


def _compare(ours: Any, theirs: Any) -> tuple[float, float, bool]:
    if _ragged(ours) or _ragged(theirs):         # integer structures: equal or not
        same = _ragged(ours) and _ragged(theirs) and [list(map(float, np.ravel(v))) for v in ours] == \
            [list(map(float, np.ravel(v))) for v in theirs]
        return (0.0, 0.0, True) if same else (float("inf"), float("inf"), False)
    a = np.asarray(ours, dtype=float)
    b = np.asarray(theirs, dtype=float)
    if a.shape != b.shape:
        return float("inf"), float("inf"), False
    diff = np.abs(a - b)
    abs_d = float(diff.max(initial=0.0))
    rel_d = float((diff / np.maximum(np.abs(b), 1e-300)).max(initial=0.0))
    return abs_d, rel_d, bool(np.all(diff <= ATOL + RTOL * np.abs(b)))


def verify(instances: int = 50, seed: int = 0, topics: list[str] | None = None,
           progress: Callable[[str], None] | None = None) -> list[TopicCheck]:
    """Check ``instances`` random instances per topic; returns one TopicCheck per topic.

    An engine error on a valid instance counts as a disagreement (reported in first_failure).
    """
    from examprep import solve

    rng = np.random.default_rng(seed)
    rows = []
    for topic in topics or sorted(REFERENCES):
        worst_abs = worst_rel = 0.0
        failures, first = 0, None
        for _ in range(instances):
            params = random_params(topic, rng)
            theirs = REFERENCES[topic](params)
            try:
                ours = solve.answer_only(topic, params)
            except Exception as err:  # the engine must answer every valid instance
                failures += 1
                first = first or {"params": params, "error": f"{type(err).__name__}: {err}"}
                continue
            bad = False
            for name, want in theirs.items():
                a, r, ok = _compare(ours.get(name), want)
                worst_abs, worst_rel = max(worst_abs, a), max(worst_rel, r)
                if not ok and first is None:
                    first = {"params": params, "answer": name, "ours": solve.jsonable(ours.get(name)),
                             "torch": solve.jsonable(np.asarray(want))}
                bad |= not ok
            failures += bad
        rows.append(TopicCheck(topic, instances, worst_abs, worst_rel, failures, first))
        if progress:
            progress(topic)
    return rows
