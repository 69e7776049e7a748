"""The interactive session: practice quiz, timed exam, spaced review, and their reports.

A session is a list of Problems (generated ones, or concept questions turned into one-part
Problems) answered part by part at a prompt. Every answer goes through the grading engine
(examprep.answers: the same parser, tolerances, error carried forward and misconception
matching as `examprep grade`), and every answered part is stored in the history at once, so an
interrupted session loses nothing. After each problem the topic's review card is updated (FSRS,
examprep.review).

At a prompt: ``?`` a hint (twice: the formula), ``s`` the worked solution (the problem's
unanswered parts count as revealed), ``skip`` leave the part blank, ``q`` end the session.
An answer that cannot be read is explained and asked again; it never costs the attempt.

Modes
  quiz    feedback after every part; the worked solution on request after every problem
  exam    a recipe's (or the topics') problems, no feedback until the end, time shown at every
          prompt; when time runs out the answers are submitted; then a graded report
  review  the items the review schedule says are due, each topic with a new variant
"""
from __future__ import annotations

import math
import os
import random
import re
import secrets
import signal
import sys
import threading
import time
import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable

from examprep.document import Text as TextBlock
from examprep.errors import ExamprepError, ParamError
from examprep.history import Attempt, History
from examprep.problem import EXACT, Misconception, Part, Problem, SolutionStep, Tolerance

# ============================================================================ the concept bank

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
    src = Path(path) if path is not None else _bank_file()
    where = str(path) if path is not None else "examprep/bank/concepts.toml"
    try:
        data = tomllib.loads(src.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ConceptBankError(f"{where}: cannot read the concept bank ({err})") from None
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
                from examprep.answers import parse_tolerance

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
    labels = [chr(97 + i) for i in range(len(choices))]
    if not isinstance(label, str) or label not in labels:
        raise ConceptBankError(f"{at}: {what} {label!r} must be one of the labels {', '.join(labels)}")
    return labels.index(label)


def concept_problem(concept: Concept, seed: int, bank_version: int = 1) -> Problem:
    """A concept question as a one-part Problem; choices shown in an order drawn from ``seed``
    (relabelled a, b, c, …), so a review cannot be answered by remembering a letter."""
    from examprep.generators import Stream

    part_kw: dict[str, Any] = {}
    statement: list = [TextBlock(concept.question)]
    order: list[int] = []
    if concept.kind == "choice":
        order = Stream("concept", concept.id, seed).shuffle(range(len(concept.choices)))
        labels = tuple(chr(97 + i) for i in range(len(order)))
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
        answer_text = _fmt(expected)
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


def _fmt(v: Any) -> str:
    from examprep.render.terminal import fmt_number

    return fmt_number(v, 6)


def is_concept(problem: Problem) -> bool:
    return problem.generator.startswith(CONCEPT_PREFIX)


def item_of(problem: Problem) -> str:
    from examprep.review import topic_item

    return problem.generator if is_concept(problem) else topic_item(problem.generator)


def stats_topic_of(problem: Problem, bank: ConceptBank | None = None) -> str:
    if is_concept(problem):
        qid = problem.generator[len(CONCEPT_PREFIX):]
        if bank and qid in bank.questions:
            return bank.questions[qid].stats_topic
        return "concepts"
    return problem.generator


# ===================================================================================== input

class TimeUp(Exception):
    """The exam's time ran out while a prompt was waiting."""


class Quit(Exception):
    """The student typed q (or the input ended)."""


COMMANDS = {"?": "hint", "hint": "hint", "s": "solution", "solution": "solution", "skip": "skip",
            "q": "quit", "quit": "quit", "exit": "quit"}


class Terminal:
    """Where a session reads and writes. On a TTY: rich prompts with line editing; otherwise
    plain prompts, and each answer read is echoed so a piped transcript reads like a session."""

    def __init__(self, *, no_color: bool = False, interactive: bool | None = None, width: int | None = None):
        from examprep.render import terminal

        self.console = terminal.console(no_color)
        if width is not None:
            self.console.width = width
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        if self.interactive:
            try:
                import readline  # noqa: F401  (line editing and history for input())
            except ImportError:  # pragma: no cover - not on every platform
                pass

    def show(self, *renderables: Any, **kw: Any) -> None:
        self.console.print(*renderables, **kw)

    def ask(self, prompt: str, *, timeout: float | None = None) -> str:
        """One line from the student (stripped). Raises EOFError at the end of input,
        TimeUp when ``timeout`` seconds pass first (an exam's deadline)."""
        if timeout is not None and timeout <= 0:
            raise TimeUp()
        with _alarm(timeout):
            if self.interactive:
                line = input(self._readline_prompt(prompt))
            else:
                self.console.print(prompt, end="", markup=False, highlight=False)
                raw = sys.stdin.readline()
                if raw == "":
                    self.console.print()
                    raise EOFError
                line = raw.rstrip("\r\n")
                # the echo shows control characters escaped: piped text must not drive the terminal
                shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in line)
                self.console.print(shown, markup=False, highlight=False)
        return line.strip()


    def _readline_prompt(self, prompt: str) -> str:
        """The prompt as the terminal shows it (bold, unless colour is off), given to input() itself.

        rich's console.input prints the prompt and then calls input(""), so readline believed
        the cursor was at the start of the line: Enter on an empty line then printed no newline
        and the next message or panel began on the prompt's line. The escape codes are wrapped
        in \\001…\\002 so readline does not count them as columns."""
        from rich.text import Text

        with self.console.capture() as captured:
            self.console.print(Text(prompt, style="bold"), end="", markup=False, highlight=False)
        shown = captured.get()
        if "readline" in sys.modules:
            shown = re.sub(r"(\x1b\[[0-9;]*[A-Za-z])", "\x01\\1\x02", shown)
        return shown


