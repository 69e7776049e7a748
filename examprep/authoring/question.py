"""Question files: an instructor's own question in TOML, drawn from a seed and computed by a solve
topic, so it has the engine's worked steps, the answers' known mistakes and ECF rules (declared once
beside the topic's steps in ``solve/<area>.py``) like every built-in problem.

    [question]
    id = "softmax-by-hand"
    title = "Softmax of three logits"
    solve = "cross-entropy"                  # an `examprep solve` topic (optional: written parts only)
    text = "A classifier outputs the logits {logits} for one example of class {target}."
    where = "distinct(logits)"               # redraw until it holds (see authoring/expr.py)

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
fixed. A parameter that the topic does not take may still be drawn for the text or the condition.
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

from examprep.authoring import expr
from examprep import tomllines
from examprep.errors import ExamprepError, ParamError

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
    value: str = ""                # a computed part: its expression (authoring/expr.py) over parameters and answers
    value_line: int | None = None
    choices: tuple[str, ...] = ()  # a choice part: its options as written, and the correct one
    correct: str = ""
    mistakes: tuple["MistakeSpec", ...] = ()


@dataclass(frozen=True)
class MistakeSpec:
    """An author's own mistake on a part: its value by an expression, by the topic computed with
    other parameters (``params``: a convention, a reduction…), or both (the expression over the
    answers so computed); on a choice part, the wrong option chosen. ``why`` is the feedback shown."""

    id: str
    why: str
    value: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    choice: str = ""
    credit: float = 0.0
    line: int | None = None


@dataclass(frozen=True)
class QuestionTest:
    """A question test: the answer ``answer`` to part ``part`` of the variant ``seed`` gets ``verdict``
    (correct, wrong, partial) or is diagnosed as the mistake ``mistake``."""

    seed: int
    part: str
    answer: Any
    verdict: str = ""
    mistake: str = ""
    line: int | None = None


VERDICTS = ("correct", "wrong", "partial")


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
_MISTAKE_KEYS = {"id": str, "why": str, "value": str, "params": dict, "choice": str, "credit": (int, float)}
_TEST_KEYS = {"seed": int, "part": str, "answer": (str, int, float, list), "verdict": str, "mistake": str}
_DRAW_KEYS = {"integers": {"integers", "size", "nonzero", "name"}, "choice": {"choice", "size", "name"},
              "decimals": {"decimals", "step", "size", "nonzero", "name"}, "value": {"value", "name"}}


def _line(text: str, key: str, table: str | None = None, index: int = 0) -> int | None:
    from examprep.tomllines import line_of

    return line_of(text, key, table, index)


def load_question(path: str | Path) -> QuestionSpec:
    """A question file read and checked (QuestionError naming the file, line and key)."""
    from examprep.fileio import read_user_text

    text = read_user_text(Path(path), str(path), error=QuestionError)
    return parse_question(text, str(path))


def parse_question(text: str, source: str) -> QuestionSpec:
    """A question from TOML text; ``source`` names it in messages. Checks everything that can be
    checked without drawing: keys and their types, the topic, answer names, tolerances, draws,
    placeholders, the condition's syntax and names, the topic's required parameters."""
    from examprep import solve
    from examprep.answers import parse_tolerance

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
            raise fail(f"[question] {key}: expected {_what(_QUESTION_KEYS[key])}, got {value!r}",
                       line or _line(text, "", f"question.{key}"))
        if key not in ("part", "params"):     # checked below, each with its own line
            _printable_text(f"[question] {key}", key, value, lambda m, ln=line: fail(m, ln))
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
        _printable_text(f"[question.params] {name}", name, spec, lambda m, ln=line: fail(m, ln))
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
                raise fail(f"{where} {key}: expected {_what(want)}, got {value!r}", line)
            if key != "mistake":          # each mistake's keys are checked with their own lines
                _printable_text(f"{where} {key}", key, value, lambda m, ln=line: fail(m, ln))
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
            choices = _choices(p, where, at, fail)
            correct = p.get("correct")
            if correct is None:
                raise fail(f"{where} correct: name the correct one of the choices, e.g. correct = {choices[0]!r}", head)
            if correct.strip() not in choices:
                raise fail(f"{where} correct: {correct!r} is not one of the choices ({'; '.join(choices)})",
                           at("correct"))
            mistakes = _mistakes(text, p, where, mistake_heads, head, fail, kind="choice", choices=choices,
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
                _expression(value, f"{where} value", params, topic, at("value"), fail)
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
            declared = {m.id for m in topic.mistakes.get(answer, ())} if topic is not None and answer else set()
            mistakes = _mistakes(text, p, where, mistake_heads, head, fail, kind="answer", params=params, topic=topic,
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
    tests = _tests(text, q.get("test", []), parts, topic, fail)
    digest = hashlib.blake2b(text.encode(), digest_size=6).hexdigest()
    return QuestionSpec(qid, title, topic.name if topic else None, q.get("text", ""), where_text, params, tuple(parts),
                        source, digest, lines, text_sha256(text), tests)


def _check_keys(table: Any, known: dict, where: str, head: int | None, line_of: Any, fail: Any) -> None:
    """A [[…]] table's keys known and of their types, each string printable on one line."""
    if not isinstance(table, dict):
        raise fail(f"{where}: expected a table", head)
    for key, value in table.items():
        line = line_of(key) or head
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; known keys: {', '.join(sorted(known))}"
            raise fail(f"{where}: unknown key {key!r}{hint}", line)
        want = known[key]
        if not isinstance(value, want) or isinstance(value, bool):
            raise fail(f"{where} {key}: expected {_what(want)}, got {value!r}", line)
        _printable_text(f"{where} {key}", key, value, lambda m, ln=line: fail(m, ln))


