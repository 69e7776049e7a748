"""Question files: an instructor's own question in TOML, drawn from a seed and computed by a solve
topic, so it has the engine's worked steps, the answers' known mistakes and ECF rules (declared once
beside the topic's steps in ``solve/<area>.py``) like every built-in problem.

    [question]
    id = "softmax-by-hand"
    title = "Softmax of three logits"
    solve = "cross-entropy"                  # an `examprep solve` topic (optional: written parts only)
    text = "A classifier outputs the logits {logits} for one example of class {target}."
    where = "distinct(logits)"               # redraw until it holds (see examprep/expr.py)

    [question.params]                        # fixed values, or draws from the question's seed
    logits = { integers = [-2, 3], size = 3 }
    target = { choice = [0, 1, 2] }

    [[question.part]]
    answer = "probs"                         # an answer of the topic: `examprep solve --list cross-entropy`
    prompt = "The softmax probabilities."
    points = 2
    tolerance = "sigfigs:3"

    [[question.part]]
    kind = "written"
    prompt = "Why is this gradient so simple?"
    points = 2
    model_answer = "…"
    rubric = ["names p − y (1)", "explains the cancellation (1)"]

Draws: ``{ integers = [lo, hi], size = N | [rows, cols], nonzero = true }``, ``{ choice = [...] }``
(``size`` draws several), ``{ decimals = [lo, hi], step = 0.5, size = … }``; ``name = "W"`` names a
matrix in the statement (default: the parameter's name). Every other value is
fixed; ``{ value = [[1, 2], [3, 4]], name = "W" }`` is a fixed matrix the statement names W. A
parameter that the topic does not take may still be drawn for the text or the condition.

Parts of the author's own (docs/authoring.md, "Parts of your own"): ``value = "max(probs)"`` (an
expression of expr.py over the parameters and the topic's answers, with an ``id``), ``choices = [...]``
with ``correct``; ``[[question.part.mistake]]`` (``id``, ``why``, and ``value`` and/or ``params``, or
``choice``); ``[[question.test]]`` (``seed``, ``part``, ``answer``, and ``verdict`` or ``mistake``),
run by `examprep check`. A part's id is never a parameter's name.
Errors (QuestionError, exit 2) name the file, the line and the key.
"""
from __future__ import annotations

import difflib
import hashlib
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from examprep import expr
from examprep.authoring.own import (MistakeSpec, QuestionTest, check_expression, printable_text, read_choices,
                                    read_mistakes, read_tests, what_type)
from examprep import solve, tomllines
from examprep.answers import parse_tolerance
from examprep.errors import ExamprepError, ParamError
from examprep.fileio import read_user_text
from examprep.stream import Stream
from examprep.tomllines import line_of

MAX_TRIES = 1000          # draws tried before a `where` condition is declared impossible
MAX_BOUND = 10**9         # |lo|, |hi| of a draw, and of a decimals draw's range in steps: hand-computable,
                          # and within what the Stream draws uniformly (a 2**64 span would never end)
_BRACES = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}|[{}]")    # {{ and }} are literal braces
PREFIX = "question:"      # an authored Problem's generator is "question:<id>"


class QuestionError(ExamprepError):
    """A bad question file: one line naming the file, the line and the key."""


def placeholders(text: str) -> list[str]:
    """The parameter names ``text`` substitutes ({name}), in order. ValueError naming the column for
    any other brace: ``{x.attr}``, ``{x:.3f}``, an unclosed ``{x`` (``{{`` and ``}}`` are literal braces)."""
    found = []
    for m in _BRACES.finditer(text):
        if m.group(1):
            found.append(m.group(1))
        elif m.group(0) in "{}":
            end = text.find("}", m.start() + 1) if m.group(0) == "{" else m.start()
            snippet = text[m.start(): end + 1] if end >= 0 else text[m.start(): m.start() + 20]
            what = "an unclosed '{'" if m.group(0) == "{" and end < 0 else f"{snippet!r}"
            raise ValueError(f"{what} at column {m.start() + 1} is not a placeholder: write {{name}} with a "
                             "parameter's name ({{ and }} for a literal brace)")
    return found