class _alarm:
    """Raise TimeUp in the main thread after ``seconds`` (SIGALRM); a no-op where there is no
    SIGALRM or off the main thread (the deadline is then checked after each answer)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.armed = False

    def __enter__(self) -> "_alarm":
        if (self.seconds is not None and hasattr(signal, "setitimer")
                and threading.current_thread() is threading.main_thread()):
            def fire(signum: int, frame: Any) -> None:
                raise TimeUp()
            self.previous = signal.signal(signal.SIGALRM, fire)
            signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 0.001))
            self.armed = True
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)


# ================================================================================= planning

DEFAULT_COUNT = 10


@dataclass
class QuizOptions:
    """What a session draws. ``topics``: generator names (or, with ``concepts``, concept sections);
    ``difficulty`` None adapts per topic to the history; ``seed`` None draws new variants."""

    topics: list[str] = field(default_factory=list)
    count: int | None = None    # None: 10 problems; in an exam, one per topic
    difficulty: int | None = None
    seed: int | None = None
    calculator_free: bool = False
    concepts: bool = False
    mode: str = "quiz"          # quiz | exam | review
    minutes: float | None = None
    recipe: str | None = None


def validate(opts: QuizOptions) -> None:
    """Raise ParamError (exit 2) for an impossible option, before the session starts."""
    if opts.count is not None and not 1 <= opts.count <= 200:
        raise ParamError(f"--count: expected 1 to 200 problems, got {opts.count}")
    if opts.difficulty is not None and opts.difficulty not in (1, 2, 3):
        raise ParamError(f"--difficulty: expected 1, 2 or 3, got {opts.difficulty}")
    if opts.seed is not None and opts.seed < 0:
        raise ParamError(f"--seed: expected a non-negative integer, got {opts.seed}")
    if opts.minutes is not None and not (0 < opts.minutes <= 600):
        raise ParamError(f"--minutes: expected more than 0 and at most 600, got {opts.minutes:g}")


def _problem_fractions(attempts: list[Attempt]) -> dict[str, list[tuple[int | None, float]]]:
    """Per topic, the (difficulty, fraction scored) of each attempted problem, oldest first."""
    from examprep.history import problem_groups

    out: dict[str, list[tuple[int | None, float]]] = {}
    for g in problem_groups(attempts):
        possible = sum(a.max_score for a in g)
        out.setdefault(g[0].generator, []).append((g[0].difficulty, sum(a.score for a in g) / possible if possible else 0.0))
    return out


def adaptive_level(history_fractions: list[tuple[int | None, float]], levels: tuple[int, ...]) -> int:
    """The next level for a topic: start at the lowest; after the last three problems at the
    current level, move up when they averaged ≥ 80 %, down when ≤ 40 %."""
    lo, hi = min(levels), max(levels)
    if not history_fractions:
        return lo
    level = history_fractions[-1][0] or lo
    recent = [f for d, f in history_fractions[-3:] if d == level]
    if len(recent) == 3 and sum(recent) / 3 >= 0.8:
        level += 1
    elif recent and sum(recent) / len(recent) <= 0.4:
        level -= 1
    return min(max(level, lo), hi)


def weakness(fractions: list[float]) -> float:
    """How much a topic needs practice, 0–1: one minus its recent score, smoothed towards ½
    (a Beta(1, 1) prior), so an unseen topic counts as half-known."""
    recent = fractions[-10:]
    return 1.0 - (sum(recent) + 1.0) / (len(recent) + 2.0)


def pick_topics(candidates: list[str], count: int, rng: random.Random, weak: dict[str, float],
                due: set[str]) -> list[str]:
    """``count`` topics, drawn with weight 0.15 + weakness (doubled when due for review), never
    the same topic twice in a row when there is a choice."""
    out: list[str] = []
    for _ in range(count):
        pool = [t for t in candidates if not out or t != out[-1] or len(candidates) == 1]
        weights = [(0.15 + weak.get(t, 0.5)) * (2.0 if t in due else 1.0) for t in pool]
        out.append(rng.choices(pool, weights)[0])
    return out


def fresh_seed(used: set[int], rng: random.Random | None = None) -> int:
    """A seed not in ``used`` (a variant never attempted)."""
    while True:
        s = rng.randrange(1_000_000) if rng else secrets.randbelow(1_000_000)
        if s not in used:
            return s


def plan_problems(opts: QuizOptions, history: History | None, *, now: float) -> list[Problem]:
    """The problems of a quiz session: weak topics first, new variants, levels adapted.

    With ``opts.seed`` the problems are reproducible: topic order from the seed (given the
    history) and problem seeds seed, seed+1, …. Raises UnknownTopicError / ParamError.
    """
    from examprep import generators
    from examprep.review import due as due_cards

    gens = generators.load_all()
    if opts.topics:
        names = list(dict.fromkeys(generators.get_drawable(t, "the quiz").name for t in opts.topics))
    else:
        names = sorted(gens)
    if opts.calculator_free:
        lacking = [n for n in names if not gens[n].calculator_free]
        if opts.topics and lacking:
            raise ParamError(f"--calculator-free: {', '.join(lacking)} has no calculator-free variant")
        names = [n for n in names if gens[n].calculator_free]
    if opts.difficulty is not None:
        missing = [n for n in names if opts.difficulty not in gens[n].levels]
        if opts.topics and missing:
            raise ParamError(f"--difficulty: {', '.join(missing)} has no level {opts.difficulty}")
        names = [n for n in names if opts.difficulty in gens[n].levels]
    if not names:
        raise ParamError("no topic fits these options (see `examprep topics`)")
    attempts = history.attempts(kind="problem") if history else []
    fractions = _problem_fractions(attempts)
    weak = {n: weakness([f for _, f in fractions.get(n, [])]) for n in names}
    due = {c.name for c in due_cards(history, now=now) if c.kind == "topic"} if history else set()
    rng = random.Random(opts.seed) if opts.seed is not None else random.Random(secrets.randbits(64))
    chosen = pick_topics(names, opts.count or DEFAULT_COUNT, rng, weak, due)
    problems = []
    level_now: dict[str, int] = {}
    for i, name in enumerate(chosen):
        g = gens[name]
        level = opts.difficulty or level_now.get(name) or adaptive_level(fractions.get(name, []), g.levels)
        level_now[name] = level
        if opts.seed is not None:
            seed = opts.seed + i
        else:
            used = history.used_seeds(name, level, opts.calculator_free) if history else set()
            used |= {p.seed for p in problems if p.generator == name}
            seed = fresh_seed(used)
        problems.append(generators.build(name, seed, level, opts.calculator_free))
    return problems


def plan_concepts(opts: QuizOptions, bank: ConceptBank, history: History | None, *, now: float) -> list[Problem]:
    """Concept questions: the topics' (sections') questions, weakest and due first, each at most
    once per session; choices shuffled afresh. Raises ParamError for an unknown section."""
    import difflib

    from examprep.review import due as due_cards

    sections = bank.topics()
    for t in opts.topics:
        if t not in sections:
            close = difflib.get_close_matches(t, sections, n=2, cutoff=0.4)
            raise ParamError(f"--topic: no concept section {t!r}" + (f"; did you mean {', '.join(close)}?" if close
                                                                     else f"; sections: {', '.join(sections)}"))
    pool = [q for q in bank.questions.values() if not opts.topics or q.topic in opts.topics]
    attempts = history.attempts(kind="concept") if history else []
    scores: dict[str, list[float]] = {}
    for a in attempts:
        scores.setdefault(a.generator, []).append(a.score / a.max_score if a.max_score else 0.0)
    due = {c.item for c in due_cards(history, now=now) if c.kind == "concept"} if history else set()
    rng = random.Random(opts.seed) if opts.seed is not None else random.Random(secrets.randbits(64))
    # weighted sampling without replacement (Efraimidis–Spirakis keys u^(1/w))
    keyed = []
    for q in pool:
        w = (0.15 + weakness(scores.get(q.item, []))) * (2.0 if q.item in due else 1.0)
        keyed.append((rng.random() ** (1.0 / w), q.id))
    keyed.sort(reverse=True)
    chosen = [bank.questions[qid] for _, qid in keyed[:opts.count or DEFAULT_COUNT]]
    return [concept_problem(q, (opts.seed + i) if opts.seed is not None else rng.randrange(1_000_000), bank.version)
            for i, q in enumerate(chosen)]


def plan_review(history: History, bank: ConceptBank, *, count: int, now: float,
                calculator_free: bool = False) -> tuple[list[Problem], list[str]]:
    """The due items, most overdue first: a new variant for each topic (at its adaptive level),
    the question for each concept card. Returns (problems, items skipped because their generator
    or question no longer exists)."""
    from examprep import generators
    from examprep.review import due as due_cards

    gens = generators.load_all()
    fractions = _problem_fractions(history.attempts(kind="problem"))
    problems, skipped = [], []
    for card in due_cards(history, now=now)[:count]:
        if card.kind == "topic" and card.name in gens:
            g = gens[card.name]
            level = adaptive_level(fractions.get(card.name, []), g.levels)
            cf = calculator_free and g.calculator_free
            seed = fresh_seed(history.used_seeds(card.name, level, cf))
            problems.append(generators.build(card.name, seed, level, cf))
        elif card.kind == "concept" and card.name in bank.questions:
            problems.append(concept_problem(bank.questions[card.name], secrets.randbelow(1_000_000), bank.version))
        else:
            skipped.append(card.item)
    return problems, skipped


# ============================================================================ checking answers

def check(part: Part, raw: str, earlier: dict[str, Any]) -> Any:
    """The grading engine's verdict on one typed answer (error carried forward from the earlier
    parts' answers). Raises AnswerParseError when the text cannot be read."""
    from examprep.answers import check_part

    return check_part(part, raw, earlier, ecf=True)


