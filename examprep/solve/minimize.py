"""Solve topic of minimisation: minimize (an objective written over named parameters, or a small model's loss
on a given dataset, stepped by torch.optim's updates for T steps or until the update is below a tolerance)."""
from __future__ import annotations

import ast
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from examprep import expr
from examprep import engine
from examprep.engine._core import Trace, number
from examprep.engine.minimize import Objective, expression_objective, minimize, model_objective
from examprep.errors import ParamError
from examprep.solve.contract import Mistake, Param, Refusal, Step, Topic

_MODEL_LOSS = {
    "linear-regression": r"L = \frac{1}{N} \sum_n (w^\top x_n + b - y_n)^2",
    "logistic-regression": r"L = -\frac{1}{N} \sum_n \left[y_n \log \sigma(z_n) + (1 - y_n) \log(1 - \sigma(z_n))\right],"
                           r"\ z_n = w^\top x_n + b",
    "mlp": r"L = \frac{1}{N} \sum_n \tfrac12 \lVert \psi(W_2\, \varphi(W_1 x_n + b_1) + b_2) - y_n \rVert^2",
}
UPDATE = {   # each optimizer's step k, as torch.optim (and the look-ahead form)
    "sgd": r"p_k = p_{k-1} - \eta\, g_k",
    "momentum": r"v_k = \mu v_{k-1} + g_k\ (v_1 = g_1),\ \ p_k = p_{k-1} - \eta\, v_k",
    "nesterov": r"v_k = \mu v_{k-1} + g_k,\ \ p_k = p_{k-1} - \eta\, (g_k + \mu v_k)",
    "look-ahead": r"v_k = \mu v_{k-1} + \eta\, \nabla f(p_{k-1} - \mu v_{k-1}),\ \ p_k = p_{k-1} - v_k",
    "rmsprop": r"s_k = \alpha s_{k-1} + (1 - \alpha) g_k^2,\ \ p_k = p_{k-1} - \eta\, \frac{g_k}{\sqrt{s_k} + \epsilon}",
    "adagrad": r"s_k = s_{k-1} + g_k^2,\ \ p_k = p_{k-1} - \eta\, \frac{g_k}{\sqrt{s_k} + \epsilon}",
    "adam": r"m_k = \beta_1 m_{k-1} + (1 - \beta_1) g_k,\ v_k = \beta_2 v_{k-1} + (1 - \beta_2) g_k^2,\ "
            r"p_k = p_{k-1} - \eta\, \frac{m_k / (1 - \beta_1^k)}{\sqrt{v_k / (1 - \beta_2^k)} + \epsilon}",
    "adamw": r"p \leftarrow p (1 - \eta \lambda),\ \text{then Adam's step}",
}
_STATE = ("velocity", "square_avg", "sum", "exp_avg", "exp_avg_sq")
SHOWN_STEPS = 5           # a long run's worked solution shows its first steps and its last


@lru_cache(maxsize=512)
def _tree(text: str) -> ast.Expression:
    # the safe evaluator's parser: Python's ast.parse (a tree, never evaluated) checked against its whitelist.
    try:
        return expr.parse(text)
    except expr.ExprError as err:
        raise ParamError(f"objective: {err}") from None


def objective_of(p: dict[str, Any]) -> tuple[Objective, np.ndarray]:
    """The objective and the initial flat parameters of a problem (an expression or a model)."""
    given = p["params"]
    if not isinstance(given, dict) or not given:
        raise ParamError("params: expected an object of named initial values, like {\"x1\": -5, \"x2\": -2}")
    if (p["objective"] is None) == (p["model"] is None):
        raise ParamError("objective: give an objective (an expression of the params) or a model with X and y, "
                         "not both")
    if p["model"] is not None:
        if p["X"] is None or p["y"] is None:
            raise ParamError(f"{'X' if p['X'] is None else 'y'}: missing; model {p['model']!r} is fitted to X and y")
        return model_objective(p["model"], p["X"], p["y"], given, loss=p["loss"], reduction=p["reduction"],
                               activation=p["activation"] or "sigmoid",
                               output_activation=p["output_activation"] or "sigmoid")
    for name in ("X", "y", "loss", "activation", "output_activation"):       # reduction: its default is given
        if p[name] is not None:
            raise ParamError(f"{name}: only a model takes it (the objective is the expression)")
    if not isinstance(p["objective"], str):
        raise ParamError(f"objective: expected an expression as text, like \"x1**2 + 2*x2**2\", got {p['objective']!r}")
    names = tuple(given)
    p0 = np.array([number(f"params.{n}", v) for n, v in given.items()])
    return expression_objective(_tree(p["objective"]), names), p0