def _holds_table(value: Any) -> bool:
    """A TOML table (a dict) anywhere in ``value``: a value the statement has no printed form for."""
    return isinstance(value, dict) or isinstance(value, (list, tuple)) and any(map(_holds_table, value))


def substitute(text: str, value: Any) -> str:
    """``text`` with each {name} replaced by ``value(name)``, and {{ and }} by single braces."""
    def one(m: Any) -> str:
        return m.group(0)[0] if m.group(0) in ("{{", "}}") else value(m.group(1)) if m.group(1) else m.group(0)
    return _BRACES.sub(one, text)


@dataclass(frozen=True)
class Draw:
    """How one parameter gets its value: ``kind`` "fixed", "integers", "choice" or "decimals"."""

    kind: str
    value: Any = None              # fixed: the value; integers/decimals: [lo, hi]; choice: the options
    size: tuple[int, ...] = ()
    nonzero: bool = False
    step: float = 1.0
    label: str = ""                # how the statement names a matrix (name = "W"); default the parameter's name


@dataclass(frozen=True)
class PartSpec:
    id: str
    kind: str                      # "answer" (computed by the topic) or "written"
    prompt: str
    points: float
    minutes: float
    answer: str = ""
    tolerance: Any = None          # a Tolerance, or None for the default of the answer's kind
    model_answer: str = ""
    rubric: tuple[str, ...] = ()
    hint: str = ""
    line: int | None = None
    value: str = ""                # a computed part: its expression (examprep/expr.py) over parameters and answers
    value_line: int | None = None
    choices: tuple[str, ...] = ()  # a choice part: its options as written, and the correct one
    correct: str = ""
    mistakes: tuple["MistakeSpec", ...] = ()


@dataclass(frozen=True)
class QuestionSpec:
    id: str
    title: str
    topic: str | None
    text: str
    where: str | None
    params: dict[str, Draw]
    parts: tuple[PartSpec, ...]
    source: str = ""
    digest: str = ""               # of the file's text: a key names the version of the question it holds
    lines: dict[str, int | None] = field(default_factory=dict, compare=False)    # "where", "param:x", …
    sha256: str = ""               # of the file's text (UTF-8): what a review card links to (examprep.history)
    tests: tuple[QuestionTest, ...] = ()

    @property
    def generator(self) -> str:
        return PREFIX + self.id

    def at(self, key: str) -> str:
        """``source:line`` for a key of the file (``source`` alone when the line is not known)."""
        line = self.lines.get(key)
        return f"{self.source}:{line}" if line else self.source


_QUESTION_KEYS = {"id": str, "title": str, "solve": str, "text": str, "where": str, "params": dict, "part": list,
                  "test": list}
_PART_KEYS = {"id": str, "answer": str, "kind": str, "prompt": str, "points": (int, float), "minutes": (int, float),
              "tolerance": str, "model_answer": str, "rubric": list, "hint": str, "value": str, "choices": list,
              "correct": str, "mistake": list}
_DRAW_KEYS = {"integers": {"integers", "size", "nonzero", "name"}, "choice": {"choice", "size", "name"},
              "decimals": {"decimals", "step", "size", "nonzero", "name"}, "value": {"value", "name"}}


def _line(text: str, key: str, table: str | None = None, index: int = 0) -> int | None:
    return line_of(text, key, table, index)


def load_question(path: str | Path) -> QuestionSpec:
    """A question file read and checked (QuestionError naming the file, line and key)."""
    text = read_user_text(Path(path), str(path), error=QuestionError)
    return parse_question(text, str(path))


