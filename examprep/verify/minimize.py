"""Torch reference of minimisation: the objective evaluated in torch from the safe evaluator's tree (torch
operations node by node, autograd for the gradient; the engine differentiates with sympy) or the model
as torch modules and losses, stepped by torch.optim's optimizers; Nesterov's look-ahead form, which
torch lacks, written in torch from Sutskever et al. (2013): v ← μv + η∇f(p − μv), p ← p − v."""
from __future__ import annotations

import ast

import numpy as np
import torch
import torch.nn.functional as F

from examprep import expr
from examprep.verify._torch import ACTS, Reference, as_numpy, normal, pick, tensor

_CLASSES = {"sgd": torch.optim.SGD, "momentum": torch.optim.SGD, "nesterov": torch.optim.SGD,
            "rmsprop": torch.optim.RMSprop, "adagrad": torch.optim.Adagrad, "adam": torch.optim.Adam,
            "adamw": torch.optim.AdamW}
_STATE = {"velocity": "momentum_buffer", "square_avg": "square_avg", "sum": "sum", "exp_avg": "exp_avg",
          "exp_avg_sq": "exp_avg_sq"}
_TORCH_FUNCTIONS = {"exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "abs": torch.abs}


def _torch_value(node: ast.AST, env: dict[str, torch.Tensor]) -> torch.Tensor:
    if isinstance(node, ast.Constant):
        return torch.tensor(float(node.value), dtype=torch.float64)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _torch_value(node.operand, env)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a, b = _torch_value(node.left, env), _torch_value(node.right, env)
        ops = {ast.Add: torch.add, ast.Sub: torch.sub, ast.Mult: torch.mul, ast.Div: torch.div, ast.Pow: torch.pow}
        return ops[type(node.op)](a, b)
    if isinstance(node, ast.Call):
        return _TORCH_FUNCTIONS[node.func.id](_torch_value(node.args[0], env))      # type: ignore[attr-defined]
    raise ValueError(ast.unparse(node))


def _loss_fn(p: dict):
    """f(w) on the flat parameter tensor w, in torch."""
    if p.get("model") is None:
        tree = expr.parse(p["objective"])
        names = list(p["params"])
        return lambda w: _torch_value(tree.body, {n: w[i] for i, n in enumerate(names)})
    X = tensor(p["X"])
    y = tensor(p["y"])
    if p["model"] in ("linear-regression", "logistic-regression"):
        X2 = X[:, None] if X.dim() == 1 else X
        d = X2.shape[1]

        def linear(w):
            z = X2 @ w[:d] + w[d]
            if p["model"] == "logistic-regression":
                return F.binary_cross_entropy_with_logits(z, y, reduction=p.get("reduction") or "mean")
            mse = F.mse_loss(z, y)
            return mse / 2 if p.get("loss") == "half-mse" else mse
        return linear
    w1 = np.atleast_2d(np.asarray(p["params"]["w1"], dtype=float))
    w2 = np.atleast_2d(np.asarray(p["params"]["w2"], dtype=float))
    H, n_in, n_out = w1.shape[0], w1.shape[1], w2.shape[0]
    act, out_act = ACTS[p.get("activation") or "sigmoid"], ACTS[p.get("output_activation") or "sigmoid"]
    Y = y.reshape(X.shape[0], -1)

    def mlp(w):
        k = 0
        W1 = w[k:k + H * n_in].reshape(H, n_in)
        k += H * n_in
        b1 = w[k:k + H]
        k += H
        W2 = w[k:k + n_out * H].reshape(n_out, H)
        k += n_out * H
        b2 = w[k:k + n_out]
        o = out_act(act(X @ W1.T + b1) @ W2.T + b2)
        per = ((o - Y) ** 2).mean(dim=1) if p.get("loss") == "mse" else 0.5 * ((o - Y) ** 2).sum(dim=1)
        return per.mean()
    return mlp


def _start(p: dict) -> np.ndarray:
    given = p["params"]
    if p.get("model") is None:
        return np.array([float(v) for v in given.values()])
    names = ("w", "b") if p["model"] != "mlp" else ("w1", "b1", "w2", "b2")
    parts = []
    for n in names:
        if n in given:
            parts.append(np.ravel(np.asarray(given[n], dtype=float)))
        elif n == "b":
            parts.append(np.zeros(1))
        else:
            rows = np.atleast_2d(np.asarray(given["w1" if n == "b1" else "w2"], dtype=float)).shape[0]
            parts.append(np.zeros(rows))
    return np.concatenate(parts)


def ref_minimize(p: dict) -> dict:
    f = _loss_fn(p)
    w = tensor(_start(p), grad=True)
    name = p.get("optimizer") or "sgd"
    lr = p["lr"]
    steps = p.get("steps") or 1000
    tol = p.get("tolerance")
    history, grads, losses = [], [], [float(f(w.detach()))]
    look_ahead = p.get("nesterov_form") == "look-ahead"
    opt = None if look_ahead else _optimizer(p, w, name)
    mu = 0.9 if p.get("momentum") is None else p["momentum"]
    v = torch.zeros_like(w)
    converged = False
    for _ in range(steps):
        before = w.detach().clone()
        if look_ahead:
            ahead = (w.detach() - mu * v).requires_grad_(True)
            (g,) = torch.autograd.grad(f(ahead), ahead)
            v = mu * v + lr * g
            with torch.no_grad():
                w -= v
        else:
            opt.zero_grad()
            f(w).backward()
            g = w.grad.detach().clone()
            opt.step()
        history.append(as_numpy(w).copy())
        grads.append(as_numpy(g).copy())
        losses.append(float(f(w.detach())))
        if tol is not None and float(torch.linalg.vector_norm(w.detach() - before)) < tol:
            converged = True
            break
    out = {"params_per_step": np.array(history), "params_new": history[-1], "losses": np.array(losses),
           "grads_per_step": np.array(grads), "steps_taken": len(history)}
    if tol is not None:
        out["converged"] = converged
    return out


def _optimizer(p: dict, w: torch.Tensor, name: str) -> torch.optim.Optimizer:
    kw: dict = {"lr": p["lr"]}
    for key in ("eps", "weight_decay", "alpha"):
        if p.get(key) is not None:
            kw[key] = p[key]
    if p.get("betas") is not None:
        kw["betas"] = tuple(p["betas"])
    if name in ("momentum", "nesterov"):
        kw["momentum"] = 0.9 if p.get("momentum") is None else p["momentum"]
        kw["nesterov"] = name == "nesterov"
    return _CLASSES[name]([w], **kw)


_OBJECTIVES = (
    ("{a}*x**2 + {b}*y**2", ("x", "y")), ("{a}*x1**2 + {b}*x1*x2 + x2**2", ("x1", "x2")), ("{a}*(x - {b})**2", ("x",)),
    ("exp({a}*x) + {b}*y**2", ("x", "y")), ("log(1 + {a}*w**2) + {b}*w", ("w",)), ("sqrt(1 + {a}*x**2) + {b}*x", ("x",)),
    ("{a}*x**4 / 4 - {b}*x", ("x",)), ("(1 - x)**2 + {a}*(y - x**2)**2", ("x", "y")), ("abs(x - {a}) + {b}*x**2", ("x",)),
)


def random_minimize(rng: np.random.Generator) -> dict:
    """A random valid minimize instance: an expression, or (a third) a small model on a small dataset."""
    ri = lambda lo, hi: int(rng.integers(lo, hi + 1))  # noqa: E731
    name = pick(rng, ["sgd", "momentum", "nesterov", "rmsprop", "adagrad", "adam", "adamw"])
    p: dict = {"optimizer": name, "lr": pick(rng, [0.1, 0.05, 0.01]), "steps": ri(1, 6)}
    if rng.random() < 0.35:
        model = pick(rng, ["linear-regression", "logistic-regression", "mlp"])
        n, d = ri(2, 4), ri(1, 2)
        X = normal(rng, n, d)
        if model == "linear-regression":
            p.update(model=model, X=X, y=normal(rng, n), params={"w": normal(rng, d), "b": normal(rng, 1)[0]},
                     loss=pick(rng, ["mse", "half-mse"]))
        elif model == "logistic-regression":
            p.update(model=model, X=X, y=[float(v) for v in rng.integers(0, 2, n)], params={"w": normal(rng, d)},
                     reduction=pick(rng, ["mean", "sum"]))
        else:
            h, out = ri(1, 3), ri(1, 2)
            p.update(model=model, X=X, y=(rng.random((n, out))).round(3).tolist(),
                     params={"w1": normal(rng, h, d), "b1": normal(rng, h), "w2": normal(rng, out, h)},
                     activation=pick(rng, ["sigmoid", "tanh"]), loss=pick(rng, ["half-sse", "mse"]))
    else:
        text, names = _OBJECTIVES[int(rng.integers(len(_OBJECTIVES)))]
        a, b = pick(rng, [0.1, 0.5, 1, 2]), pick(rng, [0.5, 1, 2, 3])
        p.update(objective=text.format(a=a, b=b), params={n: float(np.round(rng.uniform(-2, 2), 3)) for n in names})
    if name == "nesterov" and rng.random() < 0.5:
        p["nesterov_form"] = "look-ahead"
    elif rng.random() < 0.2:
        p["weight_decay"] = 0.1
    if name in ("momentum", "nesterov") and rng.random() < 0.4:
        p["momentum"] = 0.5
    if name in ("adam", "adamw") and rng.random() < 0.3:
        p["betas"] = [0.8, 0.9]
    if rng.random() < 0.15 and "model" not in p and name in ("sgd", "momentum"):
        p.update(steps=200, tolerance=1e-3, lr=0.05)
    return p


# this area's solve topics: each one's torch reference and random instances (gathered by verify/__init__.py)
TOPICS = {
    "minimize": Reference(ref_minimize, random_minimize),
}