def compute(p: dict[str, Any]) -> Trace:
    objective, p0 = objective_of(p)
    t = minimize(objective, p0, optimizer=p["optimizer"], lr=p["lr"], momentum=p["momentum"], betas=p["betas"],
                 eps=p["eps"], alpha=p["alpha"], weight_decay=p["weight_decay"], bias_correction=p["bias_correction"],
                 nesterov_form=p["nesterov_form"], steps=p["steps"], tolerance=p["tolerance"])
    t["names"] = objective.names
    t["formulas"] = objective.formulas
    return t


class MinimizeSteps(NamedTuple):
    objective: Step                # f (and, for an expression, each partial derivative)
    steps: list[Step]              # step k: the gradient it used and the parameters after it (a long run: some)
    result: Step                   # how many steps ran (and whether the tolerance was met), f at the end
    trajectory: Step               # each parameter's value after each step (a column of params_per_step)


def minimize_steps(p: dict[str, Any], t: Trace) -> MinimizeSteps:
    names = list(t.names)
    if p["model"] is None:
        grads = ", ".join(rf"\partial f/\partial {n} = {g}" for n, g in zip(names, t.formulas[1:]))
        objective = Step("The objective and its gradient", rf"f = {t.formulas[0]},\quad " + grads,
                         {"params_0": t.params_start, "loss_0": t.losses[0]})
    else:
        objective = Step(f"The model's loss on the data ({p['model']}; parameters {', '.join(names)})",
                         _MODEL_LOSS[p["model"]], {"params_0": t.params_start, "loss_0": t.losses[0]})
    form = "look-ahead" if p["nesterov_form"] == "look-ahead" else p["optimizer"]
    decay = p["weight_decay"] not in (None, 0, 0.0) and p["optimizer"] != "adamw"
    formula = (r"g_k = \nabla f(p_{k-1})" + (r" + \lambda p_{k-1}" if decay else "") + r",\ \ "
               if form != "look-ahead" else "") + UPDATE[form]
    n = int(t.steps_taken)
    shown = list(range(1, min(n, SHOWN_STEPS) + 1)) + ([n] if n > SHOWN_STEPS else [])
    at = " (the gradient at p − μv)" if form == "look-ahead" else ""
    steps = [Step(f"Step {k}{at}" + (f" (steps {SHOWN_STEPS + 1}–{n - 1} alike)" if k == n and n > SHOWN_STEPS + 1
                                     else ""),
                  formula, {f"grad_{k}": t.grads_per_step[k - 1], f"params_{k}": t.params_per_step[k - 1],
                            f"loss_{k}": t.losses[k]}) for k in shown]
    values: dict[str, Any] = {"steps_taken": n, "params_new": t.params_new, "loss": t.losses[-1]}
    if "converged" in t:
        values["converged"] = t.converged
    values.update({s: t[s] for s in _STATE if s in t})
    title = (f"Stopped after {n} steps: the update fell below the tolerance" if t.get("converged") else
             f"After {n} steps" + (" (the tolerance was not met)" if "converged" in t else ""))
    columns = {f"{name} after steps 1…{n}": t.params_per_step[:, i] for i, name in enumerate(names)}
    return MinimizeSteps(objective, steps, Step(title, r"p_T", values),
                         Step("The trajectory", r"p_1, p_2, \dots, p_T", columns))


def _nesterov(p: dict[str, Any]) -> bool:
    return p["optimizer"] == "nesterov" and not p["weight_decay"]


def _at_start(p: dict[str, Any], t: Trace) -> Any:
    """Every step with the gradient at the starting point: the same optimizer, never re-evaluating ∇f."""
    n = int(t.steps_taken)
    return engine.optimizer_step(p["optimizer"], t.params_start, [t.grads_per_step[0]] * n, lr=p["lr"],
                                 momentum=p["momentum"], betas=p["betas"], eps=p["eps"], alpha=p["alpha"],
                                 weight_decay=p["weight_decay"], bias_correction=p["bias_correction"])


def _param_mistakes(answer: str) -> tuple[Mistake, ...]:
    """The mistakes of the parameters, after the last step (params_new) or after each (params_per_step)."""
    return (
        Mistake("gradient-at-start", compute=lambda p, t: _at_start(p, t)[answer],
                when=lambda p: p["nesterov_form"] != "look-ahead" and p["tolerance"] is None and (p["steps"] or 0) > 1,
                why="The gradient changes as the parameters move: evaluate ∇f again at the new parameters before "
                    "each step."),
        Mistake("plain-momentum", optimizer="momentum", nesterov_form="pytorch",
                when=lambda p: p["optimizer"] == "nesterov",
                why="Nesterov steps along g + μv, looking ahead, not along v."),
        _OTHER_FORM,
        Mistake("no-bias-correction", bias_correction=False, when=lambda p: p["optimizer"] in ("adam", "adamw"),
                why="Adam divides m and v by 1 − β₁ᵗ and 1 − β₂ᵗ: without it the first steps are far smaller than lr."),
    )


