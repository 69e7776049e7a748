"""An authored question's Problem from its drawn parameters: the statement with its placeholders as
math (arrays as the document model's matrices), one part per answer asked (value, known mistakes
and ECF rule from the solve topic's tables), written parts with their model answer and rubric, and
the topic's named worked steps."""
from __future__ import annotations

from typing import Any

import numpy as np

from examprep.authoring.question import MAX_TRIES, QuestionError, QuestionSpec, draws, substitute
from examprep.document import Matrix, Text
from examprep.errors import ParamError, check_seed
from examprep.problem import EXACT, SIGFIGS3, EcfRule, Misconception, Part, Problem, SolutionStep
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
    from examprep.render.markdown import name_latex

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
    from examprep import solve
    from examprep.answers.result import to_array
    from examprep.generators.framework import _differs, _identical, steps_from
    from examprep.solve.contract import jsonable
    from examprep.values import snap

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
    for ps in spec.parts:
        prompt = prompt_text(ps.prompt, values)
        if ps.kind == "written":
            parts.append(Part(ps.id, prompt, "written", None, tolerance=EXACT, points=ps.points, minutes=ps.minutes,
                              model_answer=ps.model_answer, rubric=ps.rubric, hint=ps.hint))
            continue
        if ps.answer not in answers_here:
            raise QuestionError(f"{spec.source}:{ps.line or ''}: part {ps.id}: {spec.topic} gives no {ps.answer!r} "
                                f"for these parameters (it gives {', '.join(sorted(answers_here))})".replace(":: ", ": "))
        value = trace[ps.answer]
        if ps.answer in topic.shape_lists:              # a list of shapes, one per layer (lengths may differ)
            parts.append(_shapes_part(ps, prompt, value, known))
            continue
        kind = _kind(value)
        if kind is None:
            notes.append((ps.id, f"cannot be graded: {ps.answer} is not a number, vector or matrix"))
            parts.append(Part(ps.id, prompt, "written", None, tolerance=EXACT, points=ps.points, minutes=ps.minutes,
                              model_answer=str(jsonable(value)), hint=ps.hint))
            continue
        kind_name, shape, default_tol = kind
        tol = ps.tolerance or default_tol
        expected = jsonable(value)
        if kind_name in ("number", "vector", "matrix"):
            expected = snap(expected)
        if np.any(np.isnan(to_array(expected))):       # ±∞ is graded (a masked score); NaN equals nothing
            notes.append((ps.id, f"cannot be graded: {ps.answer} is undefined (NaN) for these parameters"))
        elif overflow and not np.all(np.isfinite(to_array(expected))):     # ±∞ from an overflow, not a mask
            notes.append((ps.id, f"degenerate: {ps.answer} is not finite for these parameters ({overflow[0]} "
                                 "in the computation); draw smaller numbers"))
        part = Part(ps.id, prompt, kind_name, expected, tolerance=tol, points=ps.points, minutes=ps.minutes,
                    shape=shape, hint=ps.hint)
        kept: list[Misconception] = []
        for m in known.of(ps.answer, jsonable):
            v = snap(m.value) if kind_name != "integer" else m.value
            if _identical(expected, v):
                continue           # the mistaken method gives the right answer here: nothing to diagnose
            if not _differs(part, v):
                notes.append((ps.id, f"the tolerance ({tol.describe()}) cannot tell the answer from the mistake "
                                     f"{m.id!r} (at seed {seed}: {_short(expected)} against {_short(v)}); left out"))
                continue
            if any(not _differs(Part(ps.id, "", kind_name, k.value, tolerance=tol, shape=shape), v) for k in kept):
                continue
            kept.append(Misconception(m.id, v, m.explanation))
        rule = solve.ecf(spec.topic, ps.answer, full, trace, asked, jsonable)
        is_shape = kind_name == "vector" and ps.answer in topic.shapes
        if is_shape and rule is None:
            # the topic's own recipe for the answer: how a key read later links the part to it (a shape)
            rule = EcfRule(f"solve:{spec.topic}", jsonable(given), ps.answer)
        parts.append(Part(ps.id, prompt, kind_name, expected, tolerance=tol, points=ps.points, minutes=ps.minutes,
                          shape=shape, misconceptions=tuple(kept), ecf_rule=rule, hint=ps.hint, tensor_shape=is_shape))
    if spec.topic is not None:
        for st in solve.steps_of(topic.steps(full, trace)):
            owner = next((asked[a] for a in st.values if a in asked), None)
            solution += steps_from(st, owner)
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


def _shapes_part(ps: Any, prompt: str, value: Any, known: Any) -> Part:
    """A part asking a whole list of shapes (Topic.shape_lists): kind "shapes", each shape exact, with
    the table's mistakes that give another list."""
    from examprep.solve.contract import jsonable

    def shapes(v: Any) -> list[list[int]]:
        return [[int(s) for s in shape] for shape in jsonable(v)]

    expected = shapes(value)
    mistakes = tuple(Misconception(m.id, shapes(m.value), m.explanation) for m in known.of(ps.answer)
                     if shapes(m.value) != expected)
    return Part(ps.id, prompt, "shapes", expected, tolerance=EXACT, points=ps.points, minutes=ps.minutes,
                misconceptions=mistakes, hint=ps.hint)


def _short(v: Any, n: int = 50) -> str:
    """A value in a check's message: numbers to 4 significant figures, cut at ``n`` characters."""
    from examprep.generators import nice

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


def is_question_file(name: str) -> bool:
    """A topic argument that names a question file rather than a generator."""
    return name.endswith(".toml")


def build_many(topics: list[str], *, seed: int, count: int = 1, difficulty: int = 1, calculator_free: bool = False,
               options: dict[str, Any] | None = None) -> list[Problem]:
    """`examprep generate`'s problems: generators as generators.build_many builds them, and question
    files (``*.toml``) drawn with seeds seed, seed+1, … — in the order given. Every file is read
    (and refused, naming its line) before any problem is built."""
    from examprep import generators
    from examprep.authoring.question import load_question

    files = {t: load_question(t) for t in topics if is_question_file(t)}
    built = _build_many(files, topics, seed=seed, count=count, difficulty=difficulty, calculator_free=calculator_free,
                        options=options)
    return [generators.mark_shapes(p) for p in built]          # tensor-shape parts read and print as shapes


def _build_many(files: dict[str, QuestionSpec], topics: list[str], *, seed: int, count: int, difficulty: int,
                calculator_free: bool, options: dict[str, Any] | None) -> list[Problem]:
    from examprep import generators

    if files and calculator_free:
        raise ParamError("--calculator-free: a question file has no calculator-free variant")
    names = [t for t in topics if not is_question_file(t)]
    if files and not names and difficulty != 1:
        raise ParamError(f"--difficulty: a question file has no levels (got {difficulty}); its draws are its own")
    if not files:
        return generators.build_many(topics, seed=seed, count=count, difficulty=difficulty,
                                     calculator_free=calculator_free, options=options)
    if names:     # the generators' options are checked as generate checks them
        generators.build_many(names, seed=seed, count=1, difficulty=difficulty, calculator_free=calculator_free,
                              options=options)
    if not 1 <= count <= 10_000:
        raise ParamError(f"--count: expected 1 to 10000, got {count}")
    check_seed(seed)
    out: list[Problem] = []
    for t in topics:
        if t in files:
            out += [build_question(files[t], seed + i) for i in range(count)]
        else:
            out += generators.build_many([t], seed=seed, count=count, difficulty=difficulty,
                                         calculator_free=calculator_free, options=options)
    return out
