"""Minimising an objective over several optimizer steps: an objective written as an expression of named
parameters (differentiated by sympy) or a small model's loss on a given dataset, stepped by torch.optim's
updates (engine.optim), the gradient recomputed at every step; Nesterov's momentum in torch's form or in
the look-ahead form that evaluates the gradient at p − μv."""
from __future__ import annotations

import ast
import math
from functools import lru_cache
from typing import Any, Callable, NamedTuple

import numpy as np

from examprep.engine._core import Trace, choice, integer, number
from examprep.engine.dense import mlp_regression
from examprep.engine.optim import OPTIMIZERS, initial_state, optimizer_settings, optimizer_update
from examprep.engine.regression import linear_regression, logistic_regression
from examprep.errors import ParamError, ShapeError

MAX_STEPS = 100_000
MODELS = ("linear-regression", "logistic-regression", "mlp")
NESTEROV_FORMS = ("pytorch", "look-ahead")


class Objective(NamedTuple):
    """A function of the flat parameter vector: its value, its gradient, and the name of each entry."""

    value: Callable[[np.ndarray], float]
    gradient: Callable[[np.ndarray], np.ndarray]
    names: tuple[str, ...]
    formulas: tuple[str, ...] = ()        # LaTeX of f and of each ∂f/∂name (an expression's), for the steps


# ------------------------------------------------------------------------------ an expression

_FUNCTIONS = ("exp", "log", "sqrt", "abs")


