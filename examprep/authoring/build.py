"""An authored question's Problem from its drawn parameters: the statement with its placeholders as
math (arrays as the document model's matrices), one part per answer asked (value, known mistakes
and ECF rule from the solve topic's tables), written parts with their model answer and rubric, and
the topic's named worked steps."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np

from examprep import solve
from examprep.answers.read import norm_choice
from examprep.answers.result import to_array
from examprep import expr
from examprep.authoring.question import MAX_TRIES, QuestionError, QuestionSpec, draws, substitute
from examprep.document import Matrix, Text, name_latex
from examprep.errors import ExamprepError, ParamError
from examprep.generators import nice
from examprep.generators.framework import _differs, _identical, steps_from
from examprep.problem import EXACT, SIGFIGS3, EcfRule, Misconception, Part, Problem, SolutionStep
from examprep.solve.contract import jsonable
from examprep.stream import Stream
from examprep.values import latex_number, snap


def _is_array(v: Any) -> bool:
    return isinstance(v, (list, tuple))


def _scalar_text(v: Any) -> str:
    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, (int, float)):
        return f"${latex_number(v)}$"         # as the worked solution and the answers print it
    return str(v)


def _inline(v: Any) -> str:
    if _is_array(v):
        def row(x: Any) -> str:
            return "[" + ", ".join(row(e) if _is_array(e) else latex_number(e) for e in x) + "]"
        return f"${row(snap(v))}$"
    return _scalar_text(v)


def statement(text: str, values: dict[str, Any], labels: dict[str, str] | None = None) -> list:
    """The question's text as blocks: a number or a short vector (at most 6 entries) inline as math,
    a matrix or a longer vector as its name in the text and a Matrix block after the paragraph."""
    if not text.strip():
        return []
    labels = labels or {}
    arrays: list[str] = []

    def sub(name: str) -> str:
        v = values[name]
        if _is_array(v) and len(v) <= 6 and not any(_is_array(e) for e in v):
            return _inline(v)
        if _is_array(v):
            if name not in arrays:
                arrays.append(name)
            return f"${name_latex(labels.get(name) or name)}$"
        return _scalar_text(v)

    blocks: list = [Text(substitute(text.strip(), sub))]
    blocks += [Matrix(labels.get(name) or name, values[name]) for name in arrays]
    return blocks


def prompt_text(prompt: str, values: dict[str, Any]) -> str:
    return substitute(prompt, lambda name: _inline(values[name]))


def _kind(value: Any) -> tuple[str, tuple[int, ...] | None, Any] | None:
    """(kind, shape, default tolerance) of an answer's value, or None for one a part cannot hold."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return None
    if arr.dtype.kind not in "iuf" or arr.ndim > 2:
        return None
    exact = arr.dtype.kind in "iu"
    if arr.ndim == 0:
        return ("integer" if exact else "number"), None, (EXACT if exact else SIGFIGS3)
    return ("vector" if arr.ndim == 1 else "matrix"), tuple(arr.shape), (EXACT if exact else SIGFIGS3)


def make_problem(spec: Any, seed: int, values: dict[str, Any]) -> tuple[Problem, list[tuple[str, str]]]:
    """The Problem for drawn ``values``, and the notes its check reports (part id, note). numpy's
    floating-point warnings never reach the terminal: an answer they make non-finite is a note."""
    with np.errstate(all="ignore"):
        return _make_problem(spec, seed, values)