def _expression(source_text: str, what: str, params: dict[str, Draw], topic: Any, line: int | None, fail: Any) -> None:
    """Refuse an expression outside the language or naming something that is neither a parameter
    nor an answer of the topic (the names a computed part or a mistake may read)."""
    try:
        read = expr.names(source_text)
    except expr.ExprError as err:
        raise fail(f"{what}: {err}", line) from None
    answers = list(topic.answers) if topic is not None else []
    for name in sorted(read):
        if name in params and name in answers:
            raise fail(f"{what}: {name!r} is both a parameter and an answer of {topic.name}; rename the parameter",
                       line)
        if name not in params and name not in answers:
            known = list(params) + answers
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise fail(f"{what}: unknown name {name!r}; {hint}it may read the parameters "
                       f"({', '.join(params) or 'none'})" + (f" and the answers of {topic.name} ({', '.join(answers)})"
                                                            if topic is not None else ""), line)


def _choices(p: dict, where: str, at: Any, fail: Any) -> tuple[str, ...]:
    """A choice part's options: two to 26 different texts (told apart as a student types them)."""
    from examprep.answers.read import norm_choice

    raw = p.get("choices")
    if raw is None:
        raise fail(f"{where} choices: a choice part lists its options, e.g. choices = [\"ReLU\", \"tanh\"]", at("kind"))
    if not 2 <= len(raw) <= 26 or not all(isinstance(c, str) and c.strip() for c in raw):
        raise fail(f"{where} choices: two to 26 non-empty texts, got {raw!r}", at("choices"))
    seen: dict[str, str] = {}
    for c in raw:
        if norm_choice(c) in seen:
            raise fail(f"{where} choices: {c!r} is listed twice (as {seen[norm_choice(c)]!r})", at("choices"))
        seen[norm_choice(c)] = c
    return tuple(c.strip() for c in raw)


def _mistakes(text: str, p: dict, where: str, indexes: list[int], head: int | None, fail: Any, *, kind: str,
              choices: tuple[str, ...] = (), correct: str = "", params: dict[str, Draw] | None = None,
              topic: Any = None, declared: set[str] | frozenset = frozenset()) -> tuple[MistakeSpec, ...]:
    """A part's [[question.part.mistake]] tables, checked: an id of its own (not one the topic's
    table already declares for the answer), the feedback, and how the mistaken value is made."""
    out: list[MistakeSpec] = []
    for k, (m, index) in enumerate(zip(p.get("mistake", []), indexes)):
        what = f"{where} mistake {k + 1}"
        mhead = _line(text, "", "question.part.mistake", index) or head

        def at(key: str, index: int = index, mhead: int | None = mhead) -> int | None:
            return _line(text, key, "question.part.mistake", index) or mhead

        _check_keys(m, _MISTAKE_KEYS, what, mhead, at, fail)
        mid = m.get("id", "").strip()
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}", mid):
            raise fail(f"{what} id: letters, digits, '-', '_' and '.', e.g. id = \"max-logit\", got {mid!r}", at("id"))
        if mid in declared or any(o.id == mid for o in out):
            raise fail(f"{what} id: {mid!r} is already a mistake of this part; give this one another id", at("id"))
        why = m.get("why", "").strip()
        if not why:
            raise fail(f"{what} why: the feedback a student reads, e.g. why = \"You took the largest logit.\"", mhead)
        credit = float(m.get("credit", 0.0))
        if not 0 <= credit < 1:
            raise fail(f"{what} credit: the fraction of the points it earns, from 0 to below 1, got {credit:g}",
                       at("credit"))
        if kind == "choice":
            for key in ("value", "params"):
                if key in m:
                    raise fail(f"{what} {key}: a choice part's mistake is a wrong choice (choice = \"…\")", at(key))
            choice = m.get("choice", "").strip()
            if choice not in choices:
                raise fail(f"{what} choice: {choice!r} is not one of the choices ({'; '.join(choices)})",
                           at("choice") if "choice" in m else mhead)
            if choice == correct:
                raise fail(f"{what} choice: {choice!r} is the correct choice, not a mistake", at("choice"))
            out.append(MistakeSpec(mid, why, choice=choice, credit=credit, line=mhead))
            continue
        if "choice" in m:
            raise fail(f"{what} choice: only a choice part's mistake names a choice", at("choice"))
        if "value" not in m and "params" not in m:
            raise fail(f"{what}: give value = \"expression\" (the mistaken value) or params = {{ … }} (the topic "
                       "computed with other parameters)", mhead)
        if "value" in m:
            _expression(m["value"], f"{what} value", params or {}, topic, at("value"), fail)
        changed = m.get("params", {})
        if changed:
            if topic is None:
                raise fail(f"{what} params: the question has no solve topic to compute with them", at("params"))
            names = [tp.name for tp in topic.params]
            for name, v in changed.items():
                if name not in names:
                    raise fail(f"{what} params: {topic.name} takes no parameter {name!r}; its parameters: "
                               f"{', '.join(names)}", at("params"))
                if isinstance(v, dict):
                    raise fail(f"{what} params: {name} is a value, not a draw", at("params"))
        out.append(MistakeSpec(mid, why, m.get("value", ""), dict(changed), credit=credit, line=mhead))
    return tuple(out)


