"""One problem-source layer: where every command's problems come from.

A source reference is an ``Item`` (examprep.sources.item): a built-in generator at a level (with
its pins), a question file (its QuestionSpec), a concept question (its id), or a model problem (a
generator that reads a trained model, with the model's ``checkpoint``). ``build(item, seed)`` is
the one place a reference becomes a Problem; generate, sheet, quiz, review, anki and the recipes
all come here, so a question file goes wherever a topic does.

    item.py       the Item (a command-line topic's is made here: reference, recipe_from_topics)
    concepts.py   the concept bank (examprep/bank/concepts.toml) and a concept question's Problem
    recipes.py    a sheet's plan: recipes (TOML) and lists of topics, parsed into Items

The layer sits above generators and authoring and below render, grading, quiz and sheets (which
therefore never need to import each other for a problem).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from examprep import generators
from examprep.authoring import build_question, load_question
from examprep.authoring.question import with_points
from examprep.errors import ParamError, check_seed
from examprep.problem import Problem
from examprep.sources.concepts import concept_problem, packaged_bank
from examprep.sources.item import Item, check_distinct_ids, is_question_file
from examprep.sources.recipes import MAX_PROBLEMS, SheetRecipe

# The generators (numpy and 37 modules, ~0.3 s) and the authoring package are imported in the
# functions that build a problem or name a topic: importing this package, which every recipe read
# does (`sheet --list`, an exam's plan), needs neither.

SeedRule = Callable[[str, int, bool, list], int]     # (topic, level, calculator-free, problems so far) → seed

__all__ = ["Item", "SeedRule", "build", "build_problems", "build_many", "check_distinct_ids", "is_question_file",
           "needs_model", "question_item", "recipe_from_topics", "reference", "require_models", "with_checkpoint"]


def reference(name: str, *, difficulty: int = 1, count: int = 1, calculator_free: bool = False,
              checkpoint: str | None = None) -> Item:
    """The Item a command-line topic names: a question file (FILE.toml, read now: QuestionError
    naming its line) or a generator (UnknownTopicError with the close names), with ``checkpoint``
    for a model problem. Levels and options are checked where the item is used."""
    if is_question_file(name):
        return question_item(name, count)
    gen = generators.get(name)
    return Item(gen.name, difficulty, count, calculator_free, checkpoint=checkpoint if gen.requires else None)


def question_item(path: str, count: int = 1) -> Item:
    """The Item of a question file, read now (QuestionError naming its line)."""
    spec = load_question(path)
    return Item(spec.generator, 1, count, False, question=spec)


def recipe_from_topics(topics: list[str], *, count: int = 1, difficulty: int = 1,
                       calculator_free: bool = False, title: str = "Practice sheet") -> SheetRecipe:
    """An ad-hoc recipe: ``count`` problems of each topic, a generator or a question file (FILE.toml,
    read now). Raises ParamError for bad values, QuestionError for a bad question file."""
    if not topics:
        raise ParamError("--topics: give at least one topic (see `examprep topics`)")
    if not 1 <= count <= MAX_PROBLEMS:
        raise ParamError(f"--count: expected 1 to {MAX_PROBLEMS}, got {count}")
    if difficulty not in (1, 2, 3):
        raise ParamError(f"--difficulty: expected 1, 2 or 3, got {difficulty}")
    if count * len(topics) > MAX_PROBLEMS:
        raise ParamError(f"--count: {count * len(topics)} problems; a sheet holds at most {MAX_PROBLEMS}")
    items = []
    for t in topics:
        item = reference(t, count=count)
        if not item.generated:
            if calculator_free:
                raise ParamError("--calculator-free: a question file has no calculator-free variant")
            items.append(item)
            continue
        gen = _generator_for(item, difficulty, calculator_free)
        items.append(Item(gen.name, difficulty, count, calculator_free))
    check_distinct_ids(items)
    return SheetRecipe(name="practice", title=title, items=tuple(items), source="--topics")


def _generator_for(item: Item, difficulty: int, calculator_free: bool) -> Any:
    """The generator of a generated item, refused (naming the option) where it lacks the level or
    the calculator-free variant asked for."""
    gen = generators.get(item.topic)
    if difficulty not in gen.levels:
        raise ParamError(f"--difficulty: {gen.name} has levels {', '.join(map(str, gen.levels))}, got {difficulty}")
    if calculator_free and not gen.calculator_free:
        raise ParamError(f"--calculator-free: {gen.name} has no calculator-free variant")
    return gen


def needs_model(item: Item) -> bool:
    """A model problem: its generator reads a trained model (attention-from-model and the like)."""
    return item.generated and bool(generators.get(item.topic).requires)


def with_checkpoint(recipe: SheetRecipe, checkpoint: str | None) -> SheetRecipe:
    """The recipe with ``checkpoint`` as the trained model of each of its model problems (`examprep
    sheet --checkpoint DIR`). ParamError for a model problem left without one, and for a
    ``checkpoint`` that no problem reads."""
    if checkpoint is not None and not any(needs_model(i) for i in recipe.items):
        models = ", ".join(name for name, gen in generators.all_generators().items() if gen.requires)
        raise ParamError(f"--checkpoint: none of the sheet's problems reads a trained model ({models} do)")
    if checkpoint is not None:
        recipe = replace(recipe, items=tuple(replace(i, checkpoint=checkpoint) if needs_model(i) else i
                                             for i in recipe.items))
    require_models(recipe.items, "give --checkpoint DIR, the model its problem is computed from")
    return recipe


def require_models(items: Any, where: str) -> None:
    """ParamError for the first model problem without its trained model: ``where`` (the command)
    says how to give one ("give --checkpoint DIR"), or, for a command that cannot take one, how to
    practise the problem instead ("{name}" in it is the generator's name)."""
    for item in items:
        if needs_model(item) and not item.checkpoint:
            gen = generators.get(item.topic)
            raise ParamError(f"{gen.name} needs a trained model (--{gen.requires[0]}): "
                             + where.replace("{name}", gen.name))


def build(item: Item, seed: int, calculator_free: bool = False) -> Problem:
    """The Problem of one source reference at ``seed``: a generator's (with its pins and, for a
    model problem, its checkpoint), a question file's or a concept question's; then the item's
    points and minutes. ``calculator_free``: asked by the sheet for every generated item (a
    generator's own flag is the item's)."""
    if item.question is not None:
        problem = build_question(item.question, seed)
    elif item.concept is not None:
        bank = packaged_bank()
        problem = concept_problem(bank.questions[item.concept], seed, bank.version)
    else:
        options = {"checkpoint": item.checkpoint} if item.checkpoint else None
        problem = generators.build(item.topic, seed, item.difficulty, calculator_free or item.calculator_free, options,
                                   pins=item.pins)
    problem = generators.mark_shapes(problem)          # tensor-shape parts read and print as shapes, whatever the source
    if item.points is not None and item.points * 2 < len(problem.parts) - 1e-9:
        # a recipe checks this when it is read; a model problem's parts are known only now
        raise ParamError(f"points: {item.points:g} cannot give each of the {len(problem.parts)} parts of {item.topic} "
                         f"half a point; give at least {len(problem.parts) / 2:g}")
    if item.points is not None or item.minutes is not None:
        problem = with_points(problem, item.points, item.minutes)
    return problem


def build_problems(recipe: SheetRecipe, base_seed: int | None = None, *, seed_of: SeedRule | None = None,
                   calculator_free: bool = False) -> list[Problem]:
    """The recipe's problems in order (``count`` of each item), each at its item's level and with
    its item's tolerance. Problem k (from 0) uses seed ``base_seed + k``, or the item's own seed + its
    index, or ``seed_of(topic, level, calculator_free, problems so far)`` (the quiz draws
    unattempted variants so). ``calculator_free``: every generated item calculator-free, as well as
    those the recipe marks."""
    out: list[Problem] = []
    for item in recipe.items:
        cf = (item.calculator_free or calculator_free) and item.generated
        for k in range(item.count):
            if item.seed is not None:          # the recipe fixed it: the same problem on every copy
                seed = item.seed + k
            else:
                seed = base_seed + len(out) if seed_of is None else seed_of(item.topic, item.difficulty, cf, out)
            problem = build(item, seed, cf)
            out.append(_with_tolerance(problem, item.tolerance) if item.tolerance is not None else problem)
    return out


def _with_tolerance(problem: Problem, tolerance: Any) -> Problem:
    """The problem with ``tolerance`` on its number, vector and matrix parts that are not exact."""
    parts = [replace(p, tolerance=tolerance) if p.kind in ("number", "vector", "matrix") and p.tolerance.rule != "exact"
             else p for p in problem.parts]
    return replace(problem, parts=parts)


def build_many(topics: list[str], *, seed: int, count: int = 1, difficulty: int = 1, calculator_free: bool = False,
               checkpoint: str | None = None) -> list[Problem]:
    """`examprep generate`'s problems: ``count`` of each topic (a generator or a question file), with
    seeds seed, seed+1, …, in the order given, each built once. Every option is checked and every
    question file read (and refused, naming its line) before any problem is built."""
    if not topics:
        raise ParamError("TOPIC: give at least one topic (see `examprep topics`)")
    if not 1 <= count <= 10_000:
        raise ParamError(f"--count: expected 1 to 10000, got {count}")
    if difficulty not in (1, 2, 3):
        raise ParamError(f"--difficulty: expected 1, 2 or 3, got {difficulty}")
    check_seed(seed)
    items = [reference(t, difficulty=difficulty, count=count, calculator_free=calculator_free, checkpoint=checkpoint)
             for t in topics]
    check_distinct_ids(items)
    files = [i for i in items if i.question is not None]
    if files and calculator_free:
        raise ParamError("--calculator-free: a question file has no calculator-free variant")
    if files and len(files) == len(items) and difficulty != 1:
        raise ParamError(f"--difficulty: a question file has no levels (got {difficulty}); its draws are its own")
    for item in items:
        if not item.generated:
            continue
        gen = _generator_for(item, difficulty, calculator_free)
        if gen.requires and not item.checkpoint:
            raise ParamError(f"--{gen.requires[0]}: {gen.name} needs one; {gen.requires_hint}")
    out: list[Problem] = []
    for item in items:
        out += [build(item, seed + i) for i in range(count)]
    return out