def parse_question(text: str, source: str) -> QuestionSpec:
    """A question from TOML text; ``source`` names it in messages. Checks everything that can be
    checked without drawing: keys and their types, the topic, answer names, tolerances, draws,
    placeholders, the condition's syntax and names, the topic's required parameters."""
    def fail(msg: str, line: int | None) -> QuestionError:
        return QuestionError(f"{source}{f':{line}' if line else ''}: {msg}")

    try:
        data = tomllines.loads(text)
    except tomllines.TomlError as err:
        raise fail(f"not valid TOML: {err.what}", err.line) from None
    for key in data:
        if key != "question":
            raise fail(f"unknown key {key!r}; a question file has one [question] table", _line(text, key)
                       or _line(text, "", key))
    q = data.get("question")
    if not isinstance(q, dict):
        raise fail("no [question] table (see docs/authoring.md, \"Writing your own questions\")", None)
    qline = _line(text, "", "question")

    def unknown(key: str, known: dict, where: str, line: int | None) -> QuestionError:
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else f"; known keys: {', '.join(sorted(known))}"
        return fail(f"{where}: unknown key {key!r}{hint}", line)

    lines: dict[str, int | None] = {}
    for key, value in q.items():
        line = _line(text, key, "question")
        lines[key] = line
        if key not in _QUESTION_KEYS:
            raise unknown(key, _QUESTION_KEYS, "[question]", line)
        if not isinstance(value, _QUESTION_KEYS[key]):
            raise fail(f"[question] {key}: expected {what_type(_QUESTION_KEYS[key])}, got {value!r}",
                       line or _line(text, "", f"question.{key}"))
        if key not in ("part", "params"):     # checked below, each with its own line
            printable_text(f"[question] {key}", key, value, lambda m, ln=line: fail(m, ln))
    qid = q.get("id", "").strip()
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", qid):
        raise fail(f"[question] id: letters, digits, '-', '_' and '.' (at most 64), got {qid!r}"
                   if qid else "[question] id: give the question an id, e.g. id = \"softmax-by-hand\"",
                   lines.get("id") or qline)
    title = q.get("title", "").strip() or qid
    topic_name = q.get("solve")
    topic = None
    if topic_name is not None:
        try:
            topic = solve.get_topic(topic_name)
        except ParamError as err:
            raise fail(f"[question] solve: {err}", lines.get("solve")) from None

    # parameters
    params_line = _line(text, "", "question.params")
    params: dict[str, Draw] = {}
    for name, spec in q.get("params", {}).items():
        line = _line(text, name, "question.params") or lines.get("params") or params_line
        lines[f"param:{name}"] = line
        if name in expr.RESERVED:
            raise fail(f"[question.params] {name}: {name!r} is a name of the expression language (true, false and "
                       f"the functions {', '.join(expr.FUNCTIONS)}); give the parameter another name", line)
        printable_text(f"[question.params] {name}", name, spec, lambda m, ln=line: fail(m, ln))
        params[name] = _draw(name, spec, lambda m, ln=line: fail(m, ln))

    # parts
    parts_raw = q.get("part", [])
    if not parts_raw:
        raise fail("no parts: add [[question.part]] tables (an answer of the topic, or kind = \"written\")", qline)
    parts: list[PartSpec] = []
    written = 0
    mistake_index = 0                 # [[question.part.mistake]] tables are counted over the whole file
    chosen = 0
    for i, p in enumerate(parts_raw):
        where = f"part {i + 1}"
        head = _line(text, "", "question.part", i)
        if not isinstance(p, dict):
            raise fail(f"{where}: expected a table [[question.part]]", head)
        for key, value in p.items():
            line = _line(text, key, "question.part", i) or head
            if key not in _PART_KEYS:
                raise unknown(key, _PART_KEYS, where, line)
            want = _PART_KEYS[key]
            if not isinstance(value, want) or isinstance(value, bool):
                raise fail(f"{where} {key}: expected {what_type(want)}, got {value!r}", line)
            if key != "mistake":          # each mistake's keys are checked with their own lines
                printable_text(f"{where} {key}", key, value, lambda m, ln=line: fail(m, ln))
        at = lambda key, i=i, head=head: _line(text, key, "question.part", i) or head     # noqa: E731
        kind = p.get("kind", "written" if "model_answer" in p and "answer" not in p
                     else "choice" if "choices" in p else "answer")
        if kind not in ("answer", "written", "choice"):
            raise fail(f"{where} kind: \"written\" (answered in words), \"choice\" (one of choices) or \"answer\" "
                       f"(the default), got {kind!r}", at("kind"))
        for key in {"answer": ("choices", "correct"), "written": ("answer", "tolerance", "value", "choices", "correct",
                                                                   "mistake"),
                    "choice": ("answer", "value", "tolerance", "model_answer", "rubric")}[kind]:
            if key in p:
                raise fail(f"{where} {key}: " + ({"written": "a written part has no {key} (it is marked by hand)",
                                                  "choice": "a choice part has no {key}: its answer is one of its "
                                                            "choices"}.get(kind)
                                                 or "only a choice part (choices = [...]) has {key}").format(key=key),
                           at(key))
        prompt = p.get("prompt", "").strip()
        if not prompt:
            raise fail(f"{where} prompt: say what the part asks, e.g. prompt = \"The softmax probabilities.\"", head)
        points = float(p.get("points", 1))
        if not 0 < points <= 100:
            raise fail(f"{where} points: expected a number above 0 and at most 100, got {p.get('points')}",
                       at("points"))
        n_mistakes = len(p.get("mistake", []))
        mistake_heads = list(range(mistake_index, mistake_index + n_mistakes))
        mistake_index += n_mistakes
        if kind == "written":
            model = p.get("model_answer", "").strip()
            if not model:
                raise fail(f"{where} model_answer: a written part needs the model answer the marker reads", head)
            rubric = p.get("rubric", [])
            if not all(isinstance(r, str) and r.strip() for r in rubric):
                raise fail(f"{where} rubric: a list of non-empty strings, e.g. [\"names p − y (1)\"]", at("rubric"))
            written += 1
            pid = p.get("id", f"w{written}")
            minutes = float(p.get("minutes", max(2.0, 2.0 * points)))
            spec = PartSpec(pid, "written", prompt, points, minutes, model_answer=model,
                            rubric=tuple(r.strip() for r in rubric), hint=p.get("hint", ""), line=head)
        elif kind == "choice":
            chosen += 1
            choices = read_choices(p, where, at, fail)
            correct = p.get("correct")
            if correct is None:
                raise fail(f"{where} correct: name the correct one of the choices, e.g. correct = {choices[0]!r}", head)
            if correct.strip() not in choices:
                raise fail(f"{where} correct: {correct!r} is not one of the choices ({'; '.join(choices)})",
                           at("correct"))
            mistakes = read_mistakes(text, p, where, mistake_heads, head, fail, kind="choice", choices=choices,
                                 correct=correct.strip())
            minutes = float(p.get("minutes", max(1.0, 1.0 * points)))
            spec = PartSpec(p.get("id", f"c{chosen}"), "choice", prompt, points, minutes, choices=choices,
                            correct=correct.strip(), mistakes=mistakes, hint=p.get("hint", ""), line=head)
        else:
            for key in ("model_answer", "rubric"):
                if key in p:
                    raise fail(f"{where} {key}: only a written part (kind = \"written\") has a {key}", at(key))
            answer = p.get("answer")
            value = p.get("value")
            if answer and value is not None:
                raise fail(f"{where} value: a part is either an answer of the topic (answer = \"…\") or computed by "
                           "its own expression (value = \"…\"), not both", at("value"))
            if not answer and value is None:
                raise fail(f"{where}: missing answer (an answer of the solve topic), value (an expression), choices "
                           "or kind = \"written\"", head)
            if value is not None:
                if "id" not in p:
                    raise fail(f"{where} id: a computed part needs an id, e.g. id = \"max_prob\"", at("value"))
                check_expression(value, f"{where} value", params, topic, at("value"), fail)
            elif topic is None:
                raise fail(f"{where} answer: the question has no solve topic to compute {answer!r}; add "
                           "solve = \"TOPIC\" to [question]", at("answer"))
            elif answer not in topic.answers:
                close = difflib.get_close_matches(answer, topic.answers, n=1, cutoff=0.5)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise fail(f"{where} answer: {topic.name} has no answer {answer!r}; {hint}its answers: "
                           f"{', '.join(topic.answers)} (see `examprep solve --list {topic.name}`)", at("answer"))
            tolerance = None
            if "tolerance" in p:
                try:
                    tolerance = parse_tolerance(p["tolerance"])
                except ParamError as err:
                    raise fail(f"{where} {err}", at("tolerance")) from None
            if answer and topic is not None and answer in topic.shape_lists and "mistake" in p:
                raise fail(f"{where} mistake: {answer} is a list of shapes, one per layer: it takes its topic's "
                           "mistakes only", _line(text, "", "question.part.mistake", mistake_heads[0]) or head)
            declared = {m.id for m in topic.mistakes.get(answer, ())} if topic is not None and answer else set()
            mistakes = read_mistakes(text, p, where, mistake_heads, head, fail, kind="answer", params=params, topic=topic,
                                 declared=declared)
            minutes = float(p.get("minutes", max(1.5, 1.0 * points)))
            spec = PartSpec(p.get("id", answer), "answer", prompt, points, minutes, answer=answer or "",
                            tolerance=tolerance, hint=p.get("hint", ""), line=head, value=value or "",
                            value_line=at("value") if value is not None else None, mistakes=mistakes)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,39}", spec.id):
            raise fail(f"{where} id: letters, digits and '_' (starting with a letter), got {spec.id!r}", at("id"))
        if any(s.id == spec.id for s in parts):
            raise fail(f"{where} id: {spec.id!r} is already the id of another part; give one of them id = \"…\"",
                       at("id") if "id" in p else head)
        if spec.id in params:
            # grades name a part q3.<id> and expressions name parameters: one name, one thing
            raise fail(f"{where} id: {spec.id!r} is also the name of a parameter; give the part another id "
                       f"(id = \"{spec.id}_answer\")", at("id") if "id" in p else head)
        if not 0 < spec.minutes <= 120:
            raise fail(f"{where} minutes: expected a number above 0 and at most 120, got {spec.minutes:g}",
                       at("minutes"))
        parts.append(spec)

    # placeholders, the condition, the topic's parameters
    texts = [("text", q.get("text", ""), lines.get("text"))] + [
        (f"part {i + 1} prompt", s.prompt, _line(text, "prompt", "question.part", i)) for i, s in enumerate(parts)]
    used: set[str] = set()
    for what, t, line in texts:
        try:
            found = placeholders(t)
        except ValueError as err:
            raise fail(f"{what}: {err}", line) from None
        for name in found:
            if name not in params:
                close = difflib.get_close_matches(name, list(params), n=1)
                hint = f"; did you mean {{{close[0]}}}?" if close else "; add it to [question.params]"
                raise fail(f"{what}: placeholder {{{name}}} is not a parameter{hint}", line)
            draw = params[name]
            if draw.kind in ("fixed", "choice") and _holds_table(draw.value):
                raise fail(f"{what}: placeholder {{{name}}} is a table or a list of tables, which a statement cannot "
                           "show as math; describe it in the text (the topic still reads it)", line)
            used.add(name)
    where_text = q.get("where")
    if where_text is not None:
        try:
            read = expr.names(where_text)
        except expr.ExprError as err:
            raise fail(f"[question] where: {err}", lines.get("where")) from None
        missing = sorted(read - set(params))
        if missing:
            raise fail(f"[question] where: {missing[0]!r} is not a parameter (the parameters are "
                       f"{', '.join(params) or 'none'})", lines.get("where"))
        used |= read
    for s in parts:                  # a parameter read by a computed part or a mistake is used too
        for source_text in [s.value] + [m.value for m in s.mistakes]:
            if source_text:
                used |= expr.names(source_text)
    if topic is not None:
        names = [tp.name for tp in topic.params]
        for name in params:
            if name not in names and name not in used:
                close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise fail(f"[question.params] {name}: {topic.name} takes no parameter {name!r} and the text does "
                           f"not use it; {hint}its parameters: {', '.join(names)}", lines.get(f"param:{name}"))
        needed = [tp.name for tp in topic.params if tp.default is solve.REQUIRED and tp.name not in params]
        if needed:
            raise fail(f"[question.params]: {topic.name} needs {', '.join(needed)} (see `examprep solve --list "
                       f"{topic.name}`)", params_line or qline)
    tests = read_tests(text, q.get("test", []), parts, topic, fail)
    digest = hashlib.blake2b(text.encode(), digest_size=6).hexdigest()
    return QuestionSpec(qid, title, topic.name if topic else None, q.get("text", ""), where_text, params, tuple(parts),
                        source, digest, lines, text_sha256(text), tests)