def _to_sympy(node: ast.AST, symbols: dict[str, Any], sp: Any) -> Any:
    """A sympy expression from a node of the safe evaluator's tree (examprep/expr.py's parse: numbers,
    names, + − × ÷ **, and exp, log, sqrt, abs), built node by node: text never reaches sympify."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sp.Integer(node.value) if type(node.value) is int else sp.Rational(repr(node.value))
    if isinstance(node, ast.Name) and node.id in symbols:
        return symbols[node.id]
    if isinstance(node, ast.Name):
        raise ParamError(f"objective: {node.id!r} is no parameter (params gives {', '.join(symbols)})")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _to_sympy(node.operand, symbols, sp)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        a, b = _to_sympy(node.left, symbols, sp), _to_sympy(node.right, symbols, sp)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        return a / b if isinstance(node.op, ast.Div) else a ** b
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS \
            and len(node.args) == 1:
        x = _to_sympy(node.args[0], symbols, sp)
        return {"exp": sp.exp, "log": sp.log, "sqrt": sp.sqrt, "abs": sp.Abs}[node.func.id](x)
    raise ParamError(f"objective: '{ast.unparse(node)}' has no derivative here: an objective is numbers, the "
                     f"parameters, + - * / ** and {', '.join(_FUNCTIONS)}")


@lru_cache(maxsize=512)
def _compiled(text: str, names: tuple[str, ...]) -> tuple[Callable, Callable, tuple[str, ...]]:
    """The value, gradient and LaTeX of a checked tree, keyed by its unparsed text (ast.parse of which only
    builds the same tree again: nothing is evaluated but the nodes _to_sympy accepts)."""
    import sympy as sp          # lazily: symbolic differentiation only (start-up time)

    tree = ast.parse(text, mode="eval")
    symbols = {n: sp.Symbol(n, real=True) for n in names}
    f = _to_sympy(tree.body, symbols, sp)
    grads = [sp.diff(f, symbols[n]) for n in names]
    args = [symbols[n] for n in names]
    # lambdify prints sympy's own tree (built above from checked nodes) as Python and compiles it
    value = sp.lambdify(args, f, modules="math")
    gradient = sp.lambdify(args, grads, modules="math")
    formulas = (sp.latex(f),) + tuple(sp.latex(g) for g in grads)
    return value, gradient, formulas


def expression_objective(tree: ast.Expression, names: tuple[str, ...]) -> Objective:
    """The objective an expression writes over the named parameters (in that order), its gradient by
    sympy (exact, from the tree's numbers as written). ``tree``: the safe evaluator's parse of the text.
    Raises ParamError for a name that is no parameter, a parameter the expression does not use, or a
    construct with no derivative (a comparison, min, //)."""
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} - set(_FUNCTIONS)
    unused = [n for n in names if n not in used]
    if unused:
        raise ParamError(f"params: {unused[0]!r} does not appear in the objective")
    value, gradient, formulas = _compiled(ast.unparse(tree), tuple(names))

    def val(p: np.ndarray) -> float:
        return _evaluated(lambda: float(value(*p.tolist())), p, names)

    def grad(p: np.ndarray) -> np.ndarray:
        return _evaluated(lambda: np.array(gradient(*p.tolist()), dtype=float), p, names)

    return Objective(val, grad, tuple(names), formulas)


def _evaluated(fn: Callable[[], Any], p: np.ndarray, names: tuple[str, ...]) -> Any:
    at = ", ".join(f"{n} = {v:.6g}" for n, v in zip(names, p.tolist()))
    try:
        out = fn()
    except OverflowError:
        raise ParamError(f"lr: the run diverges: the objective overflows at {at}") from None
    except (ValueError, ZeroDivisionError, TypeError) as err:
        raise ParamError(f"objective: undefined at {at} ({err})") from None
    if not np.all(np.isfinite(out)):
        raise ParamError(f"lr: the run diverges: the objective is not finite at {at}")
    return out


# ---------------------------------------------------------------------------------- a model

_MODEL_PARAMS = {"linear-regression": ("w", "b"), "logistic-regression": ("w", "b"), "mlp": ("w1", "b1", "w2", "b2")}


def model_objective(model: str, X, y, params: dict[str, Any], *, loss: str | None = None, reduction: str = "mean",
                    activation: str = "sigmoid", output_activation: str = "sigmoid") -> tuple[Objective, np.ndarray]:
    """A model's loss on the dataset (X, y) as a function of its flat parameters, and their initial values.

    linear-regression  ŷ = X w + b, loss "mse" (mean of squared errors) or "half-mse"   (engine.linear_regression)
    logistic-regression  binary cross-entropy of σ(X w + b), reduction "mean" or "sum"  (engine.logistic_regression)
    mlp                  a = W1 x + b1, h = φ(a), o = ψ(W2 h + b2) per example, loss "half-sse" ½Σ(o − t)² or
                         "mse", averaged over the N examples                             (engine.mlp_regression)
    params: the model's names (w, b or w1, b1, w2, b2; a bias left out is zero), flattened in that order,
    each row-major: X (N, d) and w (d,) (X (N,) with w a number for one feature), or X (N, in), y (N, out)
    or (N,), w1 (H, in), b1 (H,), w2 (out, H), b2 (out,).
    Raises ParamError for a name the model lacks, ShapeError for a shape that does not chain.
    """
    model = choice("model", model, MODELS)
    own = _MODEL_PARAMS[model]
    for name in params:
        if name not in own:
            raise ParamError(f"params: model {model!r} has no parameter {name!r} (it has {', '.join(own)})")
    weights = own[0::2]
    for name in weights:
        if name not in params:
            raise ParamError(f"params: missing {name!r}; model {model!r} needs {', '.join(weights)}")
    Xa = np.asarray(X, dtype=float) if not isinstance(X, np.ndarray) else X
    if model == "mlp":
        Xa = np.atleast_2d(Xa)
        w1 = np.atleast_2d(np.asarray(params["w1"], dtype=float))
        w2 = np.atleast_2d(np.asarray(params["w2"], dtype=float))
        values = {"w1": w1, "b1": np.zeros(w1.shape[0]), "w2": w2, "b2": np.zeros(w2.shape[0])}
    else:
        w = np.asarray(params["w"], dtype=float)
        values = {"w": w, "b": np.zeros(())}
    for name in own[1::2]:
        if name in params:
            values[name] = np.asarray(params[name], dtype=float)
    shapes = [values[n].shape for n in own]
    sizes = [int(np.prod(s)) for s in shapes]
    labels = tuple(n if not s else f"{n}[{', '.join(map(str, i))}]" for n, s in zip(own, shapes) for i in np.ndindex(*s))

    def unflat(p: np.ndarray) -> dict[str, Any]:
        out, k = {}, 0
        for name, shape, size in zip(own, shapes, sizes):
            out[name] = p[k:k + size].reshape(shape) if shape else float(p[k])
            k += size
        return out

    def flat(grads: dict[str, Any]) -> np.ndarray:
        return np.concatenate([np.ravel(np.asarray(grads[n], dtype=float)) for n in own])

    if model == "linear-regression":
        kind = choice("loss", loss or "mse", ("mse", "half-mse"))

        def run(p: np.ndarray) -> tuple[float, np.ndarray]:
            v = unflat(p)
            t = linear_regression(Xa, y, v["w"], v["b"], lr=0.0, loss=kind)
            return t.loss, flat({"w": t.grad_w, "b": t.grad_b})
    elif model == "logistic-regression":
        red = choice("reduction", reduction, ("mean", "sum"))
        if loss is not None:
            raise ParamError("loss: logistic-regression's loss is binary cross-entropy (choose its reduction)")

        def run(p: np.ndarray) -> tuple[float, np.ndarray]:
            v = unflat(p)
            t = logistic_regression(Xa, y, v["w"], v["b"], reduction=red)
            return t.loss, flat({"w": t.grad_w, "b": t.grad_b})
    else:
        kind = choice("loss", loss or "half-sse", ("half-sse", "mse"))
        targets = np.asarray(y, dtype=float)
        targets = targets.reshape(len(targets), -1) if targets.ndim else targets.reshape(1, 1)
        if targets.shape[0] != Xa.shape[0]:
            raise ShapeError(f"y: expected {Xa.shape[0]} targets (one per row of X), got {targets.shape[0]}")

        def run(p: np.ndarray) -> tuple[float, np.ndarray]:
            v = unflat(p)
            total, grad = 0.0, np.zeros_like(p)
            for x, target in zip(Xa, targets):
                t = mlp_regression(x, target, v["w1"], v["b1"], v["w2"], v["b2"], activation=activation,
                                   output_activation=output_activation, loss=kind)
                total += t.loss
                grad += flat({"w1": t.grad_w1, "b1": t.grad_b1, "w2": t.grad_w2, "b2": t.grad_b2})
            return total / len(Xa), grad / len(Xa)

    p0 = flat(values)
    run(p0)                     # the engine's own checks of every shape, once, before the first step
    return Objective(lambda p: run(p)[0], lambda p: run(p)[1], labels), p0


# --------------------------------------------------------------------------------- the steps

def minimize(objective: Objective, params0, *, optimizer: str, lr, momentum=None, betas=None, eps=None, alpha=None,
             weight_decay=None, bias_correction: bool = True, nesterov_form: str = "pytorch", steps=None,
             tolerance=None) -> Trace:
    """Steps of an optimizer on an objective from params0, the gradient recomputed at every step.

    Each step: g = ∇f(p) at the current parameters, then engine.optim's update (torch.optim's SGD, momentum,
    Nesterov, RMSprop, Adagrad, Adam, AdamW; options and defaults as optimizer-step). nesterov_form
    "look-ahead" (Sutskever et al. 2013; CS231n's notes): v ← μ v + η ∇f(p − μ v), p ← p − v, v₀ = 0 — the
    gradient at the look-ahead point; torch's form ("pytorch") keeps the look-ahead point as its parameters.
    steps: the number of steps; with tolerance, the most steps (1,000 when not given): the run stops after
    the first step whose update ‖p_k − p_(k−1)‖₂ is below tolerance.
    Returns params_per_step (T, D), params_new, losses (T + 1: f before the first step and after each),
    grads_per_step (T, D: the gradient each step used), steps_taken, converged (with tolerance) and the
    optimizer's state after the last step.
    Raises ParamError for options the optimizer lacks, bad counts, and a run whose values overflow.
    """
    p = np.array(params0, dtype=float).ravel()
    optimizer = choice("optimizer", optimizer, OPTIMIZERS)
    form = choice("nesterov_form", nesterov_form, NESTEROV_FORMS)
    if form == "look-ahead" and optimizer != "nesterov":
        raise ParamError(f"nesterov_form: optimizer {optimizer!r} is no Nesterov momentum (use 'nesterov')")
    if form == "look-ahead" and weight_decay:
        raise ParamError("weight_decay: the look-ahead form takes none here (torch's form adds λp to the gradient)")
    s = optimizer_settings(optimizer, lr=lr, momentum=momentum, betas=betas, eps=eps, alpha=alpha,
                           weight_decay=weight_decay, bias_correction=bias_correction)
    if steps is None and tolerance is None:
        raise ParamError("steps: missing; give the number of steps (or a tolerance to stop at)")
    T = 1000 if steps is None else integer("steps", steps, 1)
    if T > MAX_STEPS:
        raise ParamError(f"steps: at most {MAX_STEPS:,} steps, got {T:,}")
    tol = None if tolerance is None else number("tolerance", tolerance)
    if tol is not None and tol <= 0:
        raise ParamError(f"tolerance: expected a number > 0, got {tol:g}")
    state: dict[str, Any] = {"velocity": np.zeros_like(p)} if form == "look-ahead" else initial_state(s, p)
    history, grads, losses = [], [], [objective.value(p)]
    converged = False
    for k in range(1, T + 1):
        before = p
        if form == "look-ahead":
            g = objective.gradient(p - s.momentum * state["velocity"])
            v = s.momentum * state["velocity"] + s.lr * g
            p, state = p - v, {"velocity": v}
        else:
            g = objective.gradient(p)
            p, state, _ = optimizer_update(s, p, g, state, k)
        if not np.all(np.isfinite(p)):
            raise ParamError(f"lr: the run diverges: the parameters overflow at step {k}")
        history.append(p.copy())
        grads.append(g)
        losses.append(objective.value(p))
        if tol is not None and math.sqrt(float(np.sum((p - before) ** 2))) < tol:
            converged = True
            break
    out = Trace(params_start=np.array(params0, dtype=float).ravel(), params_per_step=np.array(history), params_new=p,
                losses=np.array(losses),
                grads_per_step=np.array(grads), steps_taken=len(history))
    if tol is not None:
        out["converged"] = converged
    out.update(state)
    return out
