"""Parameter counts by hand: dense, conv and embedding layers; RNN/LSTM/GRU with their gate counts
and PyTorch's two bias vectors against Keras's one; multi-head attention and Transformer layers.

Level 1: a dense (nn.Linear) layer, a 2-D convolution and an embedding table.
Level 2: a recurrent layer (RNN, LSTM or GRU): its gate blocks (LSTM 3 gates + candidate = 4,
GRU 2 gates + candidate = 3), its count in PyTorch (b_ih and b_hh) and in Keras (one bias).
Level 3: a multi-head attention layer and a Transformer encoder or decoder layer (PyTorch's
modules), and whether the count depends on the number of heads.
Every answer is an integer, so every variant is calculator-free.
"""
from __future__ import annotations

from examprep import solve
from examprep.document import Matrix, Table, Text
from examprep.generators.framework import Draft, Stream, generator, steps_from
from examprep.problem import EXACT, Misconception, Part, SolutionStep

HEADS_CHOICES = ("does not depend", "grows with the heads", "shrinks with the heads")
_NAMES = {"rnn": "vanilla RNN (nn.RNN)", "lstm": "LSTM (nn.LSTM)", "gru": "GRU (nn.GRU)"}
_GATES = {"rnn": "one block: h' = tanh(W_ih x + b_ih + W_hh h + b_hh)",
          "lstm": "3 gates (input, forget, output) + the candidate g = 4 blocks",
          "gru": "2 gates (reset, update) + the candidate n = 3 blocks"}


def _counter(params: dict):
    """count(**sizes): param-count's count through the engine, each layer's call once (cached for the problem)."""
    calls = solve.mistakes("param-count", params)
    return calls, lambda layer, **kw: calls.call({"layer": layer, **kw})["count"]


def _of(params: dict, answer: str = "count") -> list:
    """param-count's declared mistakes of ``answer`` for the layer ``params``."""
    return list(solve.mistakes("param-count", params).of(answer))


def _steps(calls, params: dict):
    return solve.counts.param_count_steps(solve.full_params("param-count", params), calls.call(params))


def _part(pid: str, prompt: str, count: int, params: dict, points: float = 1, minutes: float = 1.5,
          hint: str = "") -> Part:
    """A part asking the count of the layer ``params``: its table's mistakes and ECF rule."""
    known = solve.mistakes("param-count", params)
    return Part(pid, prompt, "integer", count, tolerance=EXACT, points=points, minutes=minutes,
                misconceptions=known.of("count"),
                ecf_rule=solve.ecf("param-count", "count", known.params, known.trace(), ()), hint=hint)


def _level1(rng: Stream, calculator_free: bool) -> tuple[list, list, list, dict]:
    i, o = rng.choice([64, 128, 256, 512]), rng.choice([10, 32, 64, 100, 128])
    ci, co, k = rng.choice([1, 3, 16, 32]), rng.choice([16, 32, 64]), rng.choice([3, 5])
    vocab, dim = rng.choice([1000, 5000, 10000, 30000]), rng.choice([64, 128, 256, 300])
    lin = {"layer": "linear", "in_features": i, "out_features": o}
    conv = {"layer": "conv2d", "in_channels": ci, "out_channels": co, "kernel_size": k}
    emb = {"layer": "embedding", "num_embeddings": vocab, "embedding_dim": dim}
    calls, _count = _counter(lin)
    statement = [Text("Count the learnable parameters (weights and biases) of each PyTorch layer."),
                 Table(["layer", "sizes"], [["nn.Linear", f"in_features = {i}, out_features = {o}, with bias"],
                                            ["nn.Conv2d", f"in_channels = {ci}, out_channels = {co}, kernel {k}×{k}, with bias"],
                                            ["nn.Embedding", f"num_embeddings = {vocab}, embedding_dim = {dim}"]])]
    parts = [
        _part("linear", f"The dense layer $y = Wx + b$ ({i} → {o}).", _count(**lin), lin,
              hint="W is out×in, b has one entry per output."),
        _part("conv2d", f"The convolution ({ci} → {co} channels, {k}×{k} kernel).", _count(**conv), conv,
              hint="c_out · (c_in · k_h · k_w) weights + c_out biases; the image size does not matter."),
        _part("embedding", f"The embedding table ({vocab} tokens of dimension {dim}).", _count(**emb), emb, minutes=1),
    ]
    solution = (steps_from(_steps(calls, lin), "linear", "Linear: ")
                + steps_from(_steps(calls, conv), "conv2d", "Conv2d: ")
                + steps_from(_steps(calls, emb), "embedding", "Embedding: "))
    return statement, parts, solution, {"linear": lin, "conv2d": conv, "embedding": emb}