def parse_only(part: Part, raw: str) -> Any:
    """Read an answer without judging it (exam mode); raises AnswerParseError."""
    from examprep.answers import parse_answer

    return parse_answer(part, raw)


def _is_unparseable(result: Any) -> bool:
    return getattr(result, "status", None) == "unparseable"


# ================================================================================ the session

@dataclass
class PartOutcome:
    part: Part
    answer: str
    status: str
    score: float
    misconception: str | None = None
    explanation: str = ""
    feedback: str = ""
    seconds: float = 0.0
    hints: int = 0


@dataclass
class ProblemOutcome:
    number: int
    problem: Problem
    topic: str
    parts: list[PartOutcome] = field(default_factory=list)
    seconds: float = 0.0
    complete: bool = False

    @property
    def score(self) -> float:
        return sum(p.score for p in self.parts)

    @property
    def points(self) -> float:
        return self.problem.points

    @property
    def hinted(self) -> bool:
        return any(p.hints for p in self.parts)

    @property
    def revealed(self) -> bool:
        return any(p.status == "revealed" for p in self.parts)


@dataclass
class Summary:
    mode: str
    outcomes: list[ProblemOutcome]
    seconds: float
    ended: str = "done"          # done | quit | interrupted | input-ended | time-up
    history_path: str | None = None
    saved: int = 0
    report: Any = None           # exam mode: the grading engine's result
    unreached: list[str] = field(default_factory=list)   # exam ended early: topics not reached, not recorded

    @property
    def exit_code(self) -> int:
        return 130 if self.ended == "interrupted" else 0


