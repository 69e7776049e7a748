"""The concept bank: recall questions from the lectures (examprep/bank/concepts.toml), validated when
read, and each turned into a one-part Problem whose choices are shuffled by its seed."""
from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from examprep.answers import parse_tolerance
from examprep.document import Text as TextBlock
from examprep.errors import ExamprepError
from examprep.fileio import read_user_text
from examprep.problem import EXACT, Misconception, Part, Problem, SolutionStep, Tolerance
from examprep.review import topic_item
from examprep.stream import Stream
from examprep.values import fmt_number

CONCEPT_TOPICS = ("rnn", "attention", "transformer", "llm", "cnn", "training")
CONCEPT_KINDS = ("choice", "integer", "number")
# the facts the GRU/attention lecture asks students to know (its study checklist); every one is
# taught by at least one question (tests/quiz/test_concepts.py)
CHECKLIST = {
    "gate-counts": "gate counts of LSTM and GRU",
    "lstm-gru-io": "inputs and outputs of LSTM vs GRU",
    "sigmoid-tanh": "the roles of sigmoid and tanh",
    "sqrt-dk": "why scores are divided by √d_k",
    "positional-encoding": "why positional encodings",
    "causal-mask": "what the causal mask prevents",
    "teacher-forcing": "teacher forcing and the right shift",
    "cross-attention": "where Q and K, V come from in cross-attention",
    "enc-dec-stack": "the encoder and decoder stack",
    "bert-gpt": "BERT vs GPT",
    "scaling-laws": "what scaling laws predict",
    "lora": "LoRA's idea",
    "quadratic-cost": "attention's O(n²) cost and its remedies",
}
CONCEPT_PREFIX = "concept:"


class ConceptBankError(ExamprepError):
    """The concept bank (TOML) is malformed: the message names the file and the question."""

    exit_code = 1


@dataclass(frozen=True)
class Source:
    file: str
    section: str
    quote: str
    lecture: str

    def cite(self) -> str:
        return f"{self.lecture} › {self.section}"


@dataclass(frozen=True)
class Concept:
    """One recall question. ``answer``: the correct choice's index (kind "choice") or the value;
    ``mistakes``: (index or value, why) pairs for typical wrong answers."""

    id: str
    topic: str
    kind: str
    question: str
    answer: Any
    explanation: str
    source: Source
    choices: tuple[str, ...] = ()
    mistakes: tuple[tuple[Any, str], ...] = ()
    tolerance: Tolerance = EXACT
    note: str = ""
    recall: str = ""
    covers: tuple[str, ...] = ()
    hint: str = ""
    minutes: float = 0.75

    @property
    def item(self) -> str:
        return CONCEPT_PREFIX + self.id

    @property
    def stats_topic(self) -> str:
        return f"concepts/{self.topic}"


@dataclass(frozen=True)
class ConceptBank:
    version: int
    lectures: dict[str, str]
    questions: dict[str, Concept]
    path: str

    def topics(self) -> list[str]:
        return sorted({q.topic for q in self.questions.values()}, key=CONCEPT_TOPICS.index)


def _bank_file() -> Any:
    return resources.files("examprep") / "bank" / "concepts.toml"


def load_concepts(path: str | os.PathLike | None = None) -> ConceptBank:
    """Read and validate a concept bank (the packaged one by default).

    Raises ConceptBankError naming the question and the field for anything missing or invalid:
    every question needs an answer, an explanation and a source (file, section, verbatim quote).
    """
    where = str(path) if path is not None else "examprep/bank/concepts.toml"
    if path is None:
        text = _bank_file().read_text(encoding="utf-8")
    else:
        text = read_user_text(path, error=ConceptBankError, kind="concept bank")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConceptBankError(f"{where}: invalid TOML ({err})") from None
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise ConceptBankError(f"{where}: 'version' must be a positive integer")
    lectures = data.get("lectures", {})
    if not isinstance(lectures, dict) or not lectures:
        raise ConceptBankError(f"{where}: a [lectures] table must name each source file")
    questions: dict[str, Concept] = {}
    for n, q in enumerate(data.get("question", []), 1):
        concept = _concept(q, n, where, lectures)
        if concept.id in questions:
            raise ConceptBankError(f"{where}: question {n}: duplicate id {concept.id!r}")
        questions[concept.id] = concept
    if not questions:
        raise ConceptBankError(f"{where}: no [[question]] entries")
    return ConceptBank(version, dict(lectures), questions, where)


