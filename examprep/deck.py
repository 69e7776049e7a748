"""`examprep anki`: the concept bank and worked problems as an Anki deck (.apkg, written by genanki).

What goes in:
- every concept question of the chosen sections, one note each ("examprep concept": question and
  choices → answer, explanation and the lecture's verbatim source), in the subdeck
  ``examprep::Concepts::<section>``;
- ``problems`` generated problems per chosen topic ("examprep problem": statement and parts →
  worked solution and answers), in ``examprep::Problems::<topic>``. Problem k of a topic has seed
  ``seed + k`` and, unless a level is given, the topic's levels in turn (1, 2, 3, 1, …).

Stable identities: a note's GUID is derived from what it is — a concept's id, a problem's
generator, level, seed and calculator-free flag — and the note types and decks have fixed ids, so
importing a re-exported deck updates the notes already in the collection (and keeps their review
history) instead of adding copies. The default seed is fixed (0) for the same reason: the same
command gives the same problems.
"""
from __future__ import annotations

import hashlib
import io
import os
import shlex
import tempfile
import time
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from examprep import generators, sources
from examprep.errors import ParamError, check_seed
from examprep.fileio import atomic_write_bytes, check_output_file
from examprep.render import anki as cards
from examprep.sheets.build import solution_extras
from examprep.sources import Item, check_distinct_ids, reference, require_models
from examprep.sources.concepts import CONCEPT_TOPICS, packaged_bank

DECK = "examprep"
MAX_PROBLEMS = 50            # per topic: 50 × every topic is already ~1,750 cards


@dataclass
class DeckSummary:
    """What was written: the file, its size, and the notes per subdeck."""

    path: Path
    bytes: int
    concepts: dict[str, int] = field(default_factory=dict)      # section → notes
    problems: dict[str, int] = field(default_factory=dict)      # topic → notes
    levels: set[int] = field(default_factory=set)

    @property
    def notes(self) -> int:
        return sum(self.concepts.values()) + sum(self.problems.values())


def split_names(values: list[str] | None) -> list[str]:
    """``--topics a,b --topics c`` → [a, b, c] (order kept, duplicates dropped)."""
    out: list[str] = []
    for v in values or []:
        for name in v.split(","):
            name = name.strip()
            if name and name not in out:
                out.append(name)
    return out


def deck_id(name: str) -> int:
    """A fixed id for the deck ``name`` (Anki wants a 64-bit integer; this is 2^40 + a 48-bit hash)."""
    return (1 << 40) + int.from_bytes(hashlib.blake2b(name.encode(), digest_size=6).digest(), "big")


def _sections(sections: list[str] | None, bank: Any) -> list[str]:
    if sections is None:
        return bank.topics()
    if not sections:
        raise ParamError(f"--sections: an empty list; give some of {', '.join(CONCEPT_TOPICS)}, or none for no concept "
                         "cards")
    if sections == ["none"]:
        return []
    for s in sections:
        if s not in CONCEPT_TOPICS:
            raise ParamError(f"--sections: unknown concept section {s!r}; expected some of {', '.join(CONCEPT_TOPICS)} "
                             "(or none)")
    return sections


def _topics(topics: list[str] | None) -> list[Any]:
    """The source references (examprep.sources.Item) of the problem cards: every topic that needs no
    trained model, or those named, generators and question files alike."""
    if topics is None:
        return [Item(g.name, g.levels[0]) for g in generators.load_all().values()]
    if not topics:
        raise ParamError("--topics: an empty list; give topic names (see `examprep topics`) or question files, or "
                         "leave it out for every topic")
    items = [reference(t) for t in topics]
    check_distinct_ids(items)
    require_models(items, "examprep anki cannot take one; use `examprep generate {name} --checkpoint DIR` instead")
    return items


def _check_level(items: list[Any], difficulty: int) -> None:
    """``--difficulty`` against the items' levels: a generator without it is refused; a question
    file has no levels (level 1), and a deck of question files alone refuses any other level."""
    for item in items:
        if item.generated:
            levels = generators.get(item.topic).levels
            if difficulty not in levels:
                raise ParamError(f"--difficulty: {item.topic} has levels {', '.join(map(str, levels))}, got {difficulty}")
    if difficulty != 1 and items and not any(i.generated for i in items):
        raise ParamError(f"--difficulty: a question file has no levels (got {difficulty}); its draws are its own")


def _described(item: Any, calculator_free: bool) -> tuple[str, str, tuple[int, ...], bool]:
    """A problem deck's title, description, levels in turn and calculator-free flag."""
    if item.question is not None:
        return item.question.title, f"question file {Path(item.question.source).name}", (1,), False
    gen = generators.get(item.topic)
    return gen.title, gen.syllabus, gen.levels, calculator_free and gen.calculator_free


def _command(item: Any, problem: Any) -> str | None:
    """The command a question file's card shows to rebuild it (a generator's: the default)."""
    if item.question is None:
        return None
    return f"examprep generate {shlex.quote(Path(item.question.source).name)} -s {problem.seed}"


