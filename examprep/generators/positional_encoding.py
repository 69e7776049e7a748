"""Sinusoidal positional encodings by hand (Vaswani et al. 2017, §3.5), and RoPE at level 3.

PE(pos, 2i) = sin(pos·ω_i), PE(pos, 2i+1) = cos(pos·ω_i), ω_i = 10000^(−2i/d_model).
Level 1: d_model = 4 — the frequency ω₁ and the encoding of one position.
Level 2: the encodings at p and p + k, their dot product Σ_i cos(k·ω_i), and that it depends on k only.
Level 3: d_model = 8 — the four frequencies, one (sin, cos) pair at a later position, the longest
wavelength, and a rotary (RoPE) rotation of a 2-D query for comparison.
Sines and cosines of whole radians need a calculator: there is no calculator-free variant.
"""
from __future__ import annotations

from examprep import engine, solve
from examprep.engine import ops
from examprep.document import Math, Matrix, Text
from examprep.generators.framework import Draft, Stream, generator, steps_from, jsonable
from examprep.problem import EXACT, Misconception, Part, SolutionStep

DEPENDS_CHOICES = ("only the offset k", "the position p and the offset k", "only the position p")


@generator("positional-encoding", title="Sinusoidal positional encoding",
           syllabus="Transformer: positional encodings (sinusoidal, RoPE)",
           version=1, calculator_free=False)
def positional_encoding(rng: Stream, difficulty: int, calculator_free: bool) -> Draft:
    conventions = {"layout": "sin at even indices 2i, cos at odd 2i + 1 (Vaswani et al. 2017)", "angles": "radians",
                   "indices": "0-based"}
    intro = (r"Sinusoidal positional encoding: $PE_{(pos, 2i)} = \sin(pos \cdot \omega_i)$, "
             r"$PE_{(pos, 2i+1)} = \cos(pos \cdot \omega_i)$ with $\omega_i = 10000^{-2i/d_{model}}$ (angles in radians, "
             "indices from 0).")
    if difficulty == 2:
        return _relative(rng, intro, conventions)
    d = 4 if difficulty == 1 else 8
    pos = rng.integer(1, 9) if difficulty == 1 else rng.integer(20, 90)
    params = {"position": pos, "d_model": d, "base": 10000}
    known = solve.mistakes("positional-encoding", params)
    pe = known.trace()
    steps = solve.positions.positional_encoding_steps(known.params, pe)
    statement = [Text(intro + f" Here $d_{{model}} = {d}$ and pos = {pos}.")]
    if difficulty == 1:
        parts = [
            Part("omega_1", r"The frequency $\omega_1$.", "number", float(pe.frequencies[1]), points=1, minutes=1,
                 misconceptions=known.of("frequencies", lambda v: float(v[1]))),
            Part("encoding", f"The encoding PE({pos}) (all {d} entries).", "vector", jsonable(pe.encoding), shape=(d,), points=3,
                 minutes=3, misconceptions=known.of("encoding", jsonable),
                 ecf_rule=solve.ecf("positional-encoding", "encoding", known.params, pe, ["encoding"])),
        ]
        solution = steps_from(steps.frequencies, "omega_1")
        solution.append(SolutionStep("The second pair's frequency", [Math(rf"\omega_1 = 10000^{{-2/{d}}}"),
                                                                      Matrix("ω₁", float(pe.frequencies[1]))], "omega_1"))
        solution += steps_from((steps.angles, steps.encoding), "encoding")
        return Draft(title="Sinusoidal positional encoding of one position", params=params, statement=statement, parts=parts,
                     solution=solution, conventions=conventions)
    i = rng.integer(1, 2)
    pair = pe.encoding[2 * i: 2 * i + 2]
    relative = solve.mistakes("positional-encoding-relative", {"position": pos, "offset": 0, "d_model": d})
    rel = relative.trace()
    slowest = relative.of("wavelengths", lambda v: float(v[-1]))
    x = rng.ints(-2, 2, (2,), nonzero=True)
    m = rng.integer(1, 3)
    rp = {"x": jsonable(x), "position": m, "style": "interleaved"}
    rotated = solve.mistakes("rope", rp)
    rope_trace = rotated.trace()
    rope_out = rope_trace.output
    added = ops.add(engine.positional_encoding(m, 2).encoding, x)        # the statement's slip: added, not rotated
    statement.append(Text("Then compare with rotary embeddings: RoPE rotates a 2-D query q at position m by the angle m·θ₀ "
                          r"(θ₀ = 1 rad): $(a, b) \mapsto (a \cos m - b \sin m,\ a \sin m + b \cos m)$;" + f" here m = {m}."))
    statement.append(Matrix("q", jsonable(x)))
    parts = [
        Part("frequencies", r"The frequencies $\omega_0$, $\omega_1$, $\omega_2$, $\omega_3$.", "vector",
             jsonable(pe.frequencies), shape=(4,), points=1, minutes=1.5,
             misconceptions=known.of("frequencies", jsonable, skip=("dimension-index",))),
        Part("pair", f"The entries PE({pos}, {2 * i}) and PE({pos}, {2 * i + 1}).", "vector", jsonable(pair), shape=(2,),
             points=2, minutes=2,
             misconceptions=(known.get("encoding", "swapped-sin-cos", lambda v: jsonable(v[2 * i: 2 * i + 2])),
                             # the statement's pair i read as pair 0: a slip (generators/slips.py)
                             Misconception("pair-zero-frequency", jsonable(pe.encoding[:2]),
                                                      f"Dimensions {2 * i} and {2 * i + 1} belong to pair i = {i}, "
                                                      f"with ω_{i}."))),
        Part("longest_wavelength", "The longest wavelength $2π/\\omega_i$ among the pairs (in positions).", "number",
             float(rel.wavelengths[-1]), points=1, minutes=1,
             misconceptions=slowest + (Misconception("shortest", float(rel.wavelengths[0]),       # SLIPS
                                                     "That is the fastest pair (ω₀ = 1): 2π."),)),
        Part("rope", "The rotated query RoPE(q, m).", "vector", jsonable(rope_out), shape=(2,), points=2, minutes=2,
             misconceptions=(rotated.get("output", "clockwise", jsonable),
                             Misconception("added-not-rotated", jsonable(added),
                                           "Sinusoidal encodings are added to the embedding; RoPE rotates q instead.")),
             ecf_rule=solve.ecf("rope", "output", rp, rope_trace, ["output"])),
    ]
    solution = steps_from(steps.frequencies, "frequencies") + steps_from((steps.angles, steps.encoding), "pair")
    solution.append(SolutionStep(f"Pair {i}", [Math(rf"PE_{{({pos}, {2 * i})}} = \sin({pos}\,\omega_{i}),\ "
                                                    rf"PE_{{({pos}, {2 * i + 1})}} = \cos({pos}\,\omega_{i})"),
                                               Matrix("pair", jsonable(pair))], "pair"))
    solution += steps_from(solve.positions.relative_steps(relative.params, rel).frequencies, "longest_wavelength")
    solution.append(SolutionStep("The slowest pair has the longest wavelength", [
        Math(rf"λ_{{{d // 2 - 1}}} = 2π \cdot 10000^{{{d - 2}/{d}}}"), Matrix("longest wavelength", float(rel.wavelengths[-1]))],
        "longest_wavelength"))
    solution += steps_from(solve.positions.rope_steps(rotated.params, rope_trace), "rope", "RoPE: ")
    solution.append(SolutionStep("Added against rotated", [
        Text("The sinusoidal code is added to the token embedding once, at the input; RoPE rotates every query and key "
             "inside attention, so their dot product sees only the relative position.")], None))
    return Draft(title="Positional encodings: frequencies, wavelengths and RoPE", params=params | {"pair": i, "rope": rp},
                 statement=statement, parts=parts, solution=solution, conventions=conventions)


