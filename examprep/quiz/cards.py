"""Review cards drawn from question files, and the commands that fix or end a card.

A card of an authored question (``examprep quiz --question FILE``, or a recipe's ``question =``
in an exam) remembers its file in the history: the path, resolved absolute, and the SHA-256 of
its text (examprep.history.CardFile), renewed each time the card is practised from it. `examprep
review` draws a due card again from that file (a new seed each time, as a topic gets a new
variant) while the file is there with the same text. Otherwise the card is not reviewed and one
line names it, its file and what happened (missing, changed since it was last used, no
longer a valid question), with the two ways out: ``examprep review --relink CARD FILE`` keeps the
card's schedule and reviews it from FILE as FILE is now, ``examprep review --drop CARD`` takes the
card off the schedule (its attempts stay in the history). A changed file is not served on its
own: the card's schedule was earned on the old text, so only the student can say that the new
text is the same question.

A card's Problem is built by the problem-source layer (examprep.sources), as every other one.
"""
from __future__ import annotations

import difflib
import shlex
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from examprep.authoring import QuestionError, load_question, parse_question
from examprep.authoring.question import text_sha256
from examprep.errors import ExamprepError, ParamError
from examprep.escape import printable
from examprep.fileio import read_user_text
from examprep.generators import canonical
from examprep.history import CardFile, History
from examprep.sources import Item, build

QUESTION = "question:"          # examprep.authoring.question.PREFIX: an authored Problem's generator


def is_question_item(item: str) -> bool:
    """A card drawn from a question file ("topic:question:<id>")."""
    return item.startswith("topic:" + QUESTION)


def card_name(item: str) -> str:
    """How commands and messages name a card: a topic's name (``question:<id>`` for a question
    file's card), ``concept:<id>`` for a concept question."""
    kind, _, name = item.partition(":")
    return name if kind == "topic" else item


def link_of(spec: Any) -> CardFile:
    """The file a QuestionSpec was read from, as a card remembers it."""
    return CardFile(str(Path(spec.source).resolve()), spec.sha256)


def links_of(specs: Any) -> dict[str, CardFile]:
    """generator ("question:<id>") -> its file, for the question files a session draws from."""
    return {spec.generator: link_of(spec) for spec in specs}


def check_links(history: History, specs: Any) -> None:
    """Refuse (ParamError, one line) to practise a question file whose id's card is linked to
    ANOTHER file that still holds a question of that id: the two would share one card, one
    schedule, and each practice would re-link it to the other file. A card whose file is gone or
    now holds another id is re-linked to the file practised, as before."""
    linked = history.card_files()
    for spec in specs:
        old = linked.get("topic:" + spec.generator)
        new = link_of(spec)
        if old is None or old.path == new.path or not Path(old.path).is_file():
            continue
        try:
            same = load_question(old.path).id == spec.id
        except (ExamprepError, OSError):
            same = False
        if same:
            raise ParamError(f"{printable(spec.at('id'))}: its id {spec.id!r} is the card {spec.generator} that you practise "
                             f"from {printable(old.path)}, another file; give this file another id for a card of its "
                             f"own, or move the card to it: `examprep review --relink {spec.generator} "
                             f"{shlex.quote(printable(new.path))}`")


def _when(ts: float) -> str:
    """When a card was last practised from its file or re-linked to it: local date and time."""
    return datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _ways_out(name: str, path: str | None = None) -> str:
    file = shlex.quote(printable(path)) if path is not None else "FILE"
    return (f"`examprep review --relink {shlex.quote(name)} {file}` keeps its schedule for "
            f"{'the new text' if path is not None else 'FILE'}, `--drop {shlex.quote(name)}` ends the card")


def draw(item: str, linked: CardFile | None, seed_of: Callable[[str], int]) -> Any:
    """The Problem a due question card is reviewed with, drawn from its file with
    ``seed_of(generator)``; or, when it cannot be, the one line that says why and what to do (str)."""
    spec = _spec(item, linked)
    if isinstance(spec, str):
        return spec
    try:
        return build(Item(spec.generator, 1, question=spec), seed_of(spec.generator))
    except QuestionError as err:
        return _undrawable(item, err)