def _make_problem(spec: Any, seed: int, values: dict[str, Any]) -> tuple[Problem, list[tuple[str, str]]]:
    notes: list[tuple[str, str]] = []
    parts: list[Part] = []
    solution: list[SolutionStep] = []
    conventions: dict[str, str] = {}
    asked = {p.answer: p.id for p in spec.parts if p.kind == "answer"}
    if spec.topic is not None:
        topic = solve.get_topic(spec.topic)
        names = {tp.name for tp in topic.params}
        given = {k: v for k, v in values.items() if k in names}
        overflow: list[str] = []            # numpy's reports (never printed: a draw's note says it)
        with np.errstate(all="call", call=lambda kind, flag: overflow.append(kind)):
            topic, full, trace = solve.compute(spec.topic, given)     # ParamError: the caller redraws
        known = solve.Mistakes(topic, full, trace)
        conventions = dict(topic.conventions(full))
        answers_here = set(topic.answer_names(full, trace)) if topic.answer_names else set(topic.answers)
    own_steps: list[SolutionStep] = []            # of computed and choice parts: after the topic's steps
    envs: dict[str, dict[str, Any]] = {}           # what expressions read: "" the problem's own, else a mistake's

    def env(changed: dict[str, Any] | None = None) -> dict[str, Any]:
        key = repr(sorted(changed.items())) if changed else ""
        if key not in envs:
            tr = (known.trace(**changed) if changed else trace) if spec.topic is not None else {}
            names = sorted(answers_here) if spec.topic is not None else []
            envs[key] = {**{n: jsonable(tr[n]) for n in names}, **jsonable({**values, **(changed or {})})}
        return envs[key]

    for ps in spec.parts:
        prompt = prompt_text(ps.prompt, values)
        if ps.kind == "written":
            parts.append(Part(ps.id, prompt, "written", None, tolerance=EXACT, points=ps.points, minutes=ps.minutes,
                              model_answer=ps.model_answer, rubric=ps.rubric, hint=ps.hint))
            continue
        if ps.kind == "choice":
            part, step = _choice_part(spec, ps, prompt, seed)
            parts.append(part)
            own_steps.append(step)
            continue
        if ps.value:
            try:
                value = expr.evaluate(ps.value, env())
            except expr.ExprError as err:
                notes.append((ps.id, f"cannot be graded: value {ps.value!r}: {err}"))
                parts.append(Part(ps.id, prompt, "written", None, tolerance=EXACT, points=ps.points,
                                  minutes=ps.minutes, model_answer=ps.value, hint=ps.hint))
                continue
            part, step = _numeric_part(ps, prompt, value, (), _authored(ps, env, known if spec.topic else None, notes),
                                       seed, notes)
            parts.append(part)
            if step is not None:
                own_steps.append(step)
            continue
        if ps.answer not in answers_here:
            raise QuestionError(f"{spec.source}:{ps.line or ''}: part {ps.id}: {spec.topic} gives no {ps.answer!r} "
                                f"for these parameters (it gives {', '.join(sorted(answers_here))})".replace(":: ", ": "))
        value = trace[ps.answer]
        if ps.answer in topic.shape_lists:              # a list of shapes, one per layer (lengths may differ)
            parts.append(_shapes_part(ps, prompt, value, known))
            continue
        part, _ = _numeric_part(ps, prompt, value, known.of(ps.answer, jsonable), _authored(ps, env, known, notes),
                                seed, notes, overflow)
        if part.kind == "written":          # cannot be graded: the note says why
            parts.append(part)
            continue
        rule = solve.ecf(spec.topic, ps.answer, full, trace, asked, jsonable)
        is_shape = part.kind == "vector" and ps.answer in topic.shapes
        if is_shape and rule is None:
            # the topic's own recipe for the answer: how a key read later links the part to it (a shape)
            rule = EcfRule(f"solve:{spec.topic}", jsonable(given), ps.answer)
        parts.append(replace(part, ecf_rule=rule, tensor_shape=is_shape))
    if spec.topic is not None:
        for st in solve.steps_of(topic.steps(full, trace)):
            owner = next((asked[a] for a in st.values if a in asked), None)
            solution += steps_from(st, owner)
    solution += own_steps
    for p in parts:
        if p.kind == "written" and p.model_answer:
            blocks: list = [Text(p.model_answer)]
            if p.rubric:
                blocks.append(Text("Rubric: " + "; ".join(p.rubric) + "."))
            solution.append(SolutionStep(f"Model answer ({p.id})", blocks, p.id))
    labels = {k: d.label for k, d in spec.params.items() if d.label}
    problem = Problem(generator=spec.generator, version=1, seed=seed, difficulty=1, title=spec.title,
                      params=jsonable(values), statement=statement(spec.text, values, labels), parts=parts,
                      solution=solution, conventions=conventions)
    return problem, notes