def _relative(rng: Stream, intro: str, conventions: dict) -> Draft:
    d = 4
    pos, k = rng.integer(1, 6), rng.integer(1, 4)
    params = {"position": pos, "offset": k, "d_model": d}
    known = solve.mistakes("positional-encoding-relative", params)
    rel = known.trace()
    given = {"position": pos, "d_model": d}                 # the ECF rules name the parameters given (base: its default)
    encodings = solve.mistakes("positional-encoding", given)
    at_p, at_pk = encodings.trace(), encodings.trace(position=pos + k)
    statement = [Text(intro + f" Here $d_{{model}} = {d}$; compare the positions p = {pos} and p + k = {pos + k}.")]
    parts = [
        Part("encoding", f"PE({pos}).", "vector", jsonable(at_p.encoding), shape=(d,), points=2, minutes=2,
             misconceptions=encodings.of("encoding", jsonable),
             ecf_rule=solve.ecf("positional-encoding", "encoding", given, at_p, ["encoding"])),
        Part("shifted", f"PE({pos + k}).", "vector", jsonable(at_pk.encoding), shape=(d,), points=2, minutes=2,
             misconceptions=encodings.at(position=pos + k).of("encoding", jsonable),
             ecf_rule=solve.ecf("positional-encoding", "encoding", given | {"position": pos + k}, at_pk, ["encoding"])),
        Part("dot", f"The dot product PE({pos}) · PE({pos + k}).", "number", rel.dot, points=2, minutes=1.5,
             misconceptions=known.of("dot"),
             ecf_rule=solve.ecf("positional-encoding-relative", "dot", known.params, rel, ["encoding", "shifted"])),
        Part("depends_on", "PE(p) · PE(p + k) depends on:", "choice", DEPENDS_CHOICES[0], tolerance=EXACT, points=1, minutes=1,
             choices=DEPENDS_CHOICES,
             misconceptions=(Misconception("both", DEPENDS_CHOICES[1], "Each pair gives cos(k·ω_i): p cancels."),   # SLIPS
                             Misconception("position", DEPENDS_CHOICES[2], "Each pair gives cos(k·ω_i), a function of k only."))),
    ]
    pe_steps = solve.positions.positional_encoding_steps
    solution = (steps_from(pe_steps(encodings.params, at_p), "encoding", f"PE({pos}): ")
                + steps_from(pe_steps(encodings.params | {"position": pos + k}, at_pk), "shifted", f"PE({pos + k}): "))
    solution += steps_from(solve.positions.relative_steps(known.params, rel).dot, "dot")
    solution.append(SolutionStep("Only the offset", [
        Math(r"\sin(p\omega)\sin((p+k)\omega) + \cos(p\omega)\cos((p+k)\omega) = \cos(k\omega)"),
        Text(f"The sum Σ cos(k·ω_i) = {rel.dot:.4g} is the same for every p: the encoding lets attention see relative "
             "positions."), Matrix("depends on", DEPENDS_CHOICES[0])], "depends_on"))
    return Draft(title="Positional encodings: relative positions", params=params, statement=statement, parts=parts,
                 solution=solution, conventions=conventions)