class Session:
    """Runs one session over a list of Problems. ``clock`` (monotonic seconds) and ``wall``
    (Unix seconds) are injectable for tests."""

    def __init__(self, term: Terminal, history: History | None, *, mode: str = "quiz",
                 bank: ConceptBank | None = None, options: dict[str, Any] | None = None,
                 clock: Callable[[], float] = time.monotonic, wall: Callable[[], float] = time.time,
                 minutes: float | None = None):
        self.term = term
        self.history = history
        self.mode = mode
        self.bank = bank
        self.clock = clock
        self.wall = wall
        self.started = clock()
        self.deadline = self.started + minutes * 60 if minutes else None
        self.session_id = history.start_session(mode, options or {}, now=wall()) if history else None
        self.saved = 0

    # ------------------------------------------------------------------------------- plumbing

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - self.clock()

    def ask(self, prompt: str) -> str:
        left = self.remaining()
        if left is not None:
            if left <= 0:
                raise TimeUp()
            prompt = f"[{fmt_clock(left)} left] {prompt}"
        line = self.term.ask(prompt, timeout=left)
        if self.deadline is not None and self.clock() > self.deadline:
            raise TimeUp()      # where no alarm could interrupt the prompt, the late answer is void
        return line

    def record(self, outcome: ProblemOutcome, part: PartOutcome) -> None:
        if self.history is None:
            return
        p = outcome.problem
        concept = is_concept(p)
        self.history.record(Attempt(
            kind="concept" if concept else "problem", topic=outcome.topic, item=item_of(p), generator=p.generator,
            version=p.version, part=part.part.id, answer=part.answer, status=part.status, score=part.score,
            max_score=part.part.points, seconds=round(part.seconds, 3), seed=p.seed, difficulty=p.difficulty,
            calculator_free=p.calculator_free, problem_no=outcome.number, misconception=part.misconception,
            feedback=part.explanation or part.feedback or None, hints=part.hints, mode=self.mode,
            time=self.wall(), session_id=self.session_id))
        self.saved += 1

    def schedule(self, outcome: ProblemOutcome) -> None:
        """Update the item's review card from how the problem went."""
        if self.history is None or not outcome.complete:
            return
        from examprep.review import rating, review

        fraction = outcome.score / outcome.points if outcome.points else 0.0
        r = rating(min(max(fraction, 0.0), 1.0), outcome.seconds, outcome.problem.minutes * 60,
                   hinted=outcome.hinted, revealed=outcome.revealed)
        review(self.history, item_of(outcome.problem), r, now=self.wall(), seconds=outcome.seconds,
               session_id=self.session_id)

    def finish(self, outcomes: list[ProblemOutcome], ended: str, report: Any = None,
               unreached: list[str] | None = None) -> Summary:
        if self.history is not None and self.session_id is not None:
            self.history.end_session(self.session_id, now=self.wall())
        return Summary(self.mode, outcomes, self.clock() - self.started, ended,
                       str(self.history.path) if self.history else None, self.saved, report, unreached or [])

    # ---------------------------------------------------------------------------- practice

    def run_practice(self, problems: Iterable[Problem]) -> Summary:
        """Quiz and review: feedback after every part; Ctrl-C keeps every answered part."""
        outcomes: list[ProblemOutcome] = []
        ended = "done"
        if self.term.interactive:
            self.term.show(_keys_line(), style="dim")
        try:
            for n, problem in enumerate(problems, 1):
                outcome = ProblemOutcome(n, problem, stats_topic_of(problem, self.bank))
                outcomes.append(outcome)
                self.practise(outcome)
                self.schedule(outcome)
        except Quit:
            ended = "quit"
        except EOFError:
            ended = "input-ended"
        except KeyboardInterrupt:
            ended = "interrupted"
            self.term.show()
        outcomes = [o for o in outcomes if o.parts]
        return self.finish(outcomes, ended)

    def practise(self, outcome: ProblemOutcome) -> None:
        from examprep.render import terminal

        problem = outcome.problem
        self.term.show(problem_panel(problem, outcome.number))
        earlier: dict[str, Any] = {}
        started = self.clock()
        try:
            for i, part in enumerate(problem.parts):
                result = self.answer_part(outcome, i, part, earlier)
                if result == "revealed":
                    terminal.print_worked_solution(problem, self.term.console)
                    now = self.clock()
                    for later in problem.parts[i:]:
                        po = PartOutcome(later, "", "revealed", 0.0, seconds=0.0)
                        outcome.parts.append(po)
                        self.record(outcome, po)
                    outcome.seconds = now - started
                    outcome.complete = True
                    self.term.show(problem_result(outcome))
                    return
        finally:
            outcome.seconds = self.clock() - started
        outcome.complete = True
        self.term.show(problem_result(outcome))
        if is_concept(problem):
            self.term.show(concept_explanation(problem))
            return
        while True:
            cmd = self.ask("Enter: next problem · s: worked solution · q: quit › ").lower()
            if cmd in ("", "n", "next"):
                return
            if cmd in ("s", "solution"):
                terminal.print_worked_solution(problem, self.term.console)
                return
            if cmd in ("q", "quit", "exit"):
                raise Quit()
            self.term.show(f"Type Enter, s or q (got {cmd!r}).", style="yellow", markup=False)

    def answer_part(self, outcome: ProblemOutcome, index: int, part: Part, earlier: dict[str, Any]) -> str:
        """Prompt for one part until it is answered, skipped or revealed; record it."""
        from examprep.answers import AnswerParseError

        problem = outcome.problem
        t0 = self.clock()
        hints = 0
        label = f"({chr(97 + index)})" if len(problem.parts) > 1 else "answer"
        prompt = f"{label} {part.form()} › "
        while True:
            raw = self.ask(prompt)
            cmd = COMMANDS.get(raw.lower())
            if cmd == "quit":
                raise Quit()
            if cmd == "hint":
                hints += 1
                self.term.show(hint_text(problem, part, hints), style="cyan", markup=False)
                continue
            if cmd == "solution":
                return "revealed"
            if cmd == "skip":
                earlier[part.id] = part.expected     # a gap does not break the chain after it
                po = PartOutcome(part, "", "blank", 0.0, seconds=self.clock() - t0, hints=hints)
                outcome.parts.append(po)
                self.record(outcome, po)
                self.term.show(part_feedback(po, show_expected=not is_concept(problem)))
                return "blank"
            if not raw:
                self.term.show("Type an answer, or ? for a hint, s for the solution, skip, q to quit.",
                               style="yellow", markup=False)
                continue
            try:
                result = check(part, raw, earlier)
            except AnswerParseError as err:
                self.term.show(f"Cannot read that: {err}. Try again (this does not count).", style="yellow", markup=False)
                continue
            problem_text = result.feedback if _is_unparseable(result) else wrong_shape(part, result.value, raw)
            if problem_text:
                self.term.show(f"Cannot read that: {problem_text}. Try again (this does not count).",
                               style="yellow", markup=False)
                continue
            if getattr(result, "value", None) is not None:
                earlier[part.id] = result.value
            mis = getattr(result, "misconception", None)
            po = PartOutcome(part, raw, result.status, float(result.score), misconception=mis.id if mis else None,
                             explanation=mis.explanation if mis else "", feedback=getattr(result, "feedback", "") or "",
                             seconds=self.clock() - t0, hints=hints)
            outcome.parts.append(po)
            self.record(outcome, po)
            self.term.show(part_feedback(po, show_expected=not is_concept(problem)))
            return po.status

    # -------------------------------------------------------------------------------- exam

    def run_exam(self, problems: list[Problem], *, title: str = "Exam") -> Summary:
        """All problems in order, no feedback; answers can be changed before submitting; time
        shown at every prompt and the answers submitted when it runs out. Then graded, stored
        and scheduled."""
        answers: dict[tuple[int, str], str] = {}
        seconds: dict[tuple[int, str], float] = {}
        reached: set[int] = set()        # problems with a part answered or left blank (Enter, skip)
        ended = "done"
        total = sum(p.points for p in problems)
        limit = f"{fmt_clock(self.remaining())}" if self.deadline is not None else "no time limit"
        self.term.show(exam_header(title, len(problems), total, limit))
        try:
            for n, problem in enumerate(problems, 1):
                self.term.show(problem_panel(problem, n))
                for i, part in enumerate(problem.parts):
                    self.exam_part(n, i, part, problems, answers, seconds)
                    reached.add(n)
            self.exam_review(problems, answers, seconds)
        except TimeUp:
            ended = "time-up"
            self.term.show()
            self.term.show("Time is up: your answers are submitted.", style="bold red")
        except Quit:
            ended = "quit"
        except EOFError:
            ended = "input-ended"
        except KeyboardInterrupt:
            ended = "interrupted"
            self.term.show()
            self.term.show("Interrupted: the answers given so far are submitted.", style="bold yellow")
        outcomes, report = self.grade_exam(problems, answers, seconds, reached)
        unreached = [stats_topic_of(p, self.bank) for n, p in enumerate(problems, 1) if n not in reached]
        return self.finish(outcomes, ended, report, unreached)

    def exam_part(self, n: int, i: int, part: Part, problems: list[Problem], answers: dict, seconds: dict) -> None:
        from examprep.answers import AnswerParseError

        t0 = self.clock()
        key = (n, part.id)
        label = f"{n}{chr(97 + i)}"
        while True:
            raw = self.ask(f"{label} {part.form()} › ")
            cmd = COMMANDS.get(raw.lower())
            if cmd == "quit":
                if self.confirm_submit(problems, answers):
                    raise Quit()
                continue
            if cmd in ("hint", "solution"):
                self.term.show("No hints or solutions during an exam: answer, `skip`, or q to submit.",
                               style="yellow", markup=False)
                continue
            if cmd == "skip" or not raw:
                answers.pop(key, None)
                break
            try:
                problem_text = wrong_shape(part, parse_only(part, raw), raw)
            except AnswerParseError as err:
                problem_text = str(err)
            if problem_text:
                self.term.show(f"Cannot read that: {problem_text}. Try again.", style="yellow", markup=False)
                continue
            answers[key] = raw
            break
        seconds[key] = seconds.get(key, 0.0) + self.clock() - t0

    def confirm_submit(self, problems: list[Problem], answers: dict) -> bool:
        blank = sum(len(p.parts) for p in problems) - len(answers)
        reply = self.ask(f"Submit now, with {blank} part(s) unanswered? [y/N] › ").lower()
        return reply in ("y", "yes")

    def exam_review(self, problems: list[Problem], answers: dict, seconds: dict) -> None:
        """Before submitting: change any answer by its label (e.g. 2b), or submit."""
        labels = {f"{n}{chr(97 + i)}": (n, i) for n, p in enumerate(problems, 1) for i in range(len(p.parts))}
        while True:
            self.term.show(answer_sheet(problems, answers))
            cmd = self.ask("Type a part (e.g. 1a) to change its answer, or Enter to submit › ").lower()
            if cmd in ("", "submit", "q", "quit"):
                return
            if cmd not in labels:
                self.term.show(f"No part {cmd!r}; parts are {', '.join(list(labels)[:4])}, …", style="yellow", markup=False)
                continue
            n, i = labels[cmd]
            self.term.show(problem_panel(problems[n - 1], n))
            self.exam_part(n, i, problems[n - 1].parts[i], problems, answers, seconds)

    def grade_exam(self, problems: list[Problem], answers: dict, seconds: dict,
                   reached: set[int] | None = None) -> tuple[list[ProblemOutcome], Any]:
        """Grade the submission with the grader (examprep.grading: error carried forward within
        a problem), store every part's attempt and update each topic's review card: for the
        problems in ``reached`` only (default all; reached: a part answered or left blank), as an
        exam ended early never got to the rest, which say nothing about the student (they went to
        the history as 0 %, failed and due). The grader's result still covers the whole exam, whose
        score is out of all its points. Returns (outcomes of the problems reached, the result)."""
        from examprep.grading import address, grade_submission

        submission = {address(n, pid): raw for (n, pid), raw in answers.items()}
        result = grade_submission(problems, submission, student_id="you")
        outcomes = []
        for pr in result.problems:
            if reached is not None and pr.number not in reached:
                continue
            outcome = ProblemOutcome(pr.number, pr.problem, stats_topic_of(pr.problem, self.bank), complete=True)
            for part, r in zip(pr.problem.parts, pr.parts):
                mis = r.misconception
                outcome.parts.append(PartOutcome(
                    part, answers.get((pr.number, part.id), ""), "wrong" if r.status == "unparseable" else r.status,
                    float(r.score), mis.id if mis else None, mis.explanation if mis else "", r.feedback or "",
                    seconds.get((pr.number, part.id), 0.0)))
                self.record(outcome, outcome.parts[-1])
            outcome.seconds = sum(p.seconds for p in outcome.parts)
            outcomes.append(outcome)
            self.schedule(outcome)
        return outcomes, result