def _level2(rng: Stream, calculator_free: bool) -> tuple[list, list, list, dict]:
    layer = rng.choice(["lstm", "gru", "rnn"] if rng.chance(3, 4) else ["lstm", "gru"])
    n_in, H = rng.choice([10, 16, 32, 50, 64, 100]), rng.choice([16, 20, 32, 64, 128])
    pt = {"layer": layer, "input_size": n_in, "hidden_size": H}
    keras = pt | {"framework": "keras"} | ({"reset_after": False} if layer == "gru" else {})
    calls, _count = _counter(pt)
    g = calls.call(pt)["gates"]
    statement = [Text(f"A single-layer, unidirectional {_NAMES[layer]} reads inputs of size {n_in} and has a hidden state of "
                      f"size {H}. PyTorch gives every gate block two bias vectors, b_ih and b_hh; Keras gives one"
                      + (" (for the GRU: Keras with reset_after=False)." if layer == "gru" else "."))]
    gate_mis = _of(pt, "gates")
    parts = [
        Part("gate_blocks", f"How many weight blocks (gates plus candidate) does the {layer.upper()} stack?", "integer", g,
             tolerance=EXACT, points=1, minutes=1, misconceptions=tuple(gate_mis)),
        _part("count_pytorch", "The number of parameters in PyTorch.", _count(**pt), pt, points=2, minutes=2.5,
              hint="G blocks, each with W_ih (H×I), W_hh (H×H), b_ih and b_hh (H each)."),
        _part("count_keras", "The number of parameters in Keras" + (" (reset_after=False)." if layer == "gru" else "."),
              _count(**keras), keras, minutes=1.5),
    ]
    solution = [SolutionStep("Gate blocks", [Text(_GATES[layer]), Matrix("blocks", g)], "gate_blocks")]
    pt_steps, keras_steps = _steps(calls, pt), _steps(calls, keras)
    solution += steps_from((pt_steps.per_tensor, pt_steps.total), "count_pytorch", "PyTorch: ")
    solution += steps_from((keras_steps.per_tensor, keras_steps.total), "count_keras", "Keras: ")
    return statement, parts, solution, {"pytorch": pt, "keras": keras}


def _level3(rng: Stream, calculator_free: bool) -> tuple[list, list, list, dict]:
    d = rng.choice([64, 128, 256, 512])
    h = rng.choice([h for h in (2, 4, 8) if d % h == 0])
    ff = 4 * d
    kind = rng.choice(["transformer-encoder-layer", "transformer-decoder-layer"])
    mha = {"layer": "multi-head-attention", "d_model": d, "num_heads": h}
    block = {"layer": kind, "d_model": d, "num_heads": h, "dim_feedforward": ff}
    enc_or_dec = "encoder" if kind.endswith("encoder-layer") else "decoder"
    calls, _count = _counter(mha)
    statement = [Text(f"PyTorch's nn.MultiheadAttention(embed_dim = {d}, num_heads = {h}) and "
                      f"nn.Transformer{enc_or_dec.capitalize()}Layer(d_model = {d}, nhead = {h}, dim_feedforward = {ff}), "
                      "all with biases. An encoder layer is self-attention + feed-forward (two linear layers) with a "
                      "layer norm after each; a decoder layer adds a cross-attention sublayer and a third layer norm."),
                 Table(["d_model", "heads", "d_k", "dim_feedforward"], [[d, h, d // h, ff]])]
    block_count = _count(**block)
    heads_choice = HEADS_CHOICES[0]
    parts = [
        _part("mha", "The parameters of the multi-head attention layer.", _count(**mha), mha, points=2, minutes=2,
              hint="W_Q, W_K, W_V, W_O, each d×d with a bias of length d, whatever the number of heads."),
        _part("layer", f"The parameters of the Transformer {enc_or_dec} layer.", block_count, block, points=3,
              minutes=4, hint="Attention sublayer(s) + linear1 (d→d_ff) + linear2 (d_ff→d) + layer norms (2d each)."),
        Part("depends_on_heads",
             "With d_model fixed, how does the attention layer's parameter count depend on the number of heads?",
             "choice", heads_choice, tolerance=EXACT, points=1, minutes=1, choices=HEADS_CHOICES,
             # slips of this question's own options (examprep.generators.slips)
             misconceptions=(Misconception("grows-with-heads", HEADS_CHOICES[1],
                                           "More heads split the same d×d projections into more, smaller pieces (d_k = d/h)."),
                             Misconception("shrinks-with-heads", HEADS_CHOICES[2],
                                           "The per-head blocks shrink but their number grows: the total stays 4d² + 4d."))),
    ]
    other_heads = {"layer": "multi-head-attention", "d_model": d, "num_heads": 1}
    solution = steps_from(_steps(calls, mha), "mha", "Multi-head attention: ")
    solution += steps_from(_steps(calls, block), "layer", f"{enc_or_dec.capitalize()} layer: ")
    solution.append(SolutionStep("The heads only split the projections", [
        Text(f"With one head the count is the same: the {h} heads each use d×d_k = {d}×{d // h} slices of the same matrices."),
        Matrix("count with 1 head", _count(**other_heads)), Matrix(f"count with {h} heads", _count(**mha)),
        Matrix("depends on the heads", heads_choice)], "depends_on_heads"))
    return statement, parts, solution, {"mha": mha, "layer": block}


@generator("param-count", title="Parameter counts and gate counts",
           syllabus="Parameter counts: dense, conv, RNN/LSTM/GRU gates, attention, Transformer layers",
           version=1)
def param_count(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    statement, parts, solution, params = (_level1, _level2, _level3)[difficulty - 1](rng, calculator_free)
    conventions = {"framework": "PyTorch modules: sum(p.numel() for p in module.parameters())",
                   "biases": "PyTorch: b_ih and b_hh per gate block; Keras: one" if difficulty == 2 else "included"}
    if difficulty == 3:
        conventions["layer norms"] = "γ and β per layer norm (PyTorch's post-norm layers)"
    return Draft(title=("Parameters of dense, conv and embedding layers", "Parameters and gate blocks of a recurrent layer",
                        "Parameters of attention and Transformer layers")[difficulty - 1],
                 params=params, statement=statement, parts=parts, solution=solution, conventions=conventions)
