"""Sheet recipes: a sheet's plan, read from TOML (bundled ones live in ``examprep/bank``) into
source references (examprep.sources.item; a list of typed topics is examprep.sources.recipe_from_topics).

A recipe names the sheet and lists its problems:

    [sheet]
    title = "Midterm practice exam"
    course = "Deep Learning"
    minutes = 180          # time allowed, printed; the parts' estimates should add up to about this
    calculator = true      # printed in the instructions
    difficulty = 2         # default level of each problem (1–3)
    instructions = "…"     # optional extra paragraph

    [[problem]]
    topic = "receptive-field"
    difficulty = 2         # optional, overrides the sheet's
    count = 1              # optional
    calculator_free = false
    params = { … }         # optional: pin some of the generator's parameters (keys of its Problem's params)
    points = 10            # optional: the problem's points (its parts scaled), and its minutes
    minutes = 12
    seed = 7               # optional: this problem's seed on every copy (default: the sheet's seed + its position)

    [[problem]]
    question = "my-question.toml"   # an instructor's question file, relative to the recipe

    [[problem]]
    concept = "lstm-gate-count"     # a concept question of the bundled bank (printed with an answer box)

    [[problem]]
    topic = "attention-from-model"  # a model problem: `examprep sheet --checkpoint DIR` gives the trained model
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from examprep.errors import ExamprepError, ParamError
from examprep.fileio import read_user_text
from examprep import generators, tomllines
from examprep.answers import parse_tolerance
from examprep.answers.files import unprintable_char
from examprep.authoring import QuestionError, load_question
from examprep.bundled import recipe_texts as _bank_files     # bundled recipe names → TOML text
from examprep.sources.concepts import concept_problem, packaged_bank
from examprep.tomllines import line_of as _line_of
from examprep.sources.item import Item, duplicate_id_message, same_id_elsewhere

MAX_PROBLEMS = 200


class SheetError(ExamprepError):
    """A bad recipe, roster, secret or output location; the message says where and how to fix it."""



@dataclass(frozen=True)
class SheetRecipe:
    name: str
    title: str
    items: tuple[Item, ...]
    course: str = ""
    minutes: int | None = None
    calculator: bool = True
    instructions: str = ""
    source: str = ""
    decimal_comma: bool = False     # answers written 0,245 with ';' between list entries (Moodle's locale habit)

    @property
    def problem_count(self) -> int:
        return sum(i.count for i in self.items)


_SHEET_KEYS = {"title": str, "course": str, "minutes": int, "calculator": bool, "difficulty": int,
               "instructions": str, "name": str, "tolerance": str, "decimal_comma": bool}
_ITEM_KEYS = {"topic": str, "difficulty": int, "count": int, "calculator_free": bool, "tolerance": str,
              "params": dict, "points": (int, float), "minutes": (int, float), "seed": int, "question": str,
              "concept": str}
_TOP_KEYS = {"sheet", "problem"}


def _type_name(t: Any) -> str:
    return {str: "a string", int: "an integer", bool: "true or false", dict: "a table { name = value }",
            (int, float): "a number"}[t]


def parse_recipe(text: str, source: str, default_name: str = "sheet", base: Path | None = None,
                 questions_dir: str | Path | None = None) -> SheetRecipe:
    """A recipe from TOML text; ``source`` (a file name) is used in messages.

    Raises SheetError naming the file, line and key of the first problem found: malformed TOML,
    an unknown key, a value of the wrong type or range, an unknown topic or level, a bad question
    file (``base``: the directory question paths are relative to; each must lie in the recipe's
    project or under ``questions_dir``: see question_path), an unknown concept, a pin the
    generator does not have or never draws.
    """
    def fail(msg: str, line: int | None) -> SheetError:
        return SheetError(f"{source}{f':{line}' if line else ''}: {msg}")

    try:
        data = tomllines.loads(text)
    except tomllines.TomlError as err:
        raise fail(f"not valid TOML: {err.what}", err.line) from None
    for key in data:
        if key not in _TOP_KEYS:
            close = difflib.get_close_matches(key, sorted(_TOP_KEYS), n=1)
            hint = f"; did you mean [{close[0]}]?" if close else "; a recipe has a [sheet] table and [[problem]] tables"
            raise fail(f"unknown key {key!r}{hint}", _line_of(text, key) or _line_of(text, "", key))
    sheet = data.get("sheet", {})
    if not isinstance(sheet, dict):
        raise fail("'sheet' must be a table: [sheet]", _line_of(text, "sheet"))
    for key, value in sheet.items():
        if key not in _SHEET_KEYS:
            close = difflib.get_close_matches(key, sorted(_SHEET_KEYS), n=1)
            hint = f"; did you mean {close[0]}?" if close else f"; known keys: {', '.join(sorted(_SHEET_KEYS))}"
            raise fail(f"[sheet]: unknown key {key!r}{hint}", _line_of(text, key, "sheet"))
        want = _SHEET_KEYS[key]
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise fail(f"[sheet] {key}: expected {_type_name(want)}, got {value!r}", _line_of(text, key, "sheet"))
    title = sheet.get("title", "").strip()
    if not title:
        raise fail("[sheet] title: give the sheet a title, e.g. title = \"Midterm practice\"",
                   _line_of(text, "title", "sheet") or _line_of(text, "", "sheet"))

    for key in ("title", "course"):
        if unprintable_char(sheet.get(key, "")) is not None:
            raise fail(f"[sheet] {key}: a line break or control character cannot be printed in one line of the "
                       "sheet and its answer files; write it on one line", _line_of(text, key, "sheet"))
    minutes = sheet.get("minutes")
    if minutes is not None and not 1 <= minutes <= 600:
        raise fail(f"[sheet] minutes: expected 1 to 600, got {minutes}", _line_of(text, "minutes", "sheet"))
    default_level = sheet.get("difficulty", 1)
    if default_level not in (1, 2, 3):
        raise fail(f"[sheet] difficulty: expected 1, 2 or 3, got {default_level}", _line_of(text, "difficulty", "sheet"))

    def tolerance(spec: str | None, line: int | None) -> Any:
        # "sigfigs-strict:3": the rule of every number, vector and matrix part that is not exact by
        # its nature (the parts --tolerance RULE reaches), read by the one parser of tolerance text

        try:
            return None if spec is None else parse_tolerance(spec)
        except ParamError as err:
            raise fail(str(err), line) from None

    sheet_tolerance = tolerance(sheet.get("tolerance"), _line_of(text, "tolerance", "sheet"))
    name = sheet.get("name", default_name).strip() or default_name
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise fail(f"[sheet] name: letters, digits, '-', '_' and '.' only, got {name!r}", _line_of(text, "name", "sheet"))
    problems = data.get("problem")
    if problems is None or problems == []:
        raise fail("no problems: add at least one [[problem]] table with a topic (see `examprep topics`)", None)
    if not isinstance(problems, list) or not all(isinstance(p, dict) for p in problems):
        raise fail("'problem' must be an array of tables: [[problem]]", _line_of(text, "problem"))
    items = []
    for i, entry in enumerate(problems):
        where = f"problem {i + 1}"
        for key, value in entry.items():
            line = _line_of(text, key, "problem", i)
            if key not in _ITEM_KEYS:
                close = difflib.get_close_matches(key, sorted(_ITEM_KEYS), n=1)
                hint = f"; did you mean {close[0]}?" if close else f"; known keys: {', '.join(sorted(_ITEM_KEYS))}"
                raise fail(f"{where}: unknown key {key!r}{hint}", line)
            want = _ITEM_KEYS[key]
            if not isinstance(value, want) or (want is not bool and isinstance(value, bool)):
                raise fail(f"{where} {key}: expected {_type_name(want)}, got {value!r}", line)
        kinds = [k for k in ("topic", "question", "concept") if k in entry]
        if len(kinds) != 1:
            raise fail(f"{where}: missing topic (see `examprep topics`), or question = \"FILE.toml\" or concept = \"ID\""
                       if not kinds else f"{where}: give one of topic, question and concept, not {' and '.join(kinds)}",
                       _line_of(text, kinds[-1], "problem", i) if kinds else _line_of(text, "", "problem", i))
        at = lambda key, i=i: _line_of(text, key, "problem", i) or _line_of(text, "", "problem", i)     # noqa: E731
        extras = _extras(entry, where, at, fail)
        if kinds[0] != "topic":
            items.append(_authored(entry, kinds[0], where, at, fail, (base, questions_dir), extras, sheet_tolerance,
                                   tolerance))
            other = same_id_elsewhere(items[-1].question, items[:-1]) if items[-1].question is not None else None
            if other is not None:
                raise fail(f"{where} question: {duplicate_id_message(items[-1].question, other)}", at("question"))
            _check_points_fit(items[-1], where, at, fail)
            continue
        line = _line_of(text, "topic", "problem", i)
        try:
            gen = generators.get(entry["topic"])
        except ParamError as err:
            raise fail(f"{where}: {err}", line) from None
        if gen.requires and "params" in entry:      # a model problem's numbers are the model's, never drawn
            raise fail(f"{where} params: {gen.name} reads its parameters from the trained model (--{gen.requires[0]}); "
                       "it has none to pin", at("params"))
        level = entry.get("difficulty", default_level)
        if level not in gen.levels:
            raise fail(f"{where} difficulty: {gen.name} has levels {', '.join(map(str, gen.levels))}, got {level}",
                       _line_of(text, "difficulty", "problem", i) or line)
        count = entry.get("count", 1)
        if not 1 <= count <= MAX_PROBLEMS:
            raise fail(f"{where} count: expected 1 to {MAX_PROBLEMS}, got {count}", _line_of(text, "count", "problem", i))
        cf = entry.get("calculator_free", False)
        if cf and not gen.calculator_free:
            raise fail(f"{where} calculator_free: {gen.name} has no calculator-free variant",
                       _line_of(text, "calculator_free", "problem", i))
        own = tolerance(entry.get("tolerance"), _line_of(text, "tolerance", "problem", i))
        pins = entry.get("params")
        if pins is not None:
            _check_pins(gen.name, level, cf, pins, extras.get("seed"), f"{where} params", at("params"), fail)
        items.append(Item(gen.name, level, count, cf, own or sheet_tolerance, pins=pins, **extras))
        _check_points_fit(items[-1], where, at, fail)
    total = sum(i.count for i in items)
    if total > MAX_PROBLEMS:
        raise fail(f"{total} problems: a sheet holds at most {MAX_PROBLEMS}", None)
    return SheetRecipe(name=name, title=title, items=tuple(items), course=sheet.get("course", "").strip(),
                       minutes=minutes, calculator=sheet.get("calculator", True),
                       instructions=sheet.get("instructions", "").strip(), source=source,
                       decimal_comma=sheet.get("decimal_comma", False))


def _extras(entry: dict, where: str, at: Any, fail: Any) -> dict[str, Any]:
    """An item's points, minutes and seed, checked."""
    out: dict[str, Any] = {}
    for key, hi in (("points", 1000), ("minutes", 600)):
        if key in entry:
            v = float(entry[key])
            if not 0 < v <= hi:
                raise fail(f"{where} {key}: expected a number above 0 and at most {hi}, got {entry[key]}", at(key))
            if key == "points" and abs(v * 2 - round(v * 2)) > 1e-9:
                raise fail(f"{where} points: whole or half points (its parts are scaled in halves), got {entry[key]}",
                           at(key))
            out[key] = v
    if "seed" in entry:
        if entry["seed"] < 0:
            raise fail(f"{where} seed: expected a non-negative integer, got {entry['seed']}", at("seed"))
        out["seed"] = entry["seed"]
    return out