def _keys_line() -> str:
    return "At a prompt: ? hint · s worked solution · skip · q quit. Ctrl-C ends the session and keeps your answers."


def hint_text(problem: Problem, part: Part, level: int) -> str:
    """First hint: the part's hint; second: the formula of its worked-solution step, cut before
    the first side that gives the answer away (see formula_hint)."""
    from examprep.document import Math
    from examprep.render.terminal import inline

    if level == 1 and part.hint:
        return "Hint: " + inline(part.hint)
    formulas = [formula_hint(part, b.latex) for s in problem.solution if s.part == part.id
                for b in s.blocks if isinstance(b, Math)]
    formulas = [f for f in formulas if f]
    if formulas:
        return "Formula: " + "   ".join(dict.fromkeys(formulas))
    if part.hint:
        return "Hint: " + inline(part.hint)
    return "No more hints for this part: type s for the worked solution."


_RELATION = re.compile(r"(=|<|>|\\(?:leq?|geq?|approx|neq?)(?![A-Za-z]))")
_UNSUB = {c: "_" + b for b, c in zip("0123456789aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")}


def _sides(latex: str) -> tuple[list[str], list[str]]:
    """A formula split at its top-level relations (=, <, >, \\le, \\approx, …): (sides, relations)."""
    sides, relations, depth, start = [], [], 0, 0
    i = 0
    while i < len(latex):
        c = latex[i]
        if c in "{(":
            depth += 1
        elif c in "})":
            depth -= 1
        elif depth == 0:
            m = _RELATION.match(latex, i)
            if m and not latex[max(i - 1, 0):i] == "\\":
                sides.append(latex[start:i])
                relations.append(m.group(0))
                i = start = m.end()
                continue
        i += 1
    sides.append(latex[start:])
    return sides, relations


def _gives_answer(part: Part, latex_side: str) -> bool:
    """Whether the grader would accept this side of a formula as the part's answer."""
    from examprep.render.latex import to_text

    text = to_text(latex_side).strip()
    text = re.sub(r"\s*\(at .*$", "", text)                   # "1/4 (at x = 0)": the value is what counts
    for candidate in dict.fromkeys([text, "".join(_UNSUB.get(c, c) for c in text).replace("·", "*")]):
        if not candidate:
            continue
        try:
            if getattr(check(part, candidate, {}), "status", "") == "correct":
                return True
        except Exception:                          # noqa: BLE001 - text that is not an answer reveals nothing
            continue
    return False


def formula_hint(part: Part, latex: str) -> str:
    """A worked step's formula as a hint for ``part``, never its answer: cut before the first side
    the grader would accept as the answer (a derivation's result, a value such as "= 1/4"); for an
    expression part only "left = first right-hand side" (its later sides lead straight to the answer).
    Empty when nothing but the left-hand side would remain."""
    from examprep.render.latex import to_text

    sides, relations = _sides(latex)
    keep = len(sides)
    if part.kind == "expression":
        keep = min(keep, 2)
    for i, side in enumerate(sides[:keep]):
        if _gives_answer(part, side):
            keep = i
            break
    if keep == 0 or (keep == 1 and len(sides) > 1):       # nothing, or a left-hand side alone
        return ""
    pieces = [sides[0]]
    for rel, side in zip(relations[:keep - 1], sides[1:keep]):
        pieces += [rel, side]
    return to_text("".join(pieces)).strip()


# =============================================================================== rendering

from examprep.render import plural  # noqa: E402  (one rule for "1 problem", "2 problems")