def text_sha256(text: str) -> str:
    """The SHA-256 (hex) of a question file's text as UTF-8: a review card's content hash."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _too_large(value: Any) -> Any:
    """The first number in ``value`` (nested lists too) that is not finite or beyond ±MAX_BOUND, or None."""
    if isinstance(value, list):
        return next((bad for v in value if (bad := _too_large(v)) is not None), None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return None if (math.isfinite(value) and abs(value) <= MAX_BOUND) else value
    return None


def _draw(name: str, spec: Any, fail: Any) -> Draw:
    bad = _too_large(spec.get("choice", spec.get("value")) if isinstance(spec, dict) else spec)
    if bad is not None:           # exp(1e308) overflows: a hand computation needs hand-sized numbers
        raise fail(f"[question.params] {name}: values from -{MAX_BOUND:,} to {MAX_BOUND:,}, got {bad!r}")
    if not isinstance(spec, dict):
        return Draw("fixed", spec)
    if "value" in spec:              # a fixed value the statement names: { value = [[1, 2], [3, 4]], name = "W" }
        extra = sorted(set(spec) - _DRAW_KEYS["value"])
        if extra:
            raise fail(f"[question.params] {name}: unknown key {extra[0]!r} for a fixed value (keys: name, value)")
        label = spec.get("name", "")
        if not isinstance(label, str) or len(label) > 20:
            raise fail(f"[question.params] {name} name: a short symbol such as \"W\", got {label!r}")
        return Draw("fixed", spec["value"], label=label)
    kinds = [k for k in _DRAW_KEYS if k in spec]
    if len(kinds) != 1:
        raise fail(f"[question.params] {name}: a draw has one of integers = [lo, hi], choice = [...], "
                   f"decimals = [lo, hi] (with step), or a fixed value = …; got keys {', '.join(spec) or 'none'}")
    kind = kinds[0]
    extra = sorted(set(spec) - _DRAW_KEYS[kind])
    if extra:
        raise fail(f"[question.params] {name}: unknown key {extra[0]!r} for a {kind} draw (keys: "
                   f"{', '.join(sorted(_DRAW_KEYS[kind]))})")
    size = spec.get("size", ())
    if isinstance(size, int) and not isinstance(size, bool):
        size = (size,)
    if not isinstance(size, (tuple, list)) or not all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= 8
                                                      for s in size) or len(size) > 2:
        raise fail(f"[question.params] {name} size: a count from 1 to 8, or [rows, cols], got {spec.get('size')!r}")
    value = spec[kind]
    label = spec.get("name", "")
    if not isinstance(label, str) or len(label) > 20:
        raise fail(f"[question.params] {name} name: a short symbol such as \"W\", got {label!r}")
    if kind == "choice":
        if not isinstance(value, list) or not value:
            raise fail(f"[question.params] {name} choice: a non-empty list of values, got {value!r}")
        return Draw("choice", value, tuple(size), label=label)
    if (not isinstance(value, list) or len(value) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value) or value[0] > value[1]):
        raise fail(f"[question.params] {name} {kind}: [lo, hi] with lo ≤ hi, got {value!r}")
    if kind == "integers" and not all(isinstance(v, int) for v in value):
        raise fail(f"[question.params] {name} integers: whole numbers [lo, hi], got {value!r}")
    if not all(math.isfinite(v) and abs(v) <= MAX_BOUND for v in value):
        raise fail(f"[question.params] {name} {kind}: bounds from -{MAX_BOUND:,} to {MAX_BOUND:,}, got {value!r}")
    nonzero = spec.get("nonzero", False)
    if not isinstance(nonzero, bool):
        raise fail(f"[question.params] {name} nonzero: true or false, got {nonzero!r}")
    step = spec.get("step", 1.0)
    if kind == "decimals" and (isinstance(step, bool) or not isinstance(step, (int, float)) or not 0 < step < math.inf):
        raise fail(f"[question.params] {name} step: a number above 0, got {step!r}")
    if kind == "decimals":
        lo_k, hi_k = value[0] / step, value[1] / step
        if not (abs(lo_k) <= MAX_BOUND and abs(hi_k) <= MAX_BOUND):
            raise fail(f"[question.params] {name} step: {step!r} cuts {value!r} into more than {MAX_BOUND:,} steps "
                       "either side of 0; take a larger step")
        if nonzero and round(lo_k) == 0 == round(hi_k):
            raise fail(f"[question.params] {name}: nonzero draws from {value!r} in steps of {step:g}: only 0 is left")
    if nonzero and value[0] == 0 == value[1]:
        raise fail(f"[question.params] {name}: nonzero draws from [0, 0]")
    return Draw(kind, list(value), tuple(size), nonzero, float(step), label)


def draws(spec: QuestionSpec, seed: int) -> Any:
    """The question's parameter draws for ``seed`` that satisfy ``where``, in order (attempt 0, 1,
    …), as (values, attempt); QuestionError naming the ``where`` line after MAX_TRIES attempts."""
    tree = expr.parse(spec.where) if spec.where else None
    for attempt in range(MAX_TRIES):
        rng = Stream("question", spec.id, seed, attempt)
        values = {name: _one(d, rng) for name, d in spec.params.items()}
        if tree is not None:
            try:
                ok = expr.condition(tree, values)
            except expr.ExprError as err:
                raise QuestionError(f"{spec.at('where')}: [question] where: {err}") from None
            if not ok:
                continue
        yield values, attempt
    raise QuestionError(f"{spec.at('where')}: [question] where: no draw satisfies {spec.where!r} in {MAX_TRIES} tries "
                        f"(seed {seed}); widen the draws or relax the condition")


def _one(d: Draw, rng: Any) -> Any:
    if d.kind == "fixed":
        return d.value
    n = 1
    for s in d.size:
        n *= s

    def scalar() -> Any:
        if d.kind == "choice":
            return rng.choice(d.value)
        if d.kind == "integers":
            while True:
                v = rng.integer(d.value[0], d.value[1])
                if not (d.nonzero and v == 0):
                    return v
        lo, hi = round(d.value[0] / d.step), round(d.value[1] / d.step)
        while True:
            k = rng.integer(lo, hi)
            if not (d.nonzero and k == 0):
                return round(k * d.step, 10)

    if not d.size:
        return scalar()
    flat = [scalar() for _ in range(n)]
    if len(d.size) == 1:
        return flat
    return [flat[r * d.size[1]:(r + 1) * d.size[1]] for r in range(d.size[0])]


def _shares(weights: list[float], total: float) -> list[float]:
    """``total`` split in proportion to ``weights``, in halves of a point (largest remainders
    first, every share at least half a point), summing exactly to ``total``. ParamError where
    ``total`` is not in halves or too small to give every part a half (a recipe checks it first)."""
    halves = round(total * 2)
    if abs(halves / 2 - total) > 1e-9 or halves < len(weights):
        raise ParamError(f"points: {total:g} cannot be split in halves of a point over {len(weights)} parts")
    s = sum(weights)
    raw = [w * halves / s for w in weights]
    base = [max(1, int(r)) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: raw[i] - int(raw[i]), reverse=True)
    k = 0
    while sum(base) < halves:
        base[order[k % len(order)]] += 1
        k += 1
    while sum(base) > halves:
        i = max(range(len(base)), key=lambda j: base[j])
        base[i] -= 1
    return [b / 2 for b in base]


def with_points(problem: Any, points: float | None = None, minutes: float | None = None) -> Any:
    """The problem with its parts' points scaled to total ``points`` — in halves of a point, the
    rounding's remainder given to the largest parts, so the sheet prints 4.5, not 4.28571 — and its
    minutes scaled to total ``minutes``."""
    parts = problem.parts
    if points is not None:
        parts = [replace(p, points=v) for p, v in zip(parts, _shares([p.points for p in parts], points))]
    if minutes is not None:
        total = sum(p.minutes for p in parts)
        parts = [replace(p, minutes=round(p.minutes * minutes / total, 6)) for p in parts]
    return replace(problem, parts=parts)
