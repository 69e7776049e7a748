"""What a session draws: the problems of a quiz (weak topics first, new variants, levels adapted),
concept questions, the due items of a review, and an exam (a sheet recipe's mix, or the topics')."""
from __future__ import annotations

import difflib
import math
import random
import secrets
from dataclasses import dataclass, field, replace

from examprep import generators
from examprep.errors import ParamError, check_seed
from examprep.history import Attempt, CardFile, History, problem_groups
from examprep.problem import Problem
from examprep.quiz.cards import check_links, draw, gone, is_question_item, links_of
from examprep.review import due as due_cards
from examprep.sources import Item, build, build_problems, check_distinct_ids, question_item, require_models
from examprep.sources.concepts import ConceptBank, concept_problem
from examprep.sources.recipes import bundled_recipes, load_recipe

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
    questions: list[str] = field(default_factory=list)     # question files (--question FILE.toml)


def validate(opts: QuizOptions) -> None:
    """Raise ParamError (exit 2) for an impossible option or combination, before the session starts."""
    if (opts.recipe or opts.minutes) and opts.mode != "exam":
        raise ParamError("--recipe and --minutes belong to an exam: add --exam")
    if opts.mode == "exam" and opts.concepts:
        raise ParamError("--concepts cannot be combined with --exam")
    if opts.questions and (opts.concepts or opts.topics or opts.mode == "exam"):
        raise ParamError("--question practises question files on their own: drop --topic, --concepts and --exam")
    if opts.count is not None and not 1 <= opts.count <= 200:
        raise ParamError(f"--count: expected 1 to 200 problems, got {opts.count}")
    if opts.difficulty is not None and opts.difficulty not in (1, 2, 3):
        raise ParamError(f"--difficulty: expected 1, 2 or 3, got {opts.difficulty}")
    check_seed(opts.seed)
    if opts.minutes is not None and not (0 < opts.minutes <= 600):
        raise ParamError(f"--minutes: expected more than 0 and at most 600, got {opts.minutes:g}")


def _problem_fractions(attempts: list[Attempt]) -> dict[str, list[tuple[int | None, float]]]:
    """Per topic, the (difficulty, fraction scored) of each attempted problem, oldest first."""
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


def variant_seed(name: str, level: int, calculator_free: bool, *, history: History | None, drawn: list[Problem],
                 seed: int | None) -> int:
    """The seed of the next problem of a session: with ``seed``, seed + its index (reproducible, as
    on a printed sheet); else a variant of ``name`` the student has not attempted, in the history or
    earlier in this session (``drawn``: the problems drawn so far)."""
    if seed is not None:
        return seed + len(drawn)
    used = history.used_seeds(name, level, calculator_free) if history else set()
    return fresh_seed(used | {p.seed for p in drawn if p.generator == name})


def drawable_topics(opts: QuizOptions, gens: dict, *, by_difficulty: bool = False) -> list[str]:
    """The generators a session may draw: the topics asked for (each once), or all of them, with a
    calculator-free variant when ``opts.calculator_free`` and (``by_difficulty``) the level asked
    for. A topic asked for by name that lacks one is an error; ParamError when none is left."""
    if opts.topics:
        names = list(dict.fromkeys(generators.get_drawable(t, "the quiz").name for t in opts.topics))
    else:
        names = sorted(gens)
    if opts.calculator_free:
        lacking = [n for n in names if not gens[n].calculator_free]
        if opts.topics and lacking:
            raise ParamError(f"--calculator-free: {', '.join(lacking)} has no calculator-free variant")
        names = [n for n in names if gens[n].calculator_free]
    if by_difficulty and opts.difficulty is not None:
        missing = [n for n in names if opts.difficulty not in gens[n].levels]
        if opts.topics and missing:
            raise ParamError(f"--difficulty: {', '.join(missing)} has no level {opts.difficulty}")
        names = [n for n in names if opts.difficulty in gens[n].levels]
    if not names:
        raise ParamError("no topic fits these options (see `examprep topics`)")
    return names


def plan_problems(opts: QuizOptions, history: History | None, *, now: float) -> list[Problem]:
    """The problems of a quiz session: weak topics first, new variants, levels adapted.

    With ``opts.seed`` the problems are reproducible: topic order from the seed (given the
    history) and problem seeds seed, seed+1, …. Raises UnknownTopicError / ParamError.
    """
    gens = generators.load_all()
    names = drawable_topics(opts, gens, by_difficulty=True)
    attempts = history.attempts(kind="problem") if history else []
    fractions = _problem_fractions(attempts)
    weak = {n: weakness([f for _, f in fractions.get(n, [])]) for n in names}
    due = {c.name for c in due_cards(history, now=now) if c.kind == "topic"} if history else set()
    rng = random.Random(opts.seed) if opts.seed is not None else random.Random(secrets.randbits(64))
    chosen = pick_topics(names, opts.count or DEFAULT_COUNT, rng, weak, due)
    problems: list[Problem] = []
    level_now: dict[str, int] = {}
    for name in chosen:
        g = gens[name]
        level = opts.difficulty or level_now.get(name) or adaptive_level(fractions.get(name, []), g.levels)
        level_now[name] = level
        seed = variant_seed(name, level, opts.calculator_free, history=history, drawn=problems, seed=opts.seed)
        problems.append(build(Item(name, level, 1, opts.calculator_free), seed))
    return problems


def plan_concepts(opts: QuizOptions, bank: ConceptBank, history: History | None, *, now: float) -> list[Problem]:
    """Concept questions: the topics' (sections') questions, weakest and due first, each at most
    once per session; choices shuffled afresh. Raises ParamError for an unknown section."""
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