def build_package(*, topics: list[str] | None = None, sections: list[str] | None = None, problems: int = 3,
                  difficulty: int | None = None, seed: int = 0, calculator_free: bool = False,
                  ) -> tuple[Any, DeckSummary]:
    """The genanki Package and what it holds. Every option is checked before any problem is built.

    Raises ParamError (an unknown topic or section, a count or level out of range, a topic that
    needs a trained model) and ConceptBankError (a damaged concept bank)."""
    import genanki

    if not 0 <= problems <= MAX_PROBLEMS:
        raise ParamError(f"--problems: expected 0 to {MAX_PROBLEMS} problems per topic, got {problems}")
    if difficulty is not None and difficulty not in (1, 2, 3):
        raise ParamError(f"--difficulty: expected 1, 2 or 3, got {difficulty}")
    check_seed(seed)
    bank = packaged_bank()
    chosen_sections = _sections(sections, bank)
    items = _topics(topics) if problems else []
    if difficulty is not None:
        _check_level(items, difficulty)
    if not chosen_sections and not items:
        raise ParamError("nothing to export: give --problems 1 or more, or concept --sections")

    concept_model, problem_model = cards.models()
    summary = DeckSummary(path=Path(), bytes=0)
    decks = []
    for section in chosen_sections:
        name = f"{DECK}::Concepts::{section}"
        deck = genanki.Deck(deck_id(name), name)
        for concept in bank.questions.values():
            if concept.topic != section:
                continue
            deck.add_note(genanki.Note(model=concept_model, fields=cards.concept_fields(concept),
                                       guid=genanki.guid_for("examprep-concept", concept.id),
                                       tags=["examprep", f"examprep::concept::{section}"]))
        summary.concepts[section] = len(deck.notes)
        decks.append(deck)
    for item in items:
        title, about, levels, cf = _described(item, calculator_free)
        name = f"{DECK}::Problems::{item.topic}"
        deck = genanki.Deck(deck_id(name), name, description=f"{title} — {about}")
        for k in range(problems):
            level = difficulty if difficulty is not None and item.generated else levels[k % len(levels)]
            problem = sources.build(replace(item, difficulty=level, calculator_free=cf), seed + k)
            summary.levels.add(level)
            figures = solution_extras([problem]).get(0, [])
            deck.add_note(genanki.Note(model=problem_model,
                                       fields=cards.problem_fields(problem, title=title, figures=figures,
                                                                   command=_command(item, problem)),
                                       guid=genanki.guid_for("examprep-problem", cards.note_key(problem)),
                                       tags=["examprep", f"examprep::problem::{item.topic}", f"examprep::level::{level}"]))
        summary.problems[item.topic] = len(deck.notes)
        decks.append(deck)
    return genanki.Package(decks), summary


def write_deck(out: str | os.PathLike, *, force: bool = False, now: float | None = None, **options: Any) -> DeckSummary:
    """Build the deck (``build_package``'s options) and write it to ``out`` atomically. ``now``
    (Unix seconds, default ``content_time``) is the notes' modification time: Anki's importer
    updates a note already in the collection when the imported one is newer. The same options and
    sources give the same bytes (genanki's ids start at ``now``; the zip's entry times are ``now``).

    The output is checked before any work (a directory, a missing parent directory, an existing
    file without ``force``: OutputError naming --out)."""
    if not str(out).strip():
        raise ParamError("--out: the path is empty; give the deck's file, e.g. --out examprep.apkg")
    if Path(out).suffix.lower() != ".apkg":
        raise ParamError(f"--out {out}: an Anki deck is a .apkg file (Anki imports no other); e.g. "
                         f"--out {Path(out).with_suffix('.apkg') if Path(out).suffix else str(out) + '.apkg'}")
    target = check_output_file(out, "--out", force=force)
    package, summary = build_package(**options)
    if now is None:
        now = content_time(options.get("topics"))
    with tempfile.TemporaryDirectory(prefix="examprep-anki-") as tmp:
        staged = Path(tmp) / "deck.apkg"
        package.write_to_file(str(staged), timestamp=now)
        data = _hermetic_zip(staged.read_bytes(), now)
    atomic_write_bytes(target, data)
    summary.path, summary.bytes = target, len(data)
    return summary


def content_time(topics: list[str] | None = None) -> float:
    """The deck's modification time when none is given: ``SOURCE_DATE_EPOCH`` where it is set (the
    reproducible-builds convention, https://reproducible-builds.org/specs/source-date-epoch/),
    otherwise the newest modification time of what the cards are made from (examprep's own files
    and the question files named in ``topics``), whole seconds. Rebuilding from the same sources
    gives the same bytes; updating examprep or a question file gives a newer time, so Anki's
    importer (which updates a note only when the imported one is newer) takes the revised cards."""
    env = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if env.isdigit():
        return float(env)
    package = Path(__file__).resolve().parent
    newest = max(p.stat().st_mtime for p in package.rglob("*") if p.suffix in (".py", ".toml", ".json", ".typ", ".md"))
    for name in topics or []:
        path = Path(name)
        if path.suffix == ".toml" and path.is_file():
            newest = max(newest, path.stat().st_mtime)
    return float(int(newest))


def _hermetic_zip(data: bytes, now: float) -> bytes:
    """genanki's .apkg with every zip entry stamped ``now`` (zipfile stamps the clock or the
    staged file's time): the same entries, names, order and compression, so a rebuild is byte-identical."""
    stamp = time.gmtime(max(now, 315_532_800))[:6]          # a zip date starts in 1980
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            entry = zipfile.ZipInfo(info.filename, date_time=stamp)
            entry.compress_type, entry.external_attr = info.compress_type, 0o644 << 16
            dst.writestr(entry, src.read(info))
    return out.getvalue()
