"""Evaluate a part's Recipe, substituting earlier parts' values (error carried forward)."""
from __future__ import annotations

from typing import Any

import numpy as np

from examprep.engine import ops
from examprep.engine.activations import activation_backward, sigmoid_derivative_from_output, tanh_derivative_from_output
from examprep.engine.attention import scaled_masked_softmax
from examprep.engine.norm import layer_norm_from_stats
from examprep.engine.optim import clip_by_norm, sgd_step
from examprep.engine.regression import mse_grad_b, mse_grad_w, mse_loss
from examprep.engine.rnn import gru_blend, gru_candidate, lstm_cell_state, lstm_hidden, rnn_jacobian, rnn_local_derivatives
from examprep.engine.softmax import cross_entropy_from_probs, mean_nll, minus_target, nll
from examprep.problem import Recipe

# Every operation an ECF rule may name (a Recipe's ``op``), in one table: the generic arithmetic of
# engine/ops.py, then each subject's formulas from its own engine module ("solve:<topic>" runs a
# whole solve topic instead).
OPS = {
    "add": ops.add, "subtract": ops.subtract, "multiply": ops.multiply, "scale": ops.scale, "divide": ops.divide,
    "power": ops.power, "product": ops.product, "int-product": ops.int_product, "total": ops.total,
    "difference-times": ops.difference_times, "dot": ops.dot, "matmul": ops.matmul, "matmul-bt": ops.matmul_bt,
    # softmax
    "nll": nll, "mean-nll": mean_nll, "cross-entropy-from-probs": cross_entropy_from_probs, "minus-target": minus_target,
    # activations
    "activation-backward": activation_backward, "sigmoid-derivative-from-output": sigmoid_derivative_from_output,
    "tanh-derivative-from-output": tanh_derivative_from_output,
    # regression, optim
    "mse-loss": mse_loss, "mse-grad-w": mse_grad_w, "mse-grad-b": mse_grad_b, "sgd-step": sgd_step,
    "clip-by-norm": clip_by_norm,
    # rnn
    "gru-candidate": gru_candidate, "gru-blend": gru_blend, "rnn-jacobian": rnn_jacobian,
    "rnn-local-derivatives": rnn_local_derivatives, "lstm-cell-state": lstm_cell_state, "lstm-hidden": lstm_hidden,
    # norm, attention
    "layer-norm-from-stats": layer_norm_from_stats, "scaled-masked-softmax": scaled_masked_softmax,
}


def substitute(value: Any, answers: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            ref = answers[value["$ref"]]
            return ref.tolist() if isinstance(ref, np.ndarray) else ref
        return {k: substitute(v, answers) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, answers) for v in value]
    return value


def evaluate(recipe: Recipe, answers: dict[str, Any]) -> Any:
    """The recipe's value with each {"$ref": id} replaced by ``answers[id]``.

    Raises KeyError when a referenced part has no answer, ExamprepError when the engine rejects
    the substituted values (a student's answer of the wrong shape, say).
    """
    args = substitute(recipe.args, answers)
    if recipe.op.startswith("solve:"):
        from examprep import solve

        out = solve.answer_only(recipe.op[len("solve:"):], args)
        return out[recipe.output] if recipe.output else out
    return OPS[recipe.op](**args)
