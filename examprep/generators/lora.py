"""LoRA by hand: trainable parameters r(d + k) against d·k, and the training memory it saves.

Level 1: one adapted d×k matrix — LoRA's trainable parameters, full fine-tuning's, the fraction.
Level 2: LoRA on W_Q and W_V of every layer of a Transformer (2L matrices of d_model×d_model).
Level 3: the memory saved on gradients and Adam's two moments in float32, and what merging
W = W₀ + BA costs at inference.
All counts are integers; the fraction and the MiB are exact fractions, so every variant is
calculator-free.
"""
from __future__ import annotations

from fractions import Fraction

from examprep import solve
from examprep.document import Math, Matrix, Table, Text
from examprep.generators.framework import Degenerate, Draft, Stream, generator, steps_from
from examprep.exact import frac
from examprep.problem import EXACT, Misconception, Part, SolutionStep

MERGE_CHOICES = ("none", "grows with r", "doubles")
ASKED = ("trainable_params", "full_params", "fraction")



@generator("lora", title="LoRA: trainable parameters and memory saved", syllabus="LoRA factorisation of weight updates",
           version=1)
def lora(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    sizes = [256, 512, 768, 1024] if not calculator_free else [256, 512, 1024]
    if difficulty == 1:
        d, k = rng.choice(sizes), rng.choice(sizes)
        layers, num = 1, 1
    else:
        d = k = rng.choice([512, 768, 1024] if not calculator_free else [512, 1024])
        layers = rng.choice([6, 12, 24])
        num = 2 * layers
    r = rng.choice([4, 8, 16])
    params = {"d": d, "k": k, "r": r, "num_matrices": num}
    known = solve.mistakes("lora", params)
    lo = known.trace()
    if lo.trainable_params >= lo.full_params:
        raise Degenerate("rank too large to save anything")

    # the statement's slips (generators/slips.py): its W_Q and W_V of every layer counted one per layer or as
    # all four projections
    one_per_layer = known.trace(num_matrices=max(num // 2, 1)).trainable_params
    all_four = known.trace(num_matrices=2 * num).trainable_params              # W_Q, W_K, W_V, W_O

    if difficulty == 1:
        statement = [Text(f"A pretrained weight matrix $W_0$ of shape {d}×{k} (d = {d} outputs, k = {k} inputs) is "
                          f"fine-tuned with LoRA of rank r = {r}: $W = W_0 + BA$ with $B$ ({d}×{r}) and $A$ ({r}×{k}) "
                          "trained and $W_0$ frozen. No biases.")]
        what = "the adapted matrix"
    else:
        statement = [Text(f"A Transformer has {layers} layers of width $d_{{model}}$ = {d}. LoRA of rank r = {r} is "
                          f"applied to the query and value projections $W_Q$ and $W_V$ ({d}×{d}) of every layer, as in "
                          "Hu et al. (2021); everything else is frozen. No biases."),
                     Table(["layers", "d_model", "adapted per layer", "rank r"], [[layers, d, "W_Q, W_V", r]])]
        what = f"all {num} adapted matrices together"
    trainable_mis = list(known.of("trainable_params"))
    if num > 1:
        trainable_mis += [Misconception("one-per-layer", one_per_layer, "Two matrices per layer are adapted: W_Q and W_V."),
                          Misconception("all-four", all_four, "Only W_Q and W_V are adapted, not W_K and W_O.")]
    fraction_exact = frac(Fraction(lo.trainable_params, lo.full_params))
    parts = [
        Part("trainable_params", f"The number of trainable LoRA parameters ({what}).", "integer", lo.trainable_params,
             tolerance=EXACT, points=2, minutes=2, misconceptions=tuple(trainable_mis),
             ecf_rule=solve.ecf("lora", "trainable_params", known.params, lo, ASKED),
             hint="Each adapted matrix trains B (d×r) and A (r×k): r(d + k)."),
        Part("full_params", f"The number of parameters full fine-tuning of {what} would train.", "integer", lo.full_params,
             tolerance=EXACT, points=1, minutes=1, misconceptions=known.of("full_params"),
             ecf_rule=solve.ecf("lora", "full_params", known.params, lo, ASKED)),
        Part("fraction", "The fraction of those parameters LoRA trains (trainable / full).", "number", lo.fraction,
             points=1, minutes=1, exact=fraction_exact if calculator_free else None,
             misconceptions=known.of("fraction"), ecf_rule=solve.ecf("lora", "fraction", known.params, lo, ASKED)),
    ]
    steps = solve.counts.lora_steps(known.params, lo)
    solution = (steps_from((steps.per_matrix, steps.trainable_params), "trainable_params")
                + steps_from(steps.full_params, "full_params") + steps_from(steps.fraction, "fraction"))
    if calculator_free:
        solution.append(SolutionStep("Exact fraction",
                                     [Math(rf"\frac{{{lo.trainable_params}}}{{{lo.full_params}}} = {fraction_exact}")],
                                     "fraction"))
    conventions = {"LoRA": "W = W₀ + BA, B (d×r) and A (r×k) trained, W₀ frozen (Hu et al. 2021)", "biases": "none"}
    if difficulty == 3:
        mem_params = params | {"bytes_per_value": 4, "optimizer": "adam"}
        memory = solve.mistakes("lora-memory", mem_params)
        mem = memory.trace()
        asked = ASKED + ("bytes_per_param",)
        statement.append(Text("Training uses Adam in float32 (4 bytes per value): for every trained parameter it keeps the "
                              "gradient and two moment estimates. Frozen weights and activations are needed either way; "
                              "count only gradients and optimizer states. 1 MiB = 2²⁰ bytes."))
        parts.append(Part("bytes_per_param", "Bytes of gradient and optimizer state kept per trained parameter.", "integer",
                          mem.bytes_per_param, tolerance=EXACT, points=1, minutes=1,
                          misconceptions=memory.of("bytes_per_param"),
                          ecf_rule=solve.ecf("lora-memory", "bytes_per_param", memory.params, mem, asked)))
        parts.append(Part("saved_mib", "The memory LoRA saves against full fine-tuning of the same matrices, in MiB.",
                          "number", mem.saved_mib, points=2, minutes=2,
                          exact=frac(Fraction(mem.saved_bytes, 2 ** 20)) if calculator_free else None,
                          misconceptions=memory.of("saved_mib"),
                          ecf_rule=solve.ecf("lora-memory", "saved_mib", memory.params, mem, asked)))
        parts.append(Part("merge_latency", "After training, $BA$ is merged: $W = W_0 + BA$. The extra inference latency is:",
                          "choice", MERGE_CHOICES[0], tolerance=EXACT, points=1, minutes=1, choices=MERGE_CHOICES,
                          misconceptions=(Misconception("unmerged", MERGE_CHOICES[1],     # the choices: SLIPS
                                                        "Merged, BA is part of W: one matrix product as before, no extra cost."),
                                          Misconception("two-products", MERGE_CHOICES[2],
                                                        "Only an unmerged adapter costs an extra product; merged, "
                                                        "there is none."))))
        msteps = solve.counts.lora_memory_steps(memory.params, mem)
        solution += steps_from(msteps.per_param, "bytes_per_param") + steps_from((msteps.memory, msteps.saved), "saved_mib")
        solution.append(SolutionStep("Merging for inference", [
            Text("$W = W_0 + BA$ is one d×k matrix again: the forward pass is the same product as the pretrained model's, "
                 "so merging adds no latency (Hu et al. 2021, §4.1)."), Math(r"h = (W_0 + BA)\,x = W x"),
            Matrix("extra latency", MERGE_CHOICES[0])], "merge_latency"))
        conventions |= {"memory": "gradients + Adam's two moments, float32; frozen weights and activations not counted",
                        "MiB": "2²⁰ bytes"}
        params = mem_params
    return Draft(title="LoRA: trainable parameters" + (" and memory saved" if difficulty == 3 else ""), params=params,
                 statement=statement, parts=parts, solution=solution, conventions=conventions)
