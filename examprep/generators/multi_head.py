"""Multi-head attention by hand: d_k = d_model / h, the shapes through the layer, and the O(n²·d) cost
and memory of the score matrices as the sequence grows.

Level 1: self-attention shapes — d_k, one head's Q, its score matrix, the layer's output.
Level 2: the multiply-adds of QKᵀ for one head and for all heads, and how they grow when the
sequence is k times longer (k², against the projections' k).
Level 3: a batch of long sequences — the number of attention weights, their memory in MiB, and which
part of the layer grows faster with n.
Every answer is an integer or an exact fraction, so every variant is calculator-free.
"""
from __future__ import annotations

from fractions import Fraction

from examprep import solve
from examprep.document import Math, Matrix, Table, Text
from examprep.generators.framework import Draft, Stream, generator, steps_from
from examprep.exact import frac
from examprep.problem import EXACT, Misconception, Part, EcfRule, SolutionStep

ASKED = ("d_k", "score_macs_per_head", "score_macs", "score_entries", "score_mib")
FASTER_CHOICES = ("the attention scores", "the projections", "both alike")


def _shape(pid: str, prompt: str, value: list, mis: list, ecf_rule: EcfRule | None = None) -> Part:
    return Part(pid, prompt + " Answer as [rows, columns].", "vector", value, tolerance=EXACT, points=1, minutes=1,
                shape=(2,), misconceptions=tuple(mis), ecf_rule=ecf_rule)


_ANSWERS = {pid: ("multi-head-shapes", pid) for pid in ("query_shape", "scores_shape", "output_shape")}


@generator("multi-head", title="Multi-head attention: shapes and the O(n²·d) cost",
           syllabus="Transformer: multi-head attention, Q/K/V shapes, quadratic cost", version=1,
           answers=lambda problem: _ANSWERS)