def _tests(text: str, raw: list, parts: list[PartSpec], topic: Any, fail: Any) -> tuple[QuestionTest, ...]:
    """The file's [[question.test]] tables, checked against its parts (run by `examprep check`)."""
    from examprep.answers.read import norm_choice

    out = []
    by_id = {s.id: s for s in parts}
    for i, t in enumerate(raw):
        what = f"test {i + 1}"
        head = _line(text, "", "question.test", i)

        def at(key: str, i: int = i, head: int | None = head) -> int | None:
            return _line(text, key, "question.test", i) or head

        _check_keys(t, _TEST_KEYS, what, head, at, fail)
        for key in ("seed", "part", "answer"):
            if key not in t:
                raise fail(f"{what}: missing {key} (a test has seed, part, answer and a verdict or a mistake)", head)
        if t["seed"] < 0:
            raise fail(f"{what} seed: a non-negative integer, as in `examprep generate FILE --seed N`, got "
                       f"{t['seed']}", at("seed"))
        part = by_id.get(t["part"])
        if part is None:
            raise fail(f"{what} part: the question has no part {t['part']!r}; its parts: {', '.join(by_id)}",
                       at("part"))
        if part.kind == "written":
            raise fail(f"{what} part: {part.id} is a written part, marked by hand: a test cannot grade it", at("part"))
        if ("verdict" in t) == ("mistake" in t):
            raise fail(f"{what}: give one of verdict = \"correct\" | \"wrong\" | \"partial\" and mistake = \"ID\"",
                       head)
        if "verdict" in t and t["verdict"] not in VERDICTS:
            raise fail(f"{what} verdict: one of {', '.join(VERDICTS)}, got {t['verdict']!r}", at("verdict"))
        if "mistake" in t:
            ids = [m.id for m in part.mistakes]
            if part.kind == "answer" and part.answer and topic is not None:
                ids += [m.id for m in topic.mistakes.get(part.answer, ())]
            if t["mistake"] not in ids:
                raise fail(f"{what} mistake: part {part.id} declares no mistake {t['mistake']!r}; its mistakes: "
                           f"{', '.join(ids) or 'none'}", at("mistake"))
        answer = t["answer"]
        if part.kind == "choice":
            labels = [chr(ord("a") + k) for k in range(len(part.choices))]
            if not isinstance(answer, str) or (norm_choice(answer) not in {norm_choice(c) for c in part.choices}
                                               and norm_choice(answer) not in labels):
                raise fail(f"{what} answer: {answer!r} is not one of the choices of part {part.id} "
                           f"({'; '.join(part.choices)})", at("answer"))
        out.append(QuestionTest(t["seed"], part.id, answer, t.get("verdict", ""), t.get("mistake", ""), head))
    return tuple(out)


def text_sha256(text: str) -> str:
    """The SHA-256 (hex) of a question file's text as UTF-8: a review card's content hash."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# The keys whose text is printed over several lines (a statement, a prompt, a model answer): a line
# break or tab is text there; every other string (title, ids, rubric lines, parameter values) is
# printed on one line of the sheet, its answer files and exports.
_MULTILINE = {"text", "where", "prompt", "model_answer", "hint"}


def _printable_text(what: str, key: str, value: Any, fail: Any) -> None:
    """Refuse a string of the file (nested in lists and tables too) holding a character that no
    sheet, answer file or export (XML refuses them) can print: the rule recipes' titles and
    --title follow (answers.files.unprintable_char), line breaks and tabs allowed where text runs
    over several lines."""
    from examprep.answers.files import unprintable_char

    if isinstance(value, dict):
        for v in value.values():
            _printable_text(what, key, v, fail)
    elif isinstance(value, list):
        for v in value:
            _printable_text(what, key, v, fail)
    elif isinstance(value, str):
        multiline = key in _MULTILINE
        bad = unprintable_char(value, "\n\t" if multiline else "")
        if bad is not None:
            raise fail(f"{what}: a control character ({bad!r}) cannot be printed in the sheet, its answer files "
                       "and exports; remove it" if multiline else
                       f"{what}: a line break or control character ({bad!r}) cannot be printed in one line of the "
                       "sheet, its answer files and exports; write it on one line")


def _what(t: Any) -> str:
    names = {str: "a string", dict: "a table", list: "a list", (int, float): "a number"}
    return names.get(t, str(t))


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
    from examprep.generators import Stream

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
