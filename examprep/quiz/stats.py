"""Progress: accuracy and trend per topic, time per problem, frequent misconceptions, and what is
due for review (`examprep stats`, `examprep review --due`)."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from examprep import generators
from examprep.history import Attempt, History, misconception_stats, topic_stats
from examprep.quiz.cards import unreviewable
from examprep.sources.concepts import CONCEPT_PREFIX, packaged_bank
from examprep.quiz.prompt import Terminal
from examprep.quiz.views import bar, fmt_clock, fmt_duration, sparkline
from examprep.render import plural
from examprep.review import all_cards, topic_item

def stats_data(history: History, *, now: float, topic: str | None = None, days: float | None = None) -> dict:
    """Progress as plain data (for the table and --json)."""
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




def _concept_topic(item: str) -> str:
    qid = item[len(CONCEPT_PREFIX):]
    q = packaged_bank().questions.get(qid)
    return q.stats_topic if q else "concepts"


def _last_feedback(attempts: list[Attempt], topic: str, mid: str) -> str:
    for a in reversed(attempts):
        if a.topic == topic and a.misconception == mid and a.feedback:
            return a.feedback
    return ""


def print_stats(term: Terminal, data: dict, *, now: float) -> None:
    out = term.console
    if not data["topics"]:
        if data.get("filtered"):
            out.print(f"No attempts match: {data['filtered']}. `examprep stats` without filters shows everything.")
        else:
            out.print("No attempts yet: run `examprep quiz` to start.")
        return
    out.print(Text(f"{plural(data['problems'], 'problem')} ({plural(data['attempts'], 'part')}) · "
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
        arrow = Text("") if trend is None else (Text("▲", style="green") if trend > 0.05
                                                else Text("▼", style="red") if trend < -0.05 else Text("="))
        due = r["due"]
        if due is None:
            review_text = "—"
        elif due <= now:
            review_text = Text("due now", style="bold yellow")
        else:
            review_text = f"in {fmt_duration(due - now)}"
        table.add_row(r["topic"], str(r["problems"]), f"{bar(r['accuracy'], 8)} {r['accuracy'] * 100:3.0f}%",
                      Text.assemble(f"{sparkline(r['scores'][-8:])} ", arrow), fmt_clock(r["seconds_per_problem"]), review_text)
    out.print(table)
    if data["misconceptions"]:
        mt = Table(box=box.SIMPLE, title="Most frequent misconceptions", title_justify="left")
        mt.add_column("×", justify="right")
        mt.add_column("topic: mistake", style="red", overflow="fold")
        mt.add_column("what it means", overflow="fold")
        for m in data["misconceptions"]:
            mt.add_row(str(m["count"]), f"{m['topic']}: {m['id']}", m["explanation"])
        out.print(mt)


def print_due(term: Terminal, history: History, *, now: float, name_unreviewable: bool = True) -> None:
    """What is due for review now, and what comes next. A due card `examprep review` cannot serve (its
    question file missing or changed, its topic gone: examprep.quiz.cards.unreviewable) is not among
    those it practises: one line each says why and what to do (``name_unreviewable`` False: where
    `examprep review` has just said them)."""
    out = term.console
    cards = all_cards(history, now=now)
    due = [c for c in cards if c.due <= now]
    gens = generators.load_all()
    concepts = packaged_bank().questions
    seen = {c.name for c in cards if c.kind == "topic"}
    seen_concepts = {c.name for c in cards if c.kind == "concept"}
    new_topics = [g for g in gens if g not in seen]
    new_concepts = [q for q in concepts if q not in seen_concepts]
    if not cards:
        out.print("Nothing scheduled yet: each topic you practise (`examprep quiz`) gets a review date.")
        return
    cannot = unreviewable(history, due, topics=gens, concepts=concepts)
    due = [c for c in due if c.item not in cannot]
    if cannot and name_unreviewable:
        out.print(Text(f"Due, but `examprep review` cannot serve {plural(len(cannot), 'card')} until fixed:",
                       style="yellow"))
        for line in cannot.values():
            out.print(Text(f"  {line}", style="yellow"), soft_wrap=True)     # one line each, whole, for grep
    if due:
        table = Table(box=box.SIMPLE_HEAVY, title=f"Due now: {len(due)}", title_justify="left")
        table.add_column("item", style="cyan", no_wrap=True)
        table.add_column("overdue", justify="right")
        table.add_column("recall", justify="right")
        table.add_column("reviews", justify="right")
        for c in due:
            table.add_row(_item_label(c.item), fmt_duration(now - c.due), _recall(c.retrievability), str(c.reviews))
        out.print(table)
        out.print(Text("`examprep review` practises them (each topic with a new variant).", style="dim"))
        if any(c.state in ("Learning", "Relearning") for c in due):
            out.print(Text("recall: FSRS's predicted chance that you recall it now. A card just missed or new comes "
                           "back after a short learning step (minutes), while that chance is still high.", style="dim"))
    else:
        later = [c for c in cards if c.due > now]
        nxt = min(later, key=lambda c: c.due) if later else None
        out.print(f"Nothing {'else ' if cannot else ''}is due"
                  + (f". Next: {_item_label(nxt.item)} in {fmt_duration(nxt.due - now)}." if nxt else "."))
    upcoming = [c for c in cards if now < c.due <= now + 7 * 86400]
    if upcoming:
        out.print(Text(f"Due in the next 7 days: {len(upcoming)}", style="dim"))
    if new_topics or new_concepts:
        out.print(Text(f"Not yet studied: {len(new_topics)} topics, {len(new_concepts)} concept questions "
                       "(`examprep quiz`, `examprep quiz --concepts`).", style="dim"))
    fitted = history.fsrs_parameters()
    if fitted and fitted["parameters"]:
        out.print(Text(f"Scheduled with your own FSRS parameters, fitted on {datetime.fromtimestamp(fitted['time']):%Y-%m-%d} "
                       f"to {fitted['reviews']} reviews (`examprep review --optimize`).", style="dim"))


def _recall(r: float) -> str:
    """A predicted recall as a percentage; never "100%", which no reviewed card has once time passes."""
    return ">99%" if r >= 0.995 else f"{100 * r:.0f}%"


def _item_label(item: str) -> str:
    kind, _, name = item.partition(":")
    return name if kind == "topic" else f"concept {name}"
