"""Solve topic of normalisation: layer-norm."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from examprep import engine
from examprep.engine._core import Trace
from examprep.solve.contract import Ecf, Mistake, Param, Ref, Refusal, Step, Topic


class LayerNormSteps(NamedTuple):
    mean: Step
    variance: Step
    denominator: Step
    normalise: Step
    affine: Step                   # γ and β


def layer_norm_steps(p: dict[str, Any], t: Trace) -> LayerNormSteps:
    denom = r"\sigma + \varepsilon" if p["eps_placement"] == "added-to-std" else r"\sqrt{\sigma^2 + \varepsilon}"
    var = r"\frac{1}{D}" if p["variance"] == "biased" else r"\frac{1}{D-1}"
    return LayerNormSteps(
        Step("Mean over the features", r"\mu = \frac{1}{D}\sum_i x_i", {"mean": t.mean}),
        Step(f"Variance ({p['variance']})", rf"\sigma^2 = {var}\sum_i (x_i - \mu)^2", {"var": t.var, "std": t.std}),
        Step("Denominator", denom, {"denominator": t.denominator}),
        Step("Normalise", rf"\hat x = \frac{{x - \mu}}{{{denom}}}", {"normalized": t.normalized}),
        Step("Scale and shift", r"y = \gamma \odot \hat x + \beta", {"output": t.output}))


def _norm_axes(p: dict[str, Any]) -> int:
    """How many trailing axes of x layer norm normalises (1 without normalized_shape)."""
    shape = p.get("normalized_shape")
    return 1 if shape is None else len(shape) if isinstance(shape, (list, tuple)) else 1


def _per_row(stat: Any, p: dict[str, Any]) -> Any:
    """A statistic (one per row) shaped to divide the rows of x."""
    k = _norm_axes(p)
    if np.ndim(p["x"]) == k:
        return stat
    return np.asarray(stat).reshape(np.shape(p["x"])[:-k] + (1,) * k)


def _feature_sum(p: dict[str, Any]) -> Any:
    """Σ x over the normalised axes (the mean's numerator)."""
    return np.sum(np.asarray(p["x"], dtype=float), axis=tuple(range(-_norm_axes(p), 0)))


def _affine(v: Any, p: dict[str, Any]) -> Any:
    return v * np.asarray(p["gamma"], dtype=float) + np.asarray(p["beta"], dtype=float)


def _rows(p: dict[str, Any]) -> bool:
    return np.ndim(p["x"]) == 2 and _norm_axes(p) == 1


def _given_affine(p: dict[str, Any]) -> bool:
    return np.ndim(p["gamma"]) > 0 or np.ndim(p["beta"]) > 0


def _batch_norm_axis(p: dict[str, Any]) -> bool:
    return _rows(p) and bool(np.all(np.ptp(np.asarray(p["x"], dtype=float), axis=0) > 0))


def _eps_shows(p: dict[str, Any]) -> bool:
    """An ε large enough that where it goes shows in the output's third significant figure (not 10⁻⁵ beside
    a σ near 1: both placements, and none, give the same output there)."""
    return p["eps"] >= 1e-3


LAYER_NORM_MISTAKES = {
    "mean": (Mistake("sum-not-mean", compute=lambda p, t: _feature_sum(p),
                     why="μ is the mean: divide the sum by D."),
             Mistake("over-tokens", compute=lambda p, t: np.asarray(p["x"], dtype=float).mean(axis=0), when=_rows,
                     why="Layer norm averages over each token's features (along a row), not over the tokens.")),
    "var": (Mistake("unbiased", variance="unbiased",
                    why="Layer norm uses the biased variance, dividing by D (as PyTorch), not D − 1."),
            Mistake("std-not-var", compute=lambda p, t: t.std, why="That is σ; the variance is σ².")),
    "output": (Mistake("inside-sqrt", eps_placement="inside-sqrt", when=_eps_shows,
                       why="That is PyTorch's placement, ε inside the square root."),
               Mistake("added-to-std", eps_placement="added-to-std", when=_eps_shows,
                       why="That is the lecture's placement, ε added to σ."),
               Mistake("no-eps", eps=0.0, when=_eps_shows,
                       why="ε is not negligible here: keep it in the denominator, σ + ε or √(σ² + ε)."),
               Mistake("unbiased", variance="unbiased", why="Use the biased variance (divide by D) for σ."),
               # the variance where the standard deviation belongs, and x where x − μ belongs (no ε in either)
               Mistake("divide-by-variance", compute=lambda p, t: _affine(t.centered / _per_row(t.var, p), p),
                       why="Divide by the standard deviation σ (+ ε), not by σ²."),
               Mistake("not-centred", compute=lambda p, t: _affine(np.asarray(p["x"], dtype=float) / _per_row(t.std, p), p),
                       why="Subtract the mean μ before dividing."),
               Mistake("batch-norm-axis", when=_batch_norm_axis,
                       compute=lambda p, t: _affine(engine.layer_norm(np.asarray(p["x"], dtype=float).T,
                                                                      eps=p["eps"]).normalized.T, p),
                       why="You normalised each feature over the tokens — batch norm's axis. Layer norm normalises each "
                           "token over its features."),
               Mistake("no-affine", compute=lambda p, t: t.normalized, when=_given_affine,
                       why="Apply the learned gain and bias: y = γ ⊙ x̂ + β."),
               Mistake("swapped-affine", gamma=lambda p: p["beta"], beta=lambda p: p["gamma"], when=_given_affine,
                       why="y = γ ⊙ x̂ + β: γ multiplies, β adds.")),
}

LAYER_NORM_ECF = {
    "output": (Ecf("layer-norm-from-stats", lambda p, t: {"x": p["x"], "mean": Ref("mean"), "var": Ref("var"), "eps": p["eps"],
                                                          "eps_placement": p["eps_placement"], "gamma": p["gamma"],
                                                          "beta": p["beta"]} | _shape_arg(p)),),
}


def _shape_arg(p: dict[str, Any]) -> dict[str, Any]:
    """normalized_shape for an ECF rule, only where given (the rules of the last-axis problems stay as they were)."""
    return {} if p.get("normalized_shape") is None else {"normalized_shape": p["normalized_shape"]}


LAYER_NORM = Topic(
    "layer-norm", "Layer normalisation",
    (Param("x", "vector or rows (over the last axis)"), Param("gamma", "number or vector", 1.0),
     Param("beta", "number or vector", 0.0), Param("eps", "number", 1e-5),
     Param("eps_placement", '"added-to-std" (lecture) or "inside-sqrt" (PyTorch)', "added-to-std"),
     Param("variance", '"biased" or "unbiased"', "biased"),
     Param("normalized_shape", "int or list of ints, e.g. [C, H, W]: normalise over x's last len(normalized_shape) "
           "axes, as torch.nn.LayerNorm (optional: the last axis)", None)),
    ("output", "mean", "var"),
    lambda p: engine.layer_norm(p["x"], p["gamma"], p["beta"], eps=p["eps"], eps_placement=p["eps_placement"],
                                variance=p["variance"], normalized_shape=p["normalized_shape"]),
    layer_norm_steps,
    mistakes=LAYER_NORM_MISTAKES,
    ecf=LAYER_NORM_ECF,
    conventions=lambda p: {"eps_placement": {"added-to-std": "(x−μ)/(σ+ε), as the lecture notes",
                                 "inside-sqrt": "(x−μ)/√(σ²+ε), as torch.nn.LayerNorm"}.get(p["eps_placement"], ""),
               "variance": {"biased": "biased: divide by D (PyTorch)",
                            "unbiased": "unbiased: divide by D−1"}.get(p["variance"], ""),
               "eps": str(p["eps"])} | ({} if p["normalized_shape"] is None else
                                        {"axes": f"the last {_norm_axes(p)} axes of x, normalized_shape "
                                                 f"{p['normalized_shape']} (D values each)"}),
    refuses=(Refusal("an unbiased variance over one feature", {"x": [1.0], "variance": "unbiased"}),),
)


# ------------------------------------------------------------------------------------ batch-norm

class BatchNormSteps(NamedTuple):
    statistics: Step               # mean and var: the batch's (training) or the running ones (eval)
    normalise: Step                # x_hat
    affine: Step                   # output
    running: Step                  # running_mean_new, running_var_new
    grad_beta_gamma: Step | None   # with grad_output
    grad_statistics: Step | None   # ∂L/∂σ², ∂L/∂μ
    grad_input: Step | None


def batch_norm_steps(p: dict[str, Any], t: Trace) -> BatchNormSteps:
    axes = "the batch" if np.ndim(p["x"]) == 2 else "the batch and every position"
    keras = p["momentum_convention"] == "keras"
    old, new = (r"\mu", r"1 - \mu") if keras else (r"1 - \mu", r"\mu")
    if p["training"]:
        stats = Step(f"Batch statistics per channel, over {axes} (biased variance: m values, divide by m)"
                     if p["variance"] == "biased" else f"Batch statistics per channel, over {axes} (unbiased variance)",
                     r"\mu_c = \frac{1}{m}\sum x,\ \ \sigma^2_c = \frac{1}{m}\sum (x - \mu_c)^2",
                     {"mean": t.mean, "var": t.var})
        running = Step("Running statistics (momentum " + ("weights the old value, as Keras" if keras else "weights the batch, "
                       "as PyTorch") + "; the variance " + ("unbiased, m/(m−1)·σ²" if p["running_var_update"] == "unbiased"
                                                            else "biased") + ")",
                       rf"r \leftarrow ({old})\, r + ({new})\, \text{{batch}}",
                       {"var_unbiased": t.var_unbiased, "running_mean_new": t.running_mean_new,
                        "running_var_new": t.running_var_new})
    else:
        stats = Step("Evaluation mode: the running statistics normalise", r"\mu_c = r_\mu,\ \ \sigma^2_c = r_{\sigma^2}",
                     {"mean": t.mean, "var": t.var})
        running = Step("Evaluation mode: the running statistics stay as they are", r"r \leftarrow r",
                       {"running_mean_new": t.running_mean_new, "running_var_new": t.running_var_new})
    grads = (None, None, None)
    if "grad_input" in t:
        grads = (Step("Gradients of γ and β (summed over " + axes + ")",
                      r"\frac{\partial L}{\partial \gamma_c} = \sum \delta\, \hat x,\ \ "
                      r"\frac{\partial L}{\partial \beta_c} = \sum \delta",
                      {"grad_gamma": t.grad_gamma, "grad_beta": t.grad_beta}),
                 Step("Gradients of the statistics (μ and σ² as nodes of the graph; the term through σ² in ∂L/∂μ is "
                      "0, as Σ(x − μ) = 0)" if p["training"] else "Gradients of the running statistics (constants for ∂L/∂x)",
                      r"\frac{\partial L}{\partial \sigma^2} = \sum \delta\gamma\,(x - \mu)\cdot"
                      r"\left(-\tfrac{1}{2}\right)(\sigma^2+\varepsilon)^{-3/2},\ \ "
                      r"\frac{\partial L}{\partial \mu} = \sum \frac{-\delta\gamma}{\sqrt{\sigma^2+\varepsilon}}",
                      {"grad_var": t.grad_var, "grad_mean": t.grad_mean}),
                 Step("Input gradient (μ and σ² depend on every x of the batch)" if p["training"]
                      else "Input gradient (the running statistics are constants)",
                      r"\frac{\partial L}{\partial x} = \frac{\gamma}{\sqrt{\sigma^2+\varepsilon}}\Big(\delta - \overline{\delta}"
                      r" - \hat x\, \overline{\delta \hat x}\Big)" if p["training"]
                      else r"\frac{\partial L}{\partial x} = \frac{\gamma}{\sqrt{r_{\sigma^2}+\varepsilon}}\, \delta",
                      {"grad_input": t.grad_input}))
    return BatchNormSteps(
        stats,
        Step("Normalise (ε inside the square root, as PyTorch)", r"\hat x = \frac{x - \mu_c}{\sqrt{\sigma^2_c + \varepsilon}}",
             {"std": t.std, "x_hat": t.x_hat}),
        Step("Scale and shift", r"y = \gamma_c\, \hat x + \beta_c", {"output": t.output}),
        running, *grads)


def _training(p: dict[str, Any]) -> bool:
    return bool(p["training"])


def _two_d(p: dict[str, Any]) -> bool:
    return np.ndim(p["x"]) == 2 and np.shape(p["x"])[1] >= 2


def _bn_affine(v: Any, p: dict[str, Any]) -> Any:
    c = np.shape(p["x"])[1]
    shape = (1, c) + (1,) * (np.ndim(p["x"]) - 2)
    g = np.broadcast_to(np.asarray(p["gamma"], dtype=float), (c,)).reshape(shape)
    b = np.broadcast_to(np.asarray(p["beta"], dtype=float), (c,)).reshape(shape)
    return g * v + b


def _per_example(p: dict[str, Any], t: Trace) -> Any:
    """Layer norm's axis: each example normalised over its channels (ε inside the root, as here)."""
    ln = engine.layer_norm(p["x"], eps=p["eps"], eps_placement="inside-sqrt")
    return _bn_affine(ln.normalized, p)


def _frozen_statistics(p: dict[str, Any], t: Trace) -> Any:
    """∂L/∂x with μ and σ² treated as constants: γ/√(σ² + ε) · δ."""
    c = np.shape(p["x"])[1]
    shape = (1, c) + (1,) * (np.ndim(p["x"]) - 2)
    g = np.broadcast_to(np.asarray(p["gamma"], dtype=float), (c,)).reshape(shape)
    return g / t.std.reshape(shape) * np.asarray(p["grad_output"], dtype=float)


def _momentum_differs(p: dict[str, Any]) -> bool:
    return p["momentum"] != 0.5


def _keras(p: dict[str, Any]) -> bool:
    return p["momentum_convention"] == "keras"


# The momentum read the other framework's way (a Keras problem's read as PyTorch's, with PyTorch's unbiased
# variance update), and a Keras problem answered with PyTorch's own update.
_MOMENTUM_REVERSED = Mistake(
    "momentum-reversed", momentum_convention=lambda p: "pytorch" if _keras(p) else "keras",
    running_var_update=lambda p: "unbiased" if _keras(p) else p["running_var_update"],
    when=lambda p: _training(p) and _momentum_differs(p),
    why="PyTorch's momentum weights the NEW batch value, (1 − m)·old + m·batch; Keras's weights the OLD value, "
        "m·old + (1 − m)·batch.")
_PYTORCH_MOMENTUM = Mistake(
    "pytorch-momentum", momentum=0.1, momentum_convention="pytorch", running_var_update="unbiased",
    when=lambda p: _training(p) and _keras(p),
    why="That is PyTorch's update (momentum 0.1 on the batch, unbiased variance); Keras's momentum weights the old "
        "value.")


def _with_grads(p: dict[str, Any]) -> bool:
    return p["grad_output"] is not None


def _gamma_not_one(p: dict[str, Any]) -> bool:
    return _with_grads(p) and bool(np.any(np.asarray(p["gamma"], dtype=float) != 1))


def _values_per_channel(p: dict[str, Any]) -> int:
    return np.size(p["x"]) // np.shape(p["x"])[1]


# ∂L/∂μ and ∂L/∂σ² (issue 38): the chain rule through x̂ = (x − μ)/√(σ² + ε) with ∂L/∂x̂ = δγ
STATISTICS_GRADIENT_MISTAKES = {
    "grad_mean": (Mistake("without-gamma", gamma=1.0, when=_gamma_not_one,
                          why="∂L/∂x̂ = δ·γ (y = γx̂ + β): carry γ into ∂L/∂μ = Σ −δγ/√(σ² + ε)."),
                  Mistake("sign", compute=lambda p, t: -t.grad_mean, when=_with_grads,
                          why="x̂ = (x − μ)/√(σ² + ε) falls as μ rises: ∂x̂/∂μ = −1/√(σ² + ε), so ∂L/∂μ = Σ −δγ/√(σ² + ε)."),
                  Mistake("mean-not-sum", compute=lambda p, t: t.grad_mean / _values_per_channel(p), when=_with_grads,
                          why="μ feeds every x̂ of its channel: ∂L/∂μ SUMS their contributions (the 1/m belongs to "
                              "∂μ/∂x, not here).")),
    "grad_var": (Mistake("without-gamma", gamma=1.0, when=_gamma_not_one,
                         why="∂L/∂x̂ = δ·γ (y = γx̂ + β): carry γ into ∂L/∂σ²."),
                 Mistake("no-half", compute=lambda p, t: 2 * t.grad_var, when=_with_grads,
                         why="d/dσ² (σ² + ε)^(−1/2) = −½ (σ² + ε)^(−3/2): the ½ is missing."),
                 Mistake("wrt-std", compute=lambda p, t: 2 * t.std * t.grad_var, when=_with_grads,
                         why="That is ∂L/∂σ (σ = √(σ² + ε)) = 2σ·∂L/∂σ²; the question asks for ∂L/∂σ², "
                             "Σ δγ(x − μ)·(−½)(σ² + ε)^(−3/2).")),
}


BATCH_NORM_MISTAKES = {
    "mean": (Mistake("over-channels", compute=lambda p, t: engine.layer_norm(p["x"]).mean, when=_two_d,
                     why="Batch norm averages each channel over the batch (down a column), not each example over its "
                         "channels — that is layer norm's axis."),),
    "var": (Mistake("unbiased", variance="unbiased", when=_training,
                    why="The batch variance that normalises is the biased one: divide by m, not m − 1 (PyTorch, Keras)."),
            Mistake("std-not-var", compute=lambda p, t: np.sqrt(t.var), why="That is σ; the variance is σ².")),
    "output": (Mistake("over-channels", compute=_per_example, when=_two_d,
                       why="You normalised each example over its channels (layer norm). Batch norm normalises each "
                           "channel over the batch."),
               Mistake("unbiased", variance="unbiased", when=_training,
                       why="Normalise with the biased batch variance (divide by m); the unbiased one only updates the "
                           "running variance."),
               Mistake("batch-statistics-in-eval", training=True, when=lambda p: not p["training"],
                       why="In evaluation mode batch norm uses its running statistics, not the batch's."),
               Mistake("running-statistics-in-training", training=False, when=_training,
                       why="In training mode batch norm normalises with the batch's own statistics; the running ones "
                           "are only updated."),
               Mistake("no-affine", compute=lambda p, t: t.x_hat,
                       when=lambda p: bool(np.any(np.asarray(p["gamma"]) != 1) or np.any(np.asarray(p["beta"]) != 0)),
                       why="Apply the learned scale and shift: y = γ x̂ + β.")),
    "running_mean_new": (_MOMENTUM_REVERSED,
                         Mistake("batch-only", compute=lambda p, t: t.mean, when=_training,
                                 why="The running mean moves only part of the way to the batch mean (by the momentum)."),
                         _PYTORCH_MOMENTUM),
    "running_var_new": (Mistake("biased-update", running_var_update="biased", when=_training,
                                why="PyTorch updates the running variance with the UNBIASED batch variance, m/(m − 1)·σ²."),
                        Mistake("unbiased-update", running_var_update="unbiased", when=lambda p: _training(p) and _keras(p),
                                why="Keras updates the moving variance with the biased batch variance (÷ m); the unbiased "
                                    "m/(m − 1)·σ² is PyTorch's."),
                        _MOMENTUM_REVERSED, _PYTORCH_MOMENTUM),
    "grad_input": (Mistake("constant-statistics", compute=_frozen_statistics,
                           when=lambda p: _training(p) and p["grad_output"] is not None,
                           why="In training mode μ and σ² depend on every input of the batch: subtract the mean of δ "
                               "and of δ·x̂ (x̂ times it) before scaling by γ/σ."),),
    "grad_gamma": (Mistake("without-x-hat", compute=lambda p, t: t.grad_beta,
                           when=lambda p: p["grad_output"] is not None,
                           why="∂L/∂γ = Σ δ·x̂: γ multiplies x̂, so its gradient carries x̂."),),
    **STATISTICS_GRADIENT_MISTAKES,
}


def _running_args(p: dict[str, Any], t: Trace, stat: str) -> dict[str, Any]:
    m = np.asarray(p["x"]).size // np.shape(p["x"])[1]
    unbiased = stat == "var" and p["running_var_update"] == "unbiased"
    return {"running": np.asarray(p["running_mean" if stat == "mean" else "running_var"], dtype=float) * np.ones_like(t.mean),
            "batch": Ref(stat), "momentum": p["momentum"] if p["training"] else 0.0,     # eval: nothing moves
            "momentum_convention": p["momentum_convention"] if p["training"] else "pytorch",
            "batch_factor": m / (m - 1) if unbiased else 1.0}


BATCH_NORM_ECF = {
    "output": (Ecf("batch-norm-from-stats", lambda p, t: {"x": np.asarray(p["x"], dtype=float), "mean": Ref("mean"),
                                                          "var": Ref("var"), "eps": p["eps"],
                                                          "gamma": np.asarray(p["gamma"], dtype=float) * np.ones_like(t.mean),
                                                          "beta": np.asarray(p["beta"], dtype=float) * np.ones_like(t.mean)}),),
    "running_mean_new": (Ecf("running-update", lambda p, t: _running_args(p, t, "mean")),),
    "running_var_new": (Ecf("running-update", lambda p, t: _running_args(p, t, "var")),),
}


BATCH_NORM = Topic(
    "batch-norm", "Batch normalisation: training and evaluation, running statistics, backward",
    (Param("x", "N×C, or N×C×H×W (statistics per channel over every other axis)"),
     Param("gamma", "number or vector (C)", 1.0), Param("beta", "number or vector (C)", 0.0),
     Param("eps", "number (inside the square root, as PyTorch)", 1e-5),
     Param("training", "bool: batch statistics (true) or the running ones (false)", True),
     Param("running_mean", "number or vector (C)", 0.0), Param("running_var", "number or vector (C)", 1.0),
     Param("momentum", "number: new = (1 − momentum)·running + momentum·batch", 0.1),
     Param("grad_output", "∂L/∂output, x's shape (optional)", None),
     Param("variance", '"biased" (normalises, as PyTorch) or "unbiased"', "biased"),
     Param("momentum_convention", '"pytorch" (momentum weights the batch) or "keras" (it weights the old value)',
           "pytorch"),
     Param("running_var_update", '"unbiased" (PyTorch) or "biased" (Keras) batch variance', "unbiased")),
    ("output", "mean", "var", "x_hat", "running_mean_new", "running_var_new", "grad_input", "grad_gamma", "grad_beta",
     "grad_mean", "grad_var"),
    lambda p: engine.batch_norm(p["x"], p["gamma"], p["beta"], eps=p["eps"], training=p["training"],
                                running_mean=p["running_mean"], running_var=p["running_var"], momentum=p["momentum"],
                                grad_output=p["grad_output"], variance=p["variance"],
                                momentum_convention=p["momentum_convention"], running_var_update=p["running_var_update"]),
    batch_norm_steps,
    mistakes=BATCH_NORM_MISTAKES,
    ecf=BATCH_NORM_ECF,
    conventions=lambda p: {"axis": "statistics per channel over the batch" + ("" if np.ndim(p["x"]) == 2 else
                                                                              " and every position"),
                           "mode": "training: batch statistics, running ones updated" if p["training"]
                           else "evaluation: running statistics, unchanged",
                           "eps": f"{p['eps']} inside the square root (PyTorch)",
                           "momentum": f"{p['momentum']}: " + ("new = (1 − m)·running + m·batch (PyTorch)"
                                                               if p["momentum_convention"] == "pytorch"
                                                               else "new = m·running + (1 − m)·batch (Keras)")},
    answer_names=lambda p, t: [n for n in ("output", "mean", "var", "x_hat", "running_mean_new", "running_var_new",
                                           "grad_input", "grad_gamma", "grad_beta", "grad_mean", "grad_var") if n in t],
    refuses=(Refusal("training mode with one value per channel (no batch variance), as PyTorch", {"x": [[1.0, 2.0]]}),),
)