def blocked(item: str, linked: CardFile | None) -> str | None:
    """Why a question file's card cannot be reviewed now, as `examprep review` says it (draw's line,
    with the ways out), or None when it can: `examprep review --due` marks such a card, and counts
    it with none that `examprep review` practises."""
    spec = _spec(item, linked)
    return spec if isinstance(spec, str) else None


def _spec(item: str, linked: CardFile | None) -> Any:
    """The QuestionSpec a card is drawn from, read from its file; or the line saying why not (str)."""
    name = card_name(item)
    if linked is None:
        return f"{name}: its question file is not known (practised before examprep kept it); " + _ways_out(name)
    path = Path(linked.path)
    shown = printable(linked.path)
    if not path.exists():
        return f"{name}: {shown} is missing (last used {_when(linked.linked)}); " + _ways_out(name)
    try:
        text = read_user_text(path, linked.path, error=QuestionError, kind="question file")
        if text_sha256(text) != linked.sha256:
            return (f"{name}: {shown} has changed since it was last used, {_when(linked.linked)} (its schedule was "
                    "earned on the old text); " + _ways_out(name, linked.path))
        return parse_question(text, linked.path)
    except QuestionError as err:
        return _undrawable(item, err)


def _undrawable(item: str, err: Exception) -> str:
    name = card_name(item)
    return f"{name}: cannot be drawn: {printable(str(err))}; " + _ways_out(name)


def gone(item: str) -> str:
    """The line for a due card whose topic or concept question this examprep does not have."""
    name = card_name(item)
    what = "concept question" if item.startswith("concept:") else "topic"
    return f"{name}: no such {what} in this examprep; `examprep review --drop {shlex.quote(name)}` ends the card"


def unreviewable(history: History, cards: list[Any], *, topics: Any, concepts: Any) -> dict[str, str]:
    """item -> the line `examprep review` says for each of ``cards`` (review.Card) it cannot serve: a
    question file's card whose file is unknown, missing, changed or not a valid question (blocked), a
    topic or concept question not among ``topics`` and ``concepts`` (gone). `examprep review --due`
    marks these, and does not count them as due for practice."""
    linked = history.card_files()
    out = {}
    for c in cards:
        if is_question_item(c.item):
            line = blocked(c.item, linked.get(c.item))
        elif (c.kind == "topic" and c.name in topics) or (c.kind == "concept" and c.name in concepts):
            line = None
        else:
            line = gone(c.item)
        if line is not None:
            out[c.item] = line
    return out


def resolve(history: History, name: str, option: str) -> str:
    """The item of the card ``name`` (as `examprep review --due` and these messages name it, or
    the item itself). ParamError naming the option when the schedule holds no such card."""
    items = [row[0] for row in history.cards()]
    for item in (name, f"topic:{name}", f"topic:{canonical(name.removeprefix('topic:'))}"):
        if item in items:
            return item
    names = [card_name(i) for i in items]
    close = [n for n in names if name and name in n][:3] or difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `examprep review --due` lists the cards"
    raise ParamError(f"{option}: no card {printable(name)!r} in the review schedule{hint}")


def drop(history: History, item: str) -> str:
    """`examprep review --drop CARD`: the card (its item, from resolve) off the schedule. Returns
    what was done, one line."""
    history.drop_card(item)
    return (f"Dropped {card_name(item)} from the review schedule; its attempts stay in your history "
            "(`examprep stats`).")


def relink(history: History, item: str, file: str, *, now: float) -> str:
    """`examprep review --relink CARD FILE`: review the card (its item, from resolve) from FILE as
    it is now, keeping its schedule. ParamError for a card that is not a question file's or a FILE
    holding another question; QuestionError (naming the line) for a FILE that is not a valid question."""
    if not is_question_item(item):
        raise ParamError(f"--relink: {card_name(item)} is a built-in "
                         f"{'concept question' if item.startswith('concept:') else 'topic'}; only a question file's "
                         "card is re-linked")
    spec = load_question(file)
    if spec.generator != card_name(item):
        raise ParamError(f"--relink: {printable(file)} holds question {spec.id!r}, not "
                         f"{card_name(item)[len(QUESTION):]!r}: a card is re-linked to its own question (its id)")
    link = link_of(spec)
    history.relink_card(item, link, now=now)
    return f"{card_name(item)} is reviewed from {printable(link.path)} as it is now; its schedule is kept."