def _check_points_fit(item: Any, where: str, at: Any, fail: Any) -> None:
    """An item's ``points`` gives every part at least half a point (parts are scaled in halves)."""
    if item.points is None:
        return
    if item.generated and generators.get(item.topic).requires:
        return              # a model problem's parts are known once its checkpoint is read (sheet --checkpoint)
    if item.question is not None:
        n = len(item.question.parts)
    elif item.concept is not None:
        bank = packaged_bank()
        n = len(concept_problem(bank.questions[item.concept], 0, bank.version).parts)
    else:
        n = len(generators.build(item.topic, item.seed or 0, item.difficulty, item.calculator_free,
                                 pins=item.pins).parts)
    if item.points * 2 < n - 1e-9:
        raise fail(f"{where} points: {item.points:g} cannot give each of its {n} parts half a point; give at least "
                   f"{n / 2:g}", at("points"))


def _check_pins(name: str, level: int, cf: bool, pins: dict, seed: int | None, where: str, line: int | None,
                fail: Any) -> None:
    """A pin the generator does not have, or that no draw keeps, refused now (naming the recipe's line)."""
    try:
        generators.build(name, seed or 0, level, cf, pins=pins)
    except ParamError as err:
        raise fail(f"{where}: {str(err).removeprefix('params: ')}", line) from None