_OTHER_FORM = Mistake(
    "other-nesterov-form", nesterov_form=lambda p: "pytorch" if p["nesterov_form"] == "look-ahead" else "look-ahead",
    when=_nesterov,
    why="torch's Nesterov keeps the look-ahead point as its parameters; the look-ahead form evaluates ∇f at p − μv and "
        "moves p by v (Sutskever et al. 2013): the two trajectories differ.")

MINIMIZE_MISTAKES = {
    "params_per_step": _param_mistakes("params_per_step"),
    "params_new": _param_mistakes("params_new"),
    "losses": (_OTHER_FORM,),
}


def _conventions(p: dict[str, Any]) -> dict[str, str]:
    out = {"gradient": "recomputed at the current parameters before every step (the look-ahead form: at p − μv)",
           "params": "the trajectory's columns in the order of params (a model: its weights row-major, then biases)"}
    if p["optimizer"] == "nesterov":
        out["nesterov_form"] = ("torch.optim.SGD(nesterov=True): p ← p − η(g + μv)" if p["nesterov_form"] != "look-ahead"
                                else "look-ahead: v ← μv + η∇f(p − μv), p ← p − v (Sutskever et al. 2013)")
    if p["tolerance"] is not None:
        out["tolerance"] = "stop after the first step with ‖p_k − p_(k−1)‖₂ < tolerance"
    return out


MINIMIZE = Topic(
    "minimize", "Minimising an objective or a small model's loss over several optimizer steps (the trajectory)",
    (Param("objective", 'expression of the params: numbers, + - * / ** and exp, log, sqrt, abs, like '
                        '"0.1*x1**2 + 2*x2**2" (or give a model)', None),
     Param("params", 'object of named initial values: {"x1": -5, "x2": -2}; a model\'s weights by name '
                     '(w, b; w1, b1, w2, b2; biases zero when left out)'),
     Param("model", '"linear-regression", "logistic-regression" or "mlp", fitted to X and y', None),
     Param("X", "matrix (N×d) of inputs (a model)", None), Param("y", "targets (N; mlp: N×out) (a model)", None),
     Param("loss", 'linear-regression: "mse" or "half-mse"; mlp: "half-sse" or "mse"', None),
     Param("reduction", 'logistic-regression: "mean" or "sum"', "mean"),
     Param("activation", "mlp's hidden activation (sigmoid)", None),
     Param("output_activation", "mlp's output activation (sigmoid)", None),
     Param("optimizer", '"sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adam" or "adamw"', "sgd"),
     Param("lr", "learning rate"),
     Param("momentum", "μ (momentum, nesterov; 0.9)", None), Param("betas", "[β₁, β₂] (adam, adamw)", None),
     Param("eps", "ε (as optimizer-step)", None), Param("alpha", "α (rmsprop; 0.99)", None),
     Param("weight_decay", "λ (as optimizer-step)", None),
     Param("bias_correction", "bool (adam, adamw)", True),
     Param("nesterov_form", '"pytorch" (torch.optim.SGD) or "look-ahead" (gradient at p − μv)', "pytorch"),
     Param("steps", "T, the number of steps; with tolerance the most (1,000)", None),
     Param("tolerance", "stop once an update's length ‖p_k − p_(k−1)‖₂ is below it", None)),
    ("params_per_step", "params_new", "losses", "grads_per_step", "steps_taken", "converged"),
    compute,
    minimize_steps,
    mistakes=MINIMIZE_MISTAKES,
    conventions=_conventions,
    answer_names=lambda p, t: [n for n in ("params_per_step", "params_new", "losses", "grads_per_step", "steps_taken",
                                           "converged") if n in t],
    refuses=(Refusal("an objective with no derivative (a comparison, min, max, //)",
                     {"objective": "max(x, 0)", "params": {"x": 1}, "lr": 0.1, "steps": 2}),
             Refusal("a parameter the objective does not use",
                     {"objective": "x**2", "params": {"x": 1, "y": 2}, "lr": 0.1, "steps": 2}),
             Refusal("an objective undefined on the way (log of a negative number)",
                     {"objective": "log(x)", "params": {"x": 1}, "lr": 2, "steps": 3})),
)