def _numeric_part(ps: Any, prompt: str, value: Any, known: Any, authored: Any, seed: int,
                  notes: list[tuple[str, str]], overflow: list[str] | None = None) -> tuple[Part, SolutionStep | None]:
    """A part graded by value (number, integer, vector, matrix) with its mistakes — the topic's table's
    (``known``), then the author's (``authored``, each (id, value, explanation, credit)) — less those
    that give the answer itself or that the tolerance cannot tell from it (a note says so); and, for
    a computed part, the worked step that shows its expression's value."""
    what = ps.answer or f"value {ps.value!r}"
    kind = _kind(value)
    if kind is None or np.size(value) == 0:     # an empty list: no entry to grade (a key of "vector of 0")
        why = "an empty list" if kind is not None else "not a number, vector or matrix"
        notes.append((ps.id, f"cannot be graded: {what} is {why}"))
        return Part(ps.id, prompt, "written", None, tolerance=EXACT, points=ps.points, minutes=ps.minutes,
                    model_answer=str(jsonable(value)), hint=ps.hint), None
    kind_name, shape, default_tol = kind
    tol = ps.tolerance or default_tol
    expected = jsonable(value)
    if kind_name in ("number", "vector", "matrix"):
        expected = snap(expected)
    if np.any(np.isnan(to_array(expected))):       # ±∞ is graded (a masked score); NaN equals nothing
        notes.append((ps.id, f"cannot be graded: {what} is undefined (NaN) for these parameters"))
    elif overflow and not np.all(np.isfinite(to_array(expected))):     # ±∞ from an overflow, not a mask
        notes.append((ps.id, f"degenerate: {what} is not finite for these parameters ({overflow[0]} "
                             "in the computation); draw smaller numbers"))
    part = Part(ps.id, prompt, kind_name, expected, tolerance=tol, points=ps.points, minutes=ps.minutes,
                shape=shape, hint=ps.hint)
    kept: list[Misconception] = []
    candidates = [(m.id, m.value, m.explanation, 0.0, False) for m in known] + [(*a, True) for a in authored]
    for mid, mv, why, credit, own in candidates:
        if mv is None:
            continue               # the author's mistake could not be computed here (a note says why)
        mv = jsonable(mv)
        if own and (isinstance(mv, bool) or _kind(mv) is None or np.shape(mv) != np.shape(expected)):
            notes.append((ps.id, f"the mistake {mid!r} gives {_short(mv)}, not a {kind_name} like the answer "
                                 f"{_short(expected)} (at seed {seed}); left out"))
            continue
        v = snap(mv) if kind_name != "integer" else mv
        if _identical(expected, v):
            continue           # the mistaken method gives the right answer here: nothing to diagnose
        if not _differs(part, v):
            notes.append((ps.id, f"the tolerance ({tol.describe()}) cannot tell the answer from the mistake "
                                 f"{mid!r} (at seed {seed}: {_short(expected)} against {_short(v)}); left out"))
            continue
        if any(not _differs(Part(ps.id, "", kind_name, k.value, tolerance=tol, shape=shape), v) for k in kept):
            continue
        kept.append(Misconception(mid, v, why, credit))
    step = None
    if ps.value:
        step = SolutionStep(f"Computed ({ps.id})", [Text(f"{ps.value} = {_short(expected, 200)}")], ps.id)
    return replace(part, misconceptions=tuple(kept)), step


def _authored(ps: Any, env: Any, known: Any, notes: list[tuple[str, str]]) -> list[tuple[str, Any, str, float]]:
    """The author's own mistakes of a numeric part as (id, value, explanation, credit): each
    expression over the parameters and answers — those of the topic computed with the mistake's
    ``params`` where it gives them — or, with ``params`` alone, the part's own answer so computed.
    A mistake that cannot be computed for this draw is None, with a note."""
    out = []
    for m in ps.mistakes:
        try:
            if m.params and known is not None:
                known.trace(**m.params)             # the engine's refusal of the mistaken parameters, first
            here = env(m.params)
            source = m.value or ps.value
            value = expr.evaluate(source, here) if source else here[ps.answer]
        except (ExamprepError, expr.ExprError, KeyError) as err:
            notes.append((ps.id, f"the mistake {m.id!r} cannot be computed for this draw ({err}); left out"))
            value = None
        out.append((m.id, value, m.why, m.credit))
    return out


def _choice_order(spec: Any, ps: Any, seed: int) -> list[int]:
    """The order a choice part shows its options in for ``seed`` (indexes into ``ps.choices``)."""
    return Stream("question", spec.id, seed, "choices", ps.id).shuffle(range(len(ps.choices)))


def choice_label(spec: Any, part_id: str, seed: int, text: str) -> str | None:
    """The label (a, b, …) that option ``text`` of choice part ``part_id`` has in variant ``seed``,
    or None where ``text`` is not one of its options (a question test may name an option by its text)."""
    ps = next(p for p in spec.parts if p.id == part_id)
    order = _choice_order(spec, ps, seed)
    for pos, orig in enumerate(order):
        if norm_choice(ps.choices[orig]) == norm_choice(text):
            return Problem.label(pos)
    return None


_OPTIONS_JOIN = "; "          # "a) …; b) …" after a choice part's prompt: written by _choice_part, read by option_text