def _authored(entry: dict, kind: str, where: str, at: Any, fail: Any, places: tuple, extras: dict,
              sheet_tolerance: Any, tolerance: Any) -> Item:
    """An item that is a question file or a concept question (no levels, no pins)."""
    lacks = {"difficulty": "levels", "calculator_free": "calculator-free variant",
             "params": "generator parameters to pin"}
    for key, what in lacks.items():
        if key in entry:
            raise fail(f"{where} {key}: a {'question file' if kind == 'question' else 'concept question'} has no "
                       f"{what}", at(key))
    count = entry.get("count", 1)
    if not 1 <= count <= MAX_PROBLEMS:
        raise fail(f"{where} count: expected 1 to {MAX_PROBLEMS}, got {count}", at("count"))
    own = tolerance(entry.get("tolerance"), at("tolerance")) or sheet_tolerance
    if kind == "question":
        try:
            path = question_path(entry["question"], *places)
        except SheetError as err:
            raise fail(f"{where} question: {err}", at("question")) from None
        try:
            spec = load_question(path)
        except QuestionError as err:
            raise fail(f"{where} question: {err}", at("question")) from None
        return Item(spec.generator, 1, count, False, own, question=spec, **extras)

    bank = packaged_bank()
    cid = entry["concept"]
    if cid not in bank.questions:
        close = difflib.get_close_matches(cid, sorted(bank.questions), n=2, cutoff=0.5)
        hint = f"; did you mean {' or '.join(close)}?" if close else "; `examprep quiz --list-concepts` lists them"
        raise fail(f"{where} concept: no concept question {cid!r}{hint}", at("concept"))
    return Item(f"concept:{cid}", 1, count, False, own, concept=cid, **extras)