def multi_head(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    if difficulty == 3:
        return _memory(rng)
    n = rng.choice([4, 5, 6, 8, 10, 16])
    d = rng.choice([64, 128, 256, 512])
    h = rng.choice([h for h in (2, 4, 8) if d // h >= 16])
    params = {"n": n, "d_model": d, "num_heads": h}
    known = solve.mistakes("multi-head-shapes", params)
    mh = known.trace()
    steps = solve.attention.multi_head_steps(known.params, mh)
    statement = [Text(f"A self-attention layer with $h = {h}$ heads and $d_{{model}} = {d}$ reads a sequence of n = {n} "
                      f"tokens $X$ ({n}×{d}, one row per token). Head i computes $Q_i = X W_i^Q$, $K_i = X W_i^K$, "
                      r"$V_i = X W_i^V$ and $\mathrm{softmax}(Q_i K_i^\top / \sqrt{d_k})\, V_i$; the heads are concatenated "
                      "and multiplied by $W^O$, as in Vaswani et al. (2017) and torch.nn.MultiheadAttention.")]
    dk_part = Part("d_k", "The size $d_k$ of one head's queries and keys.", "integer", mh.d_k, tolerance=EXACT, points=1,
                   minutes=1, misconceptions=known.of("d_k"), ecf_rule=solve.ecf("multi-head-shapes", "d_k", params, mh, ASKED))
    solution = steps_from(steps.d_k, "d_k")
    conventions = {"d_k": "d_model / h (and d_v = d_k)", "shapes": "rows are tokens"}
    if difficulty == 1:
        parts = [dk_part,
                 _shape("query_shape", "The shape of one head's query matrix $Q_i$.", mh.query_shape,
                        known.of("query_shape")),
                 _shape("scores_shape", r"The shape of one head's score matrix $Q_i K_i^\top$.", mh.scores_shape,
                        known.of("scores_shape")),
                 _shape("output_shape", "The shape of the layer's output (after concatenation and $W^O$).", mh.output_shape,
                        known.of("output_shape"))]
        solution += steps_from(steps.projections, "query_shape") + steps_from(steps.scores, "scores_shape")
        solution += steps_from(steps.output, "output_shape")
        return Draft(title="Shapes through a multi-head attention layer", params=params, statement=statement, parts=parts,
                     solution=solution, conventions=conventions)
    k = rng.choice([2, 4, 10])
    longer = known.at(growth_factor=k)            # the same layer on a sequence k times longer
    long_ = known.trace(n=k * n)
    statement.append(Text("Count multiply-adds (one multiplication and one addition; 1 multiply-add = 2 FLOPs). "
                          f"Then the sequence becomes {k} times longer (n = {k * n})."))
    parts = [
        dk_part,
        Part("score_macs_per_head", r"The multiply-adds to compute one head's scores $Q_i K_i^\top$.", "integer",
             mh.score_macs_per_head, tolerance=EXACT, points=1, minutes=1.5,
             misconceptions=known.of("score_macs_per_head"),
             ecf_rule=solve.ecf("multi-head-shapes", "score_macs_per_head", params, mh, ASKED),
             hint="n × n dot products, each of length d_k."),
        Part("score_macs", "The multiply-adds of the scores of all heads together.", "integer", mh.score_macs,
             tolerance=EXACT, points=1, minutes=1,
             misconceptions=known.of("score_macs"),
             ecf_rule=solve.ecf("multi-head-shapes", "score_macs", params, mh, ASKED)),
        Part("growth", f"By what factor does that cost grow when the sequence is {k} times longer?", "integer",
             longer.trace().score_growth, tolerance=EXACT, points=1, minutes=1, misconceptions=longer.of("score_growth")),
    ]
    solution += steps_from(steps.score_macs_per_head, "score_macs_per_head") + steps_from(steps.score_macs, "score_macs")
    solution.append(SolutionStep(f"Sequence {k} times longer", [
        Math(r"\frac{h (k n)^2 d_k}{h n^2 d_k} = k^2"), Matrix(f"score multiply-adds at n = {k * n}", long_.score_macs),
        Matrix("growth", long_.score_macs // mh.score_macs),
        Text(f"The projections (linear in n) grow only {k}×: {mh.projection_macs} → {long_.projection_macs} multiply-adds.")],
        "growth"))
    conventions["cost"] = "multiply-adds (1 multiply-add = 2 FLOPs)"
    return Draft(title="The quadratic cost of attention", params=params | {"growth_factor": k}, statement=statement,
                 parts=parts, solution=solution, conventions=conventions)


def _memory(rng: Stream) -> Draft:
    d, h = rng.choice([(512, 8), (768, 12), (1024, 16)])
    n = rng.choice([512, 1024, 2048, 4096])
    batch = rng.choice([4, 8, 16, 32])
    nbytes = rng.choice([2, 4])
    dtype = {2: "bfloat16 (2 bytes)", 4: "float32 (4 bytes)"}[nbytes]
    params = {"n": n, "d_model": d, "num_heads": h, "batch": batch, "bytes_per_value": nbytes}
    known = solve.mistakes("multi-head-shapes", params)
    mh = known.trace()
    steps = solve.attention.multi_head_steps(known.params, mh)
    statement = [Text(f"A training batch of {batch} sequences of n = {n} tokens goes through a self-attention layer with "
                      f"$d_{{model}}$ = {d} and h = {h} heads. The attention weights of every head are stored in {dtype} "
                      "for the backward pass. 1 MiB = 2²⁰ bytes."),
                 Table(["batch", "n", "d_model", "heads", "bytes per value"], [[batch, n, d, h, nbytes]])]
    parts = [
        Part("score_entries", "How many attention weights (entries of the score matrices) does the batch store?", "integer",
             mh.score_entries, tolerance=EXACT, points=2, minutes=2,
             misconceptions=known.of("score_entries"),
             ecf_rule=solve.ecf("multi-head-shapes", "score_entries", params, mh, ASKED), hint="batch × heads × n × n."),
        Part("score_mib", "Their memory in MiB.", "number", mh.score_mib, points=1, minutes=1.5,
             exact=frac(Fraction(mh.score_bytes, 2 ** 20)),
             misconceptions=known.of("score_mib"),
             ecf_rule=solve.ecf("multi-head-shapes", "score_mib", params, mh, ASKED)),
        Part("faster",
             "As n grows, which grows faster: the attention scores (cost and memory) or the Q, K, V and output projections?",
             "choice", FASTER_CHOICES[0],
             tolerance=EXACT, points=1, minutes=1, choices=FASTER_CHOICES,   # its options: slips (generators.slips)
             misconceptions=(Misconception("projections", FASTER_CHOICES[1],
                                           "The projections are linear in n ((2n + 2m)·d²); the scores are n²·d."),
                             Misconception("alike", FASTER_CHOICES[2],
                                           "Scores are quadratic in n, projections linear: the scores win for long sequences."))),
    ]
    solution = steps_from(steps.d_k, None) + steps_from(steps.memory, "score_entries")
    solution.append(SolutionStep("In MiB", [Math(rf"\frac{{{mh.score_bytes}}}{{2^{{20}}}}"), Matrix("score_mib", mh.score_mib)],
                                 "score_mib"))
    solution += steps_from((steps.score_macs, steps.projection_macs), "faster")
    solution.append(SolutionStep("Quadratic against linear", [
        Text("The scores and the weighted sum cost 2·B·n²·d_model multiply-adds and store B·h·n² values — quadratic in n; "
             "the projections cost 4·B·n·d_model² — linear in n. Beyond n = 2·d_model attention dominates, which is why "
             "long-context models use FlashAttention, sparse or linear attention."),
        Matrix("grows faster", FASTER_CHOICES[0])], "faster"))
    return Draft(title="Memory and cost of attention on long sequences", params=params, statement=statement, parts=parts,
                 solution=solution, conventions={"memory": "B·h·n² attention weights × bytes per value; 1 MiB = 2²⁰ bytes",
                                                 "cost": "multiply-adds"})