def option_text(part: Part) -> str | None:
    """The text of a question file's choice part's right option, read from the "a) …; b) …" list
    _choice_part writes after its prompt (a part keeps only the labels); None for a part whose
    options are not so listed (a generator's choices are their own text)."""
    labels = [str(c) for c in part.choices]
    if not labels or not all(re.fullmatch(r"[a-z]", c) for c in labels) or str(part.expected) not in labels:
        return None
    pattern = r"\s" + re.escape(_OPTIONS_JOIN).join(rf"{c}\) (.+?)" for c in labels) + r"\Z"
    m = re.search(pattern, part.prompt, re.S)
    return m.group(labels.index(str(part.expected)) + 1) if m else None


def _choice_part(spec: Any, ps: Any, prompt: str, seed: int) -> tuple[Part, SolutionStep]:
    """A choice part: its options in an order drawn from the question's seed (the project's Stream,
    so every variant rebuilds it bit for bit), labelled a, b, c, … after the prompt; the answer is
    the label of the correct one, each mistake the label of its wrong option."""
    order = _choice_order(spec, ps, seed)
    labels = tuple(Problem.label(i) for i in range(len(order)))
    label_of = {ps.choices[orig]: labels[pos] for pos, orig in enumerate(order)}
    # on the prompt's line: a line break is a space in Markdown and Typst, and the options must show in all
    options = _OPTIONS_JOIN.join(f"{labels[pos]}) {ps.choices[orig]}" for pos, orig in enumerate(order))
    mistakes = tuple(Misconception(m.id, label_of[m.choice], m.why, m.credit) for m in ps.mistakes)
    part = Part(ps.id, f"{prompt} {options}", "choice", label_of[ps.correct], tolerance=EXACT, points=ps.points,
                minutes=ps.minutes, choices=labels, misconceptions=mistakes, hint=ps.hint)
    return part, SolutionStep(f"Answer ({ps.id})", [Text(f"{label_of[ps.correct]}) {ps.correct}")], ps.id)


def _shapes_part(ps: Any, prompt: str, value: Any, known: Any) -> Part:
    """A part asking a whole list of shapes (Topic.shape_lists): kind "shapes", each shape exact, with
    the table's mistakes that give another list."""
    def shapes(v: Any) -> list[list[int]]:
        return [[int(s) for s in shape] for shape in jsonable(v)]

    expected = shapes(value)
    mistakes = tuple(Misconception(m.id, shapes(m.value), m.explanation) for m in known.of(ps.answer)
                     if shapes(m.value) != expected)
    return Part(ps.id, prompt, "shapes", expected, tolerance=EXACT, points=ps.points, minutes=ps.minutes,
                misconceptions=mistakes, hint=ps.hint)


def _short(v: Any, n: int = 50) -> str:
    """A value in a check's message: numbers to 4 significant figures, cut at ``n`` characters."""
    def fmt(x: Any) -> str:
        if isinstance(x, list):
            return "[" + ", ".join(fmt(e) for e in x) + "]"
        return nice(x, 4) if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)

    text = fmt(v)
    return text if len(text) <= n else text[: n - 1] + "…"


def build_question(spec: QuestionSpec, seed: int) -> Any:
    """The Problem of the question for ``seed`` (bit for bit the same for the same file and seed).
    QuestionError for a part that cannot be graded, with the line and words `examprep check` uses:
    generate, sheet and the quiz refuse what check calls not usable."""
    problem, notes = draft(spec, seed)
    lines = {p.id: p.line for p in spec.parts}
    for part_id, note in notes:
        if note.startswith("cannot be graded"):
            where = f"{spec.source}:{lines[part_id]}" if lines.get(part_id) else spec.at("solve")
            raise QuestionError(f"{where}: part {part_id}: {note} (seed {seed}); `examprep check` says not usable")
    return problem


def draft(spec: QuestionSpec, seed: int) -> tuple[Any, list[tuple[str, str]]]:
    """The Problem and what its check reports: (part id, note) for a known mistake the tolerance
    cannot tell from the answer (left out of the part's mistakes) or an answer that cannot be graded."""
    refused = None
    try:
        for values, attempt in draws(spec, seed):
            try:
                problem, notes = make_problem(spec, seed, values)
            except ParamError as err:        # the engine refuses this draw (a shape, a range): the next one
                refused = err
                if attempt + 1 >= MAX_TRIES:
                    break
                continue
            if attempt and refused is not None:
                notes = [("", f"the engine refused {attempt} draw(s) before this one: {refused}")] + notes
            return problem, notes
    except QuestionError:
        if refused is None:          # no draw ever satisfied `where`: the condition is to blame
            raise
    # draws satisfied `where` but the topic refused every one: blame the parameter it names
    named = str(refused).split(":", 1)[0].strip()
    param = named if named in spec.params else next(iter(spec.params), "")
    raise QuestionError(f"{spec.at('param:' + param)}: [question.params]: {spec.topic} refuses every draw: {refused}")