def fmt_clock(seconds: float | None) -> str:
    """h:mm:ss (or m:ss under an hour)."""
    if seconds is None:
        return "–"
    s = max(int(math.ceil(seconds)), 0)
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def fmt_duration(seconds: float) -> str:
    """A duration in words: 45 s, 3 min, 2 h 05 min, 3 d."""
    s = abs(seconds)
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{s / 60:.0f} min"
    if s < 86400:
        h, m = divmod(int(s // 60), 60)
        return f"{h} h {m:02d} min"
    return f"{s / 86400:.0f} d"


def problem_panel(problem: Problem, number: int) -> Any:
    """The problem as a rich panel (statement, conventions, parts with their form and tolerance)."""
    from rich import box
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    from examprep.render.terminal import block_renderable, inline

    body = [block_renderable(b) for b in problem.statement]
    if problem.conventions:
        body.append(Text("Conventions: " + "; ".join(f"{k}: {v}" for k, v in problem.conventions.items()), style="dim"))
    if not is_concept(problem):
        for i, part in enumerate(problem.parts):
            body.append(Text.assemble((f"({chr(97 + i)}) ", "bold"), inline(part.prompt)))
            body.append(Text(f"    {part.points:g} pt · {_short_form(part)} · {part.tolerance.describe()}", style="dim"))
        meta = (f"{problem.generator} · level {problem.difficulty} · seed {problem.seed}"
                + (" · calculator-free" if problem.calculator_free else "") + f" · {problem.points:g} pt")
    else:
        part = problem.parts[0]
        form = part.form() + ("" if part.kind == "choice" else f", {part.tolerance.describe()}")
        body.append(Text(f"Answer: {form}", style="dim"))
        meta = f"{problem.generator[len(CONCEPT_PREFIX):]} · {problem.points:g} pt"
    return Panel(Group(*body), title=f"{number}. {problem.title}", subtitle=meta, title_align="left",
                 subtitle_align="right", box=box.ROUNDED)


def _short_form(part: Part) -> str:
    """The form without the typing example: "2×2 matrix", "vector of 3", "number"."""
    return part.form().split(" [", 1)[0]


def wrong_shape(part: Part, value: Any, raw: str = "") -> str | None:
    """Why a parsed vector or matrix answer has the wrong shape (None when it fits); such an
    answer is asked again rather than graded, like one that cannot be read. A shape that a known
    mistake produces (a transposed score matrix, say) is graded, so the mistake is diagnosed."""
    import numpy as np

    from examprep.answers import shape_feedback

    if part.kind not in ("vector", "matrix") or value is None:
        return None
    want = tuple(part.shape) if part.shape else np.shape(part.expected)
    got = tuple(np.shape(value))
    if got == tuple(want) or any(got == np.shape(m.value) for m in part.misconceptions):
        return None
    return shape_feedback(want, got, raw)


def _expected_renderable(part: Part) -> Any:
    from rich.text import Text

    from examprep.render.terminal import value_renderable

    if isinstance(part.exact, str):
        return Text(part.exact)
    if isinstance(part.exact, list):
        return value_renderable(part.exact, 4)
    return value_renderable(part.expected, 4)


def part_feedback(po: PartOutcome, *, show_expected: bool = True) -> Any:
    """One part's verdict: right (or right from the earlier answers), the misconception and its
    explanation, or the expected answer."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.text import Text

    pts = f"{po.score:g}/{po.part.points:g} pt"
    if po.status == "correct":
        return Text(f"✓ correct · {pts}", style="bold green")
    if po.status == "ecf":
        return Text(f"✓ correct from your earlier answer (error carried forward) · {pts}", style="bold green")
    lines: list[Any] = []
    if po.status == "blank":
        lines.append(Text(f"– skipped · {pts}", style="yellow"))
    elif po.status == "misconception":
        lines.append(Text(f"✗ {po.explanation or 'a known mistake'} · {pts}", style="bold red"))
    elif po.score > 0:
        lines.append(Text(f"◐ partly right · {pts}", style="bold yellow"))
    else:
        lines.append(Text(f"✗ not right · {pts}", style="bold red"))
    if po.feedback and po.feedback != po.explanation and po.status != "blank":
        lines.append(Text(po.feedback, style="red"))
    if show_expected:
        lines.append(Text("Expected:", style="dim"))
        lines.append(Padding(_expected_renderable(po.part), (0, 0, 0, 2)))
    return Group(*lines)


def problem_result(outcome: ProblemOutcome) -> Any:
    from rich.text import Text

    style = "green" if outcome.score >= outcome.points - 1e-9 else ("yellow" if outcome.score > 0 else "red")
    what = "Question" if is_concept(outcome.problem) else "Problem"
    return Text(f"{what} {outcome.number}: {outcome.score:g}/{plural(outcome.points, 'point')} in "
                f"{fmt_clock(outcome.seconds)}",
                style=f"bold {style}")


def concept_explanation(problem: Problem) -> Any:
    """A concept question's explanation, note and source, shown after every answer."""
    from rich import box
    from rich.console import Group
    from rich.panel import Panel
    from rich.text import Text

    from examprep.render.terminal import inline

    lines = []
    for step in problem.solution:
        texts = " ".join(inline(b.text) for b in step.blocks if isinstance(b, TextBlock))
        style = {"Answer": "bold green", "Source": "dim", "Where the notes are loose": "yellow"}.get(step.title, "")
        lines.append(Text.assemble((f"{step.title}: ", "bold"), (texts, style)))
    return Panel(Group(*lines), box=box.ROUNDED, title="why", title_align="left")


def exam_header(title: str, n: int, points: float, limit: str) -> Any:
    from rich import box
    from rich.panel import Panel
    from rich.text import Text

    text = Text.assemble((f"{plural(n, 'problem')} · {points:g} points · time: {limit}\n", "bold"),
                         "No feedback until the end. Type `skip` (or Enter) to leave a part blank, q to submit early; "
                         "before submitting you can change any answer. Ctrl-C submits what you have.")
    return Panel(text, title=title, title_align="left", box=box.HEAVY)


def answer_sheet(problems: list[Problem], answers: dict) -> Any:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE, title="Your answers", title_justify="left")
    table.add_column("part", no_wrap=True)
    table.add_column("answer", overflow="fold")
    for n, p in enumerate(problems, 1):
        for i, part in enumerate(p.parts):
            raw = answers.get((n, part.id))
            table.add_row(f"{n}{chr(97 + i)}", Text(raw) if raw else Text("— blank", style="dim"))
    return table


def print_summary(term: Terminal, summary: Summary) -> None:
    """The closing summary: per-topic score, time, misconceptions, where the attempts went."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    out = term.console
    outcomes = summary.outcomes
    exam = summary.mode == "exam"
    notes = {"quit": "Submitted." if exam else "Session ended.", "input-ended": "Input ended."}
    if not exam:              # an exam announced these when they happened (they were printed twice)
        notes["interrupted"] = "Interrupted: every answered part is saved."
    if summary.ended in notes:
        out.print(Text(notes[summary.ended], style="yellow"))
    if summary.unreached:
        n = len(summary.unreached)
        out.print(Text(f"{plural(n, 'problem')} not reached ({', '.join(dict.fromkeys(summary.unreached))}): "
                       f"{'it counts' if n == 1 else 'they count'} 0 in the exam's score but {'is' if n == 1 else 'are'} "
                       "not recorded in your history.", style="dim"))
    if not outcomes:
        out.print(Text("No answers given; nothing recorded.", style="dim"))
        if exam and summary.report is not None:
            out.print(exam_report(summary))          # the exam's (blank) score, out of all its points
        return
    title = {"exam": "Exam report", "review": "Review summary"}.get(summary.mode, "Quiz summary")
    table = Table(box=box.SIMPLE_HEAVY, title=title, title_justify="left", title_style="bold")
    table.add_column("topic", style="cyan", no_wrap=True)
    table.add_column("problems", justify="right")
    table.add_column("score", justify="right")
    table.add_column("", no_wrap=True)
    table.add_column("time", justify="right")
    by_topic: dict[str, list[ProblemOutcome]] = {}
    for o in outcomes:
        by_topic.setdefault(o.topic, []).append(o)
    for topic, os_ in by_topic.items():
        got, possible = sum(o.score for o in os_), sum(o.points for o in os_)
        frac = got / possible if possible else 0.0
        table.add_row(topic, str(len(os_)), f"{got:g}/{possible:g}", bar(frac, 10), fmt_clock(sum(o.seconds for o in os_)))
    got, possible = sum(o.score for o in outcomes), sum(o.points for o in outcomes)
    table.add_section()
    table.add_row("total", str(len(outcomes)), f"{got:g}/{possible:g}", bar(got / possible if possible else 0.0, 10),
                  fmt_clock(summary.seconds), style="bold")
    out.print(table)
    if summary.mode == "exam":
        out.print(exam_report(summary))
    mistakes: dict[str, tuple[str, int]] = {}
    for o in outcomes:
        for p in o.parts:
            if p.misconception:
                key = f"{o.topic}: {p.misconception}"
                mistakes[key] = (p.explanation, mistakes.get(key, ("", 0))[1] + 1)
    if mistakes:
        mt = Table(box=box.SIMPLE, title="Misconceptions", title_justify="left", title_style="bold")
        mt.add_column("×", justify="right")
        mt.add_column("mistake", style="red", no_wrap=False, overflow="fold")
        mt.add_column("what it means", overflow="fold")
        for key, (why, count) in sorted(mistakes.items(), key=lambda kv: -kv[1][1]):
            mt.add_row(str(count), key, why)
        out.print(mt)
    if summary.history_path:
        out.print(Text(f"{plural(summary.saved, 'answer')} saved to {summary.history_path}. "
                       "`examprep stats` shows your progress; `examprep review --due` what to revisit.", style="dim"))


def exam_report(summary: Summary) -> Any:
    """The exam's graded report: the grader's per-part feedback view, with the key's answers."""
    from examprep.render.report import feedback_view

    return feedback_view(summary.report, show_answers=True)


def bar(fraction: float, width: int = 10) -> str:
    """A text bar with eighth-block resolution: ███▌······ for 0.35."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, rem = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[rem].strip() if rem else ""
    return "█" * full + partial + "·" * (width - full - (1 if partial else 0))


def sparkline(values: list[float]) -> str:
    """Scores 0–1 as ▁▂▃▄▅▆▇█, oldest first."""
    ticks = "▁▂▃▄▅▆▇█"
    return "".join(ticks[min(int(v * 7 + 0.5), 7)] for v in values)


# =================================================================================== stats

def stats_data(history: History, *, now: float, topic: str | None = None, days: float | None = None) -> dict:
    """Progress as plain data (for the table and --json)."""
    from examprep.history import misconception_stats, topic_stats
    from examprep.review import all_cards, topic_item

    since = now - days * 86400 if days else None
    attempts = history.attempts(topic=topic, since=since)
    topics = topic_stats(attempts)
    cards = {c.item: c for c in all_cards(history, now=now)}

    def due_of(ts: Any) -> float | None:
        items = ([topic_item(ts.topic)] if ts.kind == "problem"
                 else [c for c in cards if c.startswith(CONCEPT_PREFIX) and _concept_topic(c) == ts.topic])
        dues = [cards[i].due for i in items if i in cards]
        return min(dues) if dues else None

    rows = []
    for ts in topics:
        rows.append({"topic": ts.topic, "kind": ts.kind, "problems": ts.problems, "parts": ts.parts,
                     "accuracy": round(ts.accuracy, 4), "recent": ts.recent, "earlier": ts.earlier,
                     "trend": ts.trend, "scores": [round(s, 4) for s in ts.scores[-12:]],
                     "seconds_per_problem": round(ts.seconds_per_problem, 1), "last": ts.last, "due": due_of(ts)})
    mis = [{"topic": m.topic, "id": m.id, "count": m.count, "last": m.last,
            "explanation": _last_feedback(attempts, m.topic, m.id)} for m in misconception_stats(attempts)]
    return {"attempts": len(attempts), "problems": sum(r["problems"] for r in rows),
            "seconds": round(sum(a.seconds for a in attempts), 1), "topics": rows, "misconceptions": mis,
            "history": str(history.path),
            "filtered": ", ".join(f for f in (f"topic {topic}" if topic else "", f"last {days:g} days" if days else "") if f)}


_BANK_CACHE: dict[str, ConceptBank] = {}


def bank() -> ConceptBank:
    if "default" not in _BANK_CACHE:
        _BANK_CACHE["default"] = load_concepts()
    return _BANK_CACHE["default"]


def _concept_topic(item: str) -> str:
    qid = item[len(CONCEPT_PREFIX):]
    q = bank().questions.get(qid)
    return q.stats_topic if q else "concepts"


def _last_feedback(attempts: list[Attempt], topic: str, mid: str) -> str:
    for a in reversed(attempts):
        if a.topic == topic and a.misconception == mid and a.feedback:
            return a.feedback
    return ""


def print_stats(term: Terminal, data: dict, *, now: float) -> None:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    out = term.console
    if not data["topics"]:
        if data.get("filtered"):
            out.print(f"No attempts match: {data['filtered']}. `examprep stats` without filters shows everything.")
        else:
            out.print("No attempts yet: run `examprep quiz` to start.")
        return
    out.print(Text(f"{plural(data['problems'], 'problem')} ({plural(data['attempts'], 'answer')}) · "
                   f"{fmt_duration(data['seconds'])} of practice",
                   style="bold"))
    table = Table(box=box.SIMPLE_HEAVY, title="Progress by topic (weakest first)", title_justify="left")
    table.add_column("topic", style="cyan", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("accuracy", no_wrap=True)
    table.add_column("trend", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    table.add_column("review", no_wrap=True)
    for r in data["topics"]:
        trend = r["trend"]
        arrow = "" if trend is None else ("[green]▲[/]" if trend > 0.05 else "[red]▼[/]" if trend < -0.05 else "=")
        due = r["due"]
        if due is None:
            review_text = "—"
        elif due <= now:
            review_text = "[bold yellow]due now[/]"
        else:
            review_text = f"in {fmt_duration(due - now)}"
        table.add_row(r["topic"], str(r["problems"]), f"{bar(r['accuracy'], 8)} {r['accuracy'] * 100:3.0f}%",
                      f"{sparkline(r['scores'][-8:])} {arrow}", fmt_clock(r["seconds_per_problem"]), review_text)
    out.print(table)
    if data["misconceptions"]:
        mt = Table(box=box.SIMPLE, title="Most frequent misconceptions", title_justify="left")
        mt.add_column("×", justify="right")
        mt.add_column("topic: mistake", style="red", overflow="fold")
        mt.add_column("what it means", overflow="fold")
        for m in data["misconceptions"]:
            mt.add_row(str(m["count"]), f"{m['topic']}: {m['id']}", m["explanation"])
        out.print(mt)


def print_due(term: Terminal, history: History, *, now: float) -> None:
    """What is due for review now, and what comes next."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    from examprep import generators
    from examprep.review import all_cards

    out = term.console
    cards = all_cards(history, now=now)
    due = [c for c in cards if c.due <= now]
    gens = generators.load_all()
    seen = {c.name for c in cards if c.kind == "topic"}
    seen_concepts = {c.name for c in cards if c.kind == "concept"}
    new_topics = [g for g in gens if g not in seen]
    new_concepts = [q for q in bank().questions if q not in seen_concepts]
    if not cards:
        out.print("Nothing scheduled yet: each topic you practise (`examprep quiz`) gets a review date.")
        return
    if due:
        table = Table(box=box.SIMPLE_HEAVY, title=f"Due now: {len(due)}", title_justify="left")
        table.add_column("item", style="cyan", no_wrap=True)
        table.add_column("overdue", justify="right")
        table.add_column("recall", justify="right")
        table.add_column("reviews", justify="right")
        for c in due:
            table.add_row(_item_label(c.item), fmt_duration(now - c.due), f"{c.retrievability * 100:.0f}%", str(c.reviews))
        out.print(table)
        out.print(Text("`examprep review` practises them (each topic with a new variant).", style="dim"))
    else:
        nxt = min(cards, key=lambda c: c.due)
        out.print(f"Nothing is due. Next: {_item_label(nxt.item)} in {fmt_duration(nxt.due - now)}.")
    upcoming = [c for c in cards if now < c.due <= now + 7 * 86400]
    if upcoming:
        out.print(Text(f"Due in the next 7 days: {len(upcoming)}", style="dim"))
    if new_topics or new_concepts:
        out.print(Text(f"Not yet studied: {len(new_topics)} topics, {len(new_concepts)} concept questions "
                       "(`examprep quiz`, `examprep quiz --concepts`).", style="dim"))


def _item_label(item: str) -> str:
    kind, _, name = item.partition(":")
    return name if kind == "topic" else f"concept {name}"


# ============================================================================ entry points

def open_history() -> History:
    return History()


def run_quiz(opts: QuizOptions, *, no_color: bool = False) -> int:
    """`examprep quiz`: plan, run, summarise. Returns the exit code (130 after Ctrl-C)."""
    validate(opts)
    term = Terminal(no_color=no_color)
    with open_history() as history:
        now = time.time()
        concept_bank = bank()
        minutes = None
        if opts.mode == "exam":
            problems, title, minutes = plan_exam(opts, history)
        elif opts.concepts:
            problems = plan_concepts(opts, concept_bank, history, now=now)
        else:
            problems = plan_problems(opts, history, now=now)
        session = Session(term, history, mode=opts.mode, bank=concept_bank, options=_options_dict(opts), minutes=minutes)
        if opts.mode == "exam":
            summary = session.run_exam(problems, title=title)
        else:
            summary = session.run_practice(problems)
        print_summary(term, summary)
        return summary.exit_code


def plan_exam(opts: QuizOptions, history: History) -> tuple[list[Problem], str, float]:
    """The exam's problems, title and time limit (minutes).

    With a recipe (by default the bundled ``midterm``, when no topics are given): the recipe's
    mix through the sheets feature's loader, and the recipe's time. With topics: one problem per
    topic in turn up to ``count``, at the chosen level (default 2, or the nearest level a topic
    has), each a new variant; the time is the sum of the parts' estimates. ``opts.minutes``
    overrides the time either way.
    """
    from examprep import generators

    if not opts.recipe and not opts.topics and _has_recipe(DEFAULT_RECIPE):
        opts = replace(opts, recipe=DEFAULT_RECIPE)
    if opts.recipe:
        if opts.topics:
            raise ParamError("--recipe sets the topics: give either --recipe or --topic")
        problems, title, minutes = recipe_problems(opts.recipe, history, seed=opts.seed,
                                                   calculator_free=opts.calculator_free)
    else:
        gens = generators.load_all()
        names = ([generators.get_drawable(t, "the quiz").name for t in opts.topics] if opts.topics else sorted(gens))
        names = list(dict.fromkeys(names))
        if opts.calculator_free:
            lacking = [n for n in names if not gens[n].calculator_free]
            if opts.topics and lacking:
                raise ParamError(f"--calculator-free: {', '.join(lacking)} has no calculator-free variant")
            names = [n for n in names if gens[n].calculator_free]
        if not names:
            raise ParamError("no topic fits these options (see `examprep topics`)")
        count = opts.count or len(names)
        problems = []
        for i in range(count):
            g = gens[names[i % len(names)]]
            want = opts.difficulty or 2
            level = min(g.levels, key=lambda lv: (abs(lv - want), lv))
            if opts.seed is not None:
                seed = opts.seed + i
            else:
                used = history.used_seeds(g.name, level, opts.calculator_free) | {p.seed for p in problems
                                                                                   if p.generator == g.name}
                seed = fresh_seed(used)
            problems.append(generators.build(g.name, seed, level, opts.calculator_free))
        title = "Exam"
        minutes = float(math.ceil(sum(p.minutes for p in problems)))
    return problems, title, float(opts.minutes) if opts.minutes else minutes


DEFAULT_RECIPE = "midterm"


def _has_recipe(name: str) -> bool:
    try:
        from examprep import sheets
    except ImportError:
        return False
    return name in sheets.bundled_recipes()


def recipe_problems(spec: str, history: History, *, seed: int | None,
                    calculator_free: bool = False) -> tuple[list[Problem], str, float]:
    """(problems, title, minutes) of a sheet recipe (a bundled name such as ``midterm``, or a
    TOML file), through the sheets feature's loader. Each item is drawn as a variant the student
    has not attempted; with ``seed``, problem k uses seed + k, as on a printed sheet.
    Raises SheetError for an unknown or bad recipe."""
    from examprep import generators

    try:
        from examprep import sheets
    except ImportError:
        raise ParamError("--recipe: sheet recipes are not available in this version; use --topic instead") from None
    recipe = sheets.load_recipe(spec)
    problems: list[Problem] = []
    for item in recipe.items:
        cf = item.calculator_free or calculator_free
        for _ in range(item.count):
            if seed is not None:
                s = seed + len(problems)
            else:
                used = history.used_seeds(item.topic, item.difficulty, cf)
                s = fresh_seed(used | {p.seed for p in problems if p.generator == item.topic})
            problems.append(generators.build(item.topic, s, item.difficulty, cf))
    minutes = float(recipe.minutes) if recipe.minutes else float(math.ceil(sum(p.minutes for p in problems)))
    return problems, recipe.title or f"Exam · {spec}", minutes


def _options_dict(opts: QuizOptions) -> dict[str, Any]:
    return {k: v for k, v in opts.__dict__.items() if v not in (None, [], False)}


def run_review(*, count: int, calculator_free: bool = False, no_color: bool = False) -> int:
    """`examprep review`: a practice session over the due items."""
    if not 1 <= count <= 200:
        raise ParamError(f"--count: expected 1 to 200 items, got {count}")
    term = Terminal(no_color=no_color)
    with open_history() as history:
        now = time.time()
        concept_bank = bank()
        problems, skipped = plan_review(history, concept_bank, count=count, now=now, calculator_free=calculator_free)
        for item in skipped:
            term.show(f"Skipping {item}: it no longer exists in this examprep.", style="dim", markup=False)
        if not problems:
            print_due(term, history, now=now)
            return 0
        session = Session(term, history, mode="review", bank=concept_bank, options={"count": count})
        summary = session.run_practice(problems)
        print_summary(term, summary)
        return summary.exit_code


def run_due(*, no_color: bool = False, as_json: bool = False) -> None:
    """`examprep review --due`."""
    import json

    from examprep.review import all_cards

    with open_history() as history:
        now = time.time()
        if as_json:
            print(json.dumps([{"item": c.item, "due": c.due, "overdue": c.due <= now, "state": c.state,
                               "stability_days": c.stability, "retrievability": round(c.retrievability, 4),
                               "reviews": c.reviews} for c in all_cards(history, now=now)]))
            return
        print_due(Terminal(no_color=no_color), history, now=now)


def run_stats(*, topic: str | None = None, days: float | None = None, no_color: bool = False,
              as_json: bool = False) -> None:
    """`examprep stats`."""
    import json

    if days is not None and days <= 0:
        raise ParamError(f"--days: expected a positive number, got {days:g}")
    with open_history() as history:
        now = time.time()
        data = stats_data(history, now=now, topic=topic, days=days)
        if topic and not data["topics"]:
            from examprep import generators

            if topic not in generators.all_generators():
                generators.get(topic)          # raises UnknownTopicError with the closest names (exit 2)
        if as_json:
            print(json.dumps(data, ensure_ascii=False))
            return
        print_stats(Terminal(no_color=no_color), data, now=now)