def _concept(q: dict, n: int, where: str, lectures: dict[str, str]) -> Concept:
    qid = q.get("id") if isinstance(q.get("id"), str) else f"#{n}"
    at = f"{where}: question {qid}"

    def text(key: str, required: bool = True) -> str:
        v = q.get(key, "")
        if not isinstance(v, str) or (required and not v.strip()):
            raise ConceptBankError(f"{at}: '{key}' must be a non-empty string")
        return v.strip()

    text("id")
    topic = text("topic")
    if topic not in CONCEPT_TOPICS:
        raise ConceptBankError(f"{at}: topic {topic!r} is not one of {', '.join(CONCEPT_TOPICS)}")
    kind = text("kind")
    if kind not in CONCEPT_KINDS:
        raise ConceptBankError(f"{at}: kind {kind!r} is not one of {', '.join(CONCEPT_KINDS)}")
    question, explanation = text("question"), text("explanation")
    source = q.get("source")
    if not isinstance(source, dict) or not all(isinstance(source.get(k), str) and source.get(k).strip()
                                               for k in ("file", "section", "quote")):
        raise ConceptBankError(f"{at}: 'source' needs file, section and quote (verbatim from the notes)")
    if source["file"] not in lectures:
        raise ConceptBankError(f"{at}: source file {source['file']!r} is not listed in [lectures]")
    src = Source(source["file"], source["section"], source["quote"], lectures[source["file"]])
    choices: tuple[str, ...] = ()
    if "answer" not in q:
        raise ConceptBankError(f"{at}: no 'answer'")
    raw_answer = q["answer"]
    if kind == "choice":
        choices = tuple(q.get("choices", ()))
        if len(choices) < 2 or len(set(choices)) != len(choices) or not all(isinstance(c, str) and c for c in choices):
            raise ConceptBankError(f"{at}: a choice question needs at least two distinct non-empty 'choices'")
        answer: Any = _choice_index(raw_answer, choices, at, "answer")
    elif kind == "integer":
        if not isinstance(raw_answer, int) or isinstance(raw_answer, bool):
            raise ConceptBankError(f"{at}: 'answer' must be an integer")
        answer = raw_answer
    else:
        if not isinstance(raw_answer, (int, float)) or isinstance(raw_answer, bool) or not math.isfinite(raw_answer):
            raise ConceptBankError(f"{at}: 'answer' must be a finite number")
        answer = float(raw_answer)
    tol = EXACT
    if kind == "number":
        t = q.get("tolerance", {"rule": "sigfigs", "value": 3})
        try:
            if isinstance(t, str):          # "sigfigs-strict:3", read by the one parser of tolerance text
                tol = parse_tolerance(t)
            else:
                tol = Tolerance(t["rule"], float(t["value"]), float(t.get("atol", 1e-9)))
            tol.bound(1.0)
        except ExamprepError as err:
            raise ConceptBankError(f"{at}: 'tolerance': {err}") from None
        except (KeyError, TypeError, ValueError):
            raise ConceptBankError(f"{at}: 'tolerance' must be {{ rule = \"sigfigs\" | \"sigfigs-strict\" | \"rtol\" | "
                                   "\"atol\", value = … } or text such as \"sigfigs-strict:3\"") from None
    mistakes = []
    for m in q.get("mistakes", ()):
        if not isinstance(m, dict) or "answer" not in m or not isinstance(m.get("why"), str) or not m["why"].strip():
            raise ConceptBankError(f"{at}: each mistake needs an 'answer' and a 'why'")
        value = _choice_index(m["answer"], choices, at, "mistake") if kind == "choice" else m["answer"]
        if value == answer:
            raise ConceptBankError(f"{at}: mistake {m['answer']!r} is the correct answer")
        mistakes.append((value, m["why"].strip()))
    covers = tuple(q.get("covers", ()))
    unknown = [c for c in covers if c not in CHECKLIST]
    if unknown:
        raise ConceptBankError(f"{at}: unknown 'covers' tag(s) {', '.join(unknown)}; known: {', '.join(CHECKLIST)}")
    minutes = q.get("minutes", 0.75)
    if not isinstance(minutes, (int, float)) or minutes <= 0:
        raise ConceptBankError(f"{at}: 'minutes' must be a positive number")
    return Concept(id=qid, topic=topic, kind=kind, question=question, answer=answer, explanation=explanation,
                   source=src, choices=choices, mistakes=tuple(mistakes), tolerance=tol,
                   note=text("note", required=False), recall=text("recall", required=False), covers=covers,
                   hint=text("hint", required=False), minutes=float(minutes))


