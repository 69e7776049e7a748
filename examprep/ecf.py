"""ECF rules: evaluate a part's EcfRule, substituting earlier parts' values (error carried
forward), from the one table of the operations a rule may name; and the check values a key stores
so that grading can tell when a rule no longer computes what it did."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from examprep import solve
from examprep.engine import ops
from examprep.engine.activations import activation_backward, sigmoid_derivative_from_output, tanh_derivative_from_output
from examprep.engine.attention import scaled_masked_softmax
from examprep.engine.groupnorm import group_norm_from_stats
from examprep.engine.network import layer_output_shape
from examprep.engine.norm import batch_norm_from_stats, layer_norm_from_stats, running_update
from examprep.engine.optim import clip_by_norm, sgd_step
from examprep.engine.regression import bce_from_probs, bce_grad_b, bce_grad_w, mse_grad_b, mse_grad_w, mse_loss
from examprep.engine.rnn import gru_blend, gru_candidate, lstm_cell_state, lstm_hidden, rnn_jacobian, rnn_local_derivatives
from examprep.engine.softmax import cross_entropy_from_probs, mean_nll, minus_target, nll
from examprep.problem import EcfRule

# Every operation an ECF rule may name (an EcfRule's ``op``), in one table: the generic arithmetic of
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
    "bce-from-probs": bce_from_probs, "bce-grad-w": bce_grad_w, "bce-grad-b": bce_grad_b,
    "clip-by-norm": clip_by_norm,
    # rnn
    "gru-candidate": gru_candidate, "gru-blend": gru_blend, "rnn-jacobian": rnn_jacobian,
    "rnn-local-derivatives": rnn_local_derivatives, "lstm-cell-state": lstm_cell_state, "lstm-hidden": lstm_hidden,
    # norm, attention, network
    "layer-norm-from-stats": layer_norm_from_stats, "scaled-masked-softmax": scaled_masked_softmax,
    "layer-output-shape": layer_output_shape, "batch-norm-from-stats": batch_norm_from_stats,
    "running-update": running_update, "group-norm-from-stats": group_norm_from_stats,
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


def evaluate(rule: EcfRule, answers: dict[str, Any]) -> Any:
    """The rule's value with each {"$ref": id} replaced by ``answers[id]``.

    Raises KeyError when a referenced part has no answer, ExamprepError when the engine rejects
    the substituted values (a student's answer of the wrong shape, say).
    """
    args = substitute(rule.args, answers)
    if rule.op.startswith("solve:"):
        out = solve.answer_only(rule.op[len("solve:"):], args)
        return out[rule.output] if rule.output else out
    return OPS[rule.op](**args)


# ----------------------------------------------------------------------------- check values
# A key stores, per part with an ECF rule, the rule's value on the key's own answers. Grading
# recomputes it: where today's engine gives another value (relative CHECK_RTOL), carried-forward
# credit for that part would rest on a different rule than the one the key was written with.

CHECK_RTOL = 1e-12
CHECK_DIGITS = 13       # stored to 13 significant digits: within CHECK_RTOL (5e-13 at most), and
                        # free of the last bits that vary with the BLAS library's summation order


def check_values(problems: list[Any]) -> list[dict[str, Any]]:
    """Per problem, {part id: its ECF rule's value on the problem's own expected answers} for every
    part with one (None where the rule gives no value)."""
    out = []
    for problem in problems:
        answers = {p.id: p.expected for p in problem.parts}
        out.append({p.id: check_value(p.ecf_rule, answers) for p in problem.parts if p.ecf_rule is not None})
    return out


def check_value(rule: EcfRule, answers: dict[str, Any]) -> Any:
    """The rule's value as JSON: floats to CHECK_DIGITS significant digits, ±∞ and NaN as the
    strings "inf", "-inf", "nan"; None when the rule fails on these answers."""
    try:
        with np.errstate(all="ignore"):
            value = evaluate(rule, answers)
    except Exception:                       # noqa: BLE001 - "no value" is itself what is stored and compared
        return None
    return _encode(value)


def _encode(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return float(f"{f:.{CHECK_DIGITS}g}") if math.isfinite(f) else str(f)
    return value


def same_check(stored: Any, live: Any) -> bool:
    """Do a stored check value and today's agree: equal structure, equal strings and booleans,
    numbers within CHECK_RTOL relative to the larger of the two or to the largest magnitude in
    the stored value (so round-off beside large entries is no change)."""
    scale = _largest(stored)
    return _same(stored, live, scale)


def _largest(value: Any) -> float:
    if isinstance(value, dict):
        return max((_largest(v) for v in value.values()), default=0.0)
    if isinstance(value, list):
        return max((_largest(v) for v in value), default=0.0)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return abs(float(value))
    return 0.0


def _same(a: Any, b: Any, scale: float) -> bool:
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and \
            all(_same(a[k], b[k], scale) for k in a)
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(_same(x, y, scale) for x, y in zip(a, b))
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, numbers) and isinstance(b, numbers)):
        return type(a) is type(b) and a == b
    return abs(a - b) <= CHECK_RTOL * max(abs(a), abs(b), scale)