def plan_review(history: History, bank: ConceptBank, *, count: int, now: float, calculator_free: bool = False,
                files: dict[str, CardFile] | None = None) -> tuple[list[Problem], list[str]]:
    """The due items, most overdue first: a new variant for each topic (at its adaptive level),
    the question for each concept card, a new draw of each question file's card from its file
    (examprep.quiz.cards; ``files`` receives generator -> the file it was drawn from). Returns
    (problems, one line for each due item that cannot be reviewed: why, and what to do)."""
    gens = generators.load_all()
    fractions = _problem_fractions(history.attempts(kind="problem"))
    linked = history.card_files()
    problems, skipped = [], []
    for card in due_cards(history, now=now)[:count]:
        if is_question_item(card.item):
            drawn = draw(card.item, linked.get(card.item),
                         lambda g: variant_seed(g, 1, False, history=history, drawn=problems, seed=None))
            if isinstance(drawn, str):
                skipped.append(drawn)
            else:
                problems.append(drawn)
                if files is not None:
                    files[drawn.generator] = linked[card.item]
        elif card.kind == "topic" and card.name in gens:
            g = gens[card.name]
            level = adaptive_level(fractions.get(card.name, []), g.levels)
            cf = calculator_free and g.calculator_free
            seed = variant_seed(card.name, level, cf, history=history, drawn=problems, seed=None)
            problems.append(build(Item(card.name, level, 1, cf), seed))
        elif card.kind == "concept" and card.name in bank.questions:
            problems.append(build(Item(card.item, 1, concept=card.name), secrets.randbelow(1_000_000)))
        else:
            skipped.append(gone(card.item))
    return problems, skipped



DEFAULT_RECIPE = "midterm"


def plan_exam(opts: QuizOptions, history: History,
              files: dict[str, CardFile] | None = None) -> tuple[list[Problem], str, float]:
    """The exam's problems, title and time limit (minutes).

    With a recipe (by default the bundled ``midterm``, when no topics are given): the recipe's
    mix (exam_from_recipe), and the recipe's time. With topics: one problem per topic in turn up
    to ``count``, at the chosen level (default 2, or the nearest level a topic has), each a new
    variant; the time is the sum of the parts' estimates. ``opts.minutes`` overrides the time
    either way. ``files``: as exam_from_recipe's.
    """
    if not opts.recipe and not opts.topics and DEFAULT_RECIPE in bundled_recipes():
        opts = replace(opts, recipe=DEFAULT_RECIPE)
    if opts.recipe:
        if opts.topics:
            raise ParamError("--recipe sets the topics: give either --recipe or --topic")
        problems, title, minutes = exam_from_recipe(opts.recipe, history, seed=opts.seed,
                                                    calculator_free=opts.calculator_free, files=files)
    else:
        gens = generators.load_all()
        names = drawable_topics(opts, gens)
        problems: list[Problem] = []
        for i in range(opts.count or len(names)):
            g = gens[names[i % len(names)]]
            want = opts.difficulty or 2
            level = min(g.levels, key=lambda lv: (abs(lv - want), lv))
            seed = variant_seed(g.name, level, opts.calculator_free, history=history, drawn=problems, seed=opts.seed)
            problems.append(build(Item(g.name, level, 1, opts.calculator_free), seed))
        title = "Exam"
        minutes = float(math.ceil(sum(p.minutes for p in problems)))
    return problems, title, float(opts.minutes) if opts.minutes else minutes


def exam_from_recipe(spec: str, history: History | None, *, seed: int | None, calculator_free: bool = False,
                     files: dict[str, CardFile] | None = None) -> tuple[list[Problem], str, float]:
    """(problems, title, minutes) of an exam drawn from a sheet recipe (a bundled name such as
    ``midterm``, or a TOML file) by the sheets' own builder, so the exam holds what the printed
    sheet would (the recipe's tolerances included). Each item is drawn as a variant the student has
    not attempted; with ``seed``, problem k uses seed + k, as on a printed sheet. ``files``
    receives generator -> the question file of each ``question =`` item (its review card's).
    Raises SheetError for an unknown or bad recipe, ParamError for a model problem (the quiz
    takes no trained model)."""
    recipe = load_recipe(spec)
    require_models(recipe.items, "the quiz cannot take one; print the recipe with `examprep sheet --recipe "
                                 f"{spec} --checkpoint DIR`")
    if files is not None:
        specs = [item.question for item in recipe.items if item.question is not None]
        if history is not None:
            check_links(history, specs)
        files.update(links_of(specs))

    def seed_of(topic: str, level: int, cf: bool, drawn: list[Problem]) -> int:
        return variant_seed(topic, level, cf, history=history, drawn=drawn, seed=seed)

    problems = build_problems(recipe, seed_of=seed_of, calculator_free=calculator_free)
    minutes = float(recipe.minutes) if recipe.minutes else float(math.ceil(sum(p.minutes for p in problems)))
    return problems, recipe.title or f"Exam · {spec}", minutes


def plan_questions(opts: QuizOptions, files: dict[str, CardFile] | None = None,
                   history: History | None = None) -> list[Problem]:
    """Question files to practise: ``count`` draws of each (default 1), seeds seed, seed+1, …
    (a fresh seed when none is given). Every file is read first (QuestionError names its line).
    ``files`` receives generator -> the file, which its review card remembers; a file whose id's
    card is linked to another file of that id in ``history`` is refused (quiz.cards.check_links)."""
    items = [question_item(path) for path in opts.questions]
    check_distinct_ids(items)
    if history is not None:
        check_links(history, [item.question for item in items])
    if files is not None:
        files.update(links_of(item.question for item in items))
    seed = opts.seed if opts.seed is not None else fresh_seed(set())
    return [build(item, seed + k) for item in items for k in range(opts.count or 1)]