def _choice_index(label: Any, choices: tuple[str, ...], at: str, what: str) -> int:
    labels = [Problem.label(i) for i in range(len(choices))]
    if not isinstance(label, str) or label not in labels:
        raise ConceptBankError(f"{at}: {what} {label!r} must be one of the labels {', '.join(labels)}")
    return labels.index(label)


def concept_problem(concept: Concept, seed: int, bank_version: int = 1) -> Problem:
    """A concept question as a one-part Problem; choices shown in an order drawn from ``seed``
    (relabelled a, b, c, …), so a review cannot be answered by remembering a letter."""
    part_kw: dict[str, Any] = {}
    statement: list = [TextBlock(concept.question)]
    order: list[int] = []
    if concept.kind == "choice":
        order = Stream("concept", concept.id, seed).shuffle(range(len(concept.choices)))
        labels = tuple(Problem.label(i) for i in range(len(order)))
        statement += [TextBlock(f"{labels[pos]}) {concept.choices[orig]}") for pos, orig in enumerate(order)]
        expected: Any = labels[order.index(concept.answer)]
        # ids name the question and the mistake, never a letter (the letters are shuffled)
        mis = tuple(Misconception(f"{concept.id}#{k}", labels[order.index(orig)], why)
                    for k, (orig, why) in enumerate(concept.mistakes, 1))
        answer_text = f"{expected}) {concept.choices[concept.answer]}"
        part_kw["choices"] = labels
        kind = "choice"
    else:
        expected = concept.answer
        kind = concept.kind
        mis = tuple(Misconception(f"{concept.id}#{k}", float(v) if kind == "number" else int(v), why)
                    for k, (v, why) in enumerate(concept.mistakes, 1))
        answer_text = fmt_number(expected, 6)
    hint = concept.hint or f"See “{concept.source.section}” in {concept.source.lecture}."
    part = Part(id="answer", prompt="Your answer.", kind=kind, expected=expected, tolerance=concept.tolerance,
                points=1.0, minutes=concept.minutes, misconceptions=mis, hint=hint, **part_kw)
    solution = [SolutionStep("Answer", [TextBlock(answer_text)], "answer"),
                SolutionStep("Why", [TextBlock(concept.explanation)])]
    if concept.note:
        solution.append(SolutionStep("Where the notes are loose", [TextBlock(concept.note)]))
    quote = concept.source.quote.replace("\\(", "$").replace("\\)", "$")    # the notes' \( … \) math, for display
    solution.append(SolutionStep("Source", [TextBlock(f"{concept.source.cite()}: “{quote}”")]))
    return Problem(generator=concept.item, version=bank_version, seed=seed, difficulty=1,
                   title=f"Concept · {concept.topic}", params={"id": concept.id, "order": order},
                   statement=statement, parts=[part], solution=solution)


def is_concept(problem: Problem) -> bool:
    return problem.generator.startswith(CONCEPT_PREFIX)


def item_of(problem: Problem) -> str:
    return problem.generator if is_concept(problem) else topic_item(problem.generator)


def stats_topic_of(problem: Problem, bank: ConceptBank | None = None) -> str:
    if is_concept(problem):
        qid = problem.generator[len(CONCEPT_PREFIX):]
        if bank and qid in bank.questions:
            return bank.questions[qid].stats_topic
        return "concepts"
    return problem.generator



_BANK_CACHE: dict[str, ConceptBank] = {}


def packaged_bank() -> ConceptBank:
    """The concept bank shipped with examprep, read once."""
    if "default" not in _BANK_CACHE:
        _BANK_CACHE["default"] = load_concepts()
    return _BANK_CACHE["default"]