def bundled_recipes() -> dict[str, SheetRecipe]:
    """Every recipe shipped with examprep, by name."""
    return {name: parse_recipe(text, f"examprep/bank/{name}.toml", name, _bank_dir())
            for name, text in _bank_files().items()}


def _bank_dir() -> Path:
    """The bundled bank's directory (its recipes' question files are relative to it)."""
    return Path(str(resources.files("examprep") / "bank"))


def project_root(folder: Path) -> Path:
    """A recipe's project: the first of its folder and the folder's parents that holds ``.git``; the
    recipe's own folder where none does."""
    folder = folder.resolve()
    return next((p for p in (folder, *folder.parents) if (p / ".git").exists()), folder)


def question_path(name: str, base: Path | None, questions_dir: str | Path | None = None) -> Path:
    """The question file a recipe's ``question = "NAME"`` names, relative to the recipe's folder
    ``base``. A recipe is shared like a document, so it reads only question files: a ``.toml`` file
    inside the recipe's project (project_root: a course's recipes/ and questions/ folders), one of
    examprep's own example questions, or one under ``questions_dir`` (--questions-dir), links
    resolved — never /etc/shadow or a file beside the project. Devices and pipes are refused when
    the file is read (fileio.read_user_bytes).
    Raises SheetError naming the path and what to do."""
    path = Path(name)
    if path.suffix.lower() != ".toml":
        raise SheetError(f"{name!r} is not a question file (a question file ends in .toml)")
    if not path.is_absolute() and base is not None:
        path = base / path
    if base is None:
        return path
    real = path.resolve()
    roots = [project_root(base), (_bank_dir() / "questions").resolve()]      # examprep's own example questions too
    roots += [Path(questions_dir).resolve()] if questions_dir is not None else []
    if not any(real == r or r in real.parents for r in roots):
        where = " or ".join(str(r) for r in roots[:1] + roots[2:])
        raise SheetError(f"{name!r} is outside the recipe's project ({where}); move the question file there, or give "
                         "--questions-dir DIR to read question files from DIR")
    return path


def load_recipe(spec: str, questions_dir: str | Path | None = None) -> SheetRecipe:
    """A bundled recipe by name (``midterm``) or the user's own TOML file. ``questions_dir``: a
    folder its question files may also be read from (question_path).

    Raises SheetError for an unknown name (with the close ones) or an unreadable or bad file.
    """
    bank = _bank_files()
    if spec in bank:
        return parse_recipe(bank[spec], f"examprep/bank/{spec}.toml", spec, _bank_dir())
    path = Path(spec)
    if spec.endswith(".toml") or path.exists() or os.sep in spec:
        text = read_user_text(path, f"--recipe {spec}", error=SheetError)
        return parse_recipe(text, str(path), path.stem, path.parent, questions_dir)
    close = difflib.get_close_matches(spec, sorted(bank), n=2, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    raise SheetError(f"unknown recipe {spec!r}; {hint}bundled recipes: {', '.join(sorted(bank))}; "
                     "or give a .toml file")


def with_difficulty(recipe: SheetRecipe, difficulty: int) -> SheetRecipe:
    """The recipe with every problem at ``difficulty``; ParamError if a topic lacks that level."""
    if difficulty not in (1, 2, 3):
        raise ParamError(f"--difficulty: expected 1, 2 or 3, got {difficulty}")
    for item in recipe.items:
        if not item.generated:
            continue
        levels = generators.get(item.topic).levels
        if difficulty not in levels:
            raise ParamError(f"--difficulty: {item.topic} has levels {', '.join(map(str, levels))}, got {difficulty}")
    return replace(recipe, items=tuple(replace(i, difficulty=difficulty) if i.generated else i for i in recipe.items))

