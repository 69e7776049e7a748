"""What an author adds to a question beyond its solve topic, read and checked: a part's own mistakes
([[question.part.mistake]]), a choice part's options, the question's tests ([[question.test]]) and
the expressions computed parts and mistakes use — each refused in one line naming the file, the line
and the field. Also the checks every table of a question file shares (known keys, their types,
printable text)."""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from examprep.answers.files import unprintable_char
from examprep.answers.read import norm_choice
from examprep import expr
from examprep.tomllines import line_of as _line


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


MISTAKE_KEYS = {"id": str, "why": str, "value": str, "params": dict, "choice": str, "credit": (int, float)}
TEST_KEYS = {"seed": int, "part": str, "answer": (str, int, float, list), "verdict": str, "mistake": str}


def check_keys(table: Any, known: dict, where: str, head: int | None, line_of: Any, fail: Any) -> None:
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
            raise fail(f"{where} {key}: expected {what_type(want)}, got {value!r}", line)
        printable_text(f"{where} {key}", key, value, lambda m, ln=line: fail(m, ln))


def check_expression(source_text: str, what: str, params: dict[str, Any], topic: Any, line: int | None, fail: Any) -> None:
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


def read_choices(p: dict, where: str, at: Any, fail: Any) -> tuple[str, ...]:
    """A choice part's options: two to 26 different texts (told apart as a student types them)."""
    raw = p.get("choices")
    if raw is None:
        raise fail(f"{where} choices: a choice part lists its options, e.g. choices = [\"ReLU\", \"tanh\"]", at("kind"))
    if not 2 <= len(raw) <= 26 or not all(isinstance(c, str) and c.strip() for c in raw):
        raise fail(f"{where} choices: two to 26 non-empty texts, got {raw!r}", at("choices"))
    seen: dict[str, str] = {}
    for c in raw:
        if re.fullmatch(r"[a-z]", norm_choice(c)) or ")" in c and re.fullmatch(r"[a-z]", norm_choice(c.split(")")[0])):
            # the student answers with a label a, b, c, … and an option "a" may show as label b: grade
            # reads "a", "(a)" and "a) …" as the label a, so no option may be written as one
            raise fail(f"{where} choices: {c!r} reads as a label: a student answers with the label (a, b, c, …) "
                       "the option has in the variant, so no option may be one letter or begin with one and ')'; "
                       "write it as words, e.g. \"option A\"", at("choices"))
        if norm_choice(c) in seen:
            raise fail(f"{where} choices: {c!r} is listed twice (as {seen[norm_choice(c)]!r})", at("choices"))
        seen[norm_choice(c)] = c
    return tuple(c.strip() for c in raw)


def read_mistakes(text: str, p: dict, where: str, indexes: list[int], head: int | None, fail: Any, *, kind: str,
              choices: tuple[str, ...] = (), correct: str = "", params: dict[str, Any] | None = None,
              topic: Any = None, declared: set[str] | frozenset = frozenset()) -> tuple[MistakeSpec, ...]:
    """A part's [[question.part.mistake]] tables, checked: an id of its own (not one the topic's
    table already declares for the answer), the feedback, and how the mistaken value is made."""
    out: list[MistakeSpec] = []
    for k, (m, index) in enumerate(zip(p.get("mistake", []), indexes)):
        what = f"{where} mistake {k + 1}"
        mhead = _line(text, "", "question.part.mistake", index) or head

        def at(key: str, index: int = index, mhead: int | None = mhead) -> int | None:
            return _line(text, key, "question.part.mistake", index) or mhead

        check_keys(m, MISTAKE_KEYS, what, mhead, at, fail)
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
            check_expression(m["value"], f"{what} value", params or {}, topic, at("value"), fail)
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


def read_tests(text: str, raw: list, parts: list[Any], topic: Any, fail: Any) -> tuple[QuestionTest, ...]:
    """The file's [[question.test]] tables, checked against its parts (run by `examprep check`)."""
    out = []
    by_id = {s.id: s for s in parts}
    for i, t in enumerate(raw):
        what = f"test {i + 1}"
        head = _line(text, "", "question.test", i)

        def at(key: str, i: int = i, head: int | None = head) -> int | None:
            return _line(text, key, "question.test", i) or head

        check_keys(t, TEST_KEYS, what, head, at, fail)
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


# The keys whose text is printed over several lines (a statement, a prompt, a model answer): a line
# break or tab is text there; every other string (title, ids, rubric lines, parameter values) is
# printed on one line of the sheet, its answer files and exports.
MULTILINE = {"text", "where", "prompt", "model_answer", "hint"}


def printable_text(what: str, key: str, value: Any, fail: Any) -> None:
    """Refuse a string of the file (nested in lists and tables too) holding a character that no
    sheet, answer file or export (XML refuses them) can print: the rule recipes' titles and
    --title follow (answers.files.unprintable_char), line breaks and tabs allowed where text runs
    over several lines."""
    if isinstance(value, dict):
        for v in value.values():
            printable_text(what, key, v, fail)
    elif isinstance(value, list):
        for v in value:
            printable_text(what, key, v, fail)
    elif isinstance(value, str):
        multiline = key in MULTILINE
        bad = unprintable_char(value, "\n\t" if multiline else "")
        if bad is not None:
            raise fail(f"{what}: a control character ({bad!r}) cannot be printed in the sheet, its answer files "
                       "and exports; remove it" if multiline else
                       f"{what}: a line break or control character ({bad!r}) cannot be printed in one line of the "
                       "sheet, its answer files and exports; write it on one line")


def what_type(t: Any) -> str:
    names = {int: "a whole number", str: "a string", dict: "a table", list: "a list", (int, float): "a number"}
    return names.get(t, str(t))
