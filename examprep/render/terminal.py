"""Terminal rendering with rich: worked solutions, matrices as aligned tables, topic lists."""
from __future__ import annotations

import math
import os
from typing import Any

from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from examprep.render.latex import to_text


def console(no_color: bool = False) -> Console:
    return Console(no_color=no_color or bool(os.environ.get("NO_COLOR")), highlight=False,
                   soft_wrap=False)


def fmt_number(x: Any) -> str:
    """A number as a person writes it: integers plainly, floats to 6 significant figures."""
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    if x is None:
        return "—"
    f = float(x)
    if math.isinf(f):
        return "−∞" if f < 0 else "∞"
    if math.isnan(f):
        return "undefined"
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    text = f"{f:.6g}"
    return text.replace("-", "−") if text.startswith("-") else text


def value_renderable(value: Any) -> Any:
    """A scalar as text, a vector as a one-row table, a matrix as an aligned table."""
    try:
        import numpy as np
        if isinstance(value, np.ndarray):
            value = value.tolist()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], (list, tuple)):
        table = Table(box=box.SQUARE, show_header=False, padding=(0, 1))
        for _ in value[0]:
            table.add_column(justify="right")
        for row in value:
            table.add_row(*(fmt_number(v) for v in row))
        return table
    if isinstance(value, (list, tuple)):
        if value and isinstance(value[0], str):
            return Text(", ".join(value))
        return Text("[" + ", ".join(fmt_number(v) for v in value) + "]")
    if isinstance(value, dict):
        table = Table(box=None, show_header=False, padding=(0, 1))
        table.add_column(style="cyan")
        table.add_column(justify="right")
        for k, v in value.items():
            table.add_row(str(k), fmt_number(v))
        return table
    return Text(fmt_number(value) if not isinstance(value, str) else value)


def values_block(values: dict[str, Any]) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold cyan", no_wrap=True)
    grid.add_column()
    for name, val in values.items():
        grid.add_row(name, value_renderable(val))
    return grid


def print_solution(solution: Any, *, no_color: bool = False) -> None:
    """Print a solve.Solution: conventions, each step (formula and values), then the answer."""
    from examprep.solve import TOPICS

    out = console(no_color)
    title = TOPICS[solution.topic].title if solution.topic in TOPICS else solution.topic
    out.print(Text(f"{solution.topic} — {title}", style="bold"))
    if solution.conventions:
        conv = Table.grid(padding=(0, 2))
        conv.add_column(style="dim")
        conv.add_column()
        for k, v in solution.conventions.items():
            conv.add_row(k, v)
        out.print(Panel(conv, title="conventions", title_align="left", box=box.ROUNDED, expand=False))
    for n, step in enumerate(solution.steps, 1):
        out.print(Text(f"Step {n}. {step.title}", style="bold"))
        out.print(Text("  " + to_text(step.formula), style="yellow"))
        if step.values:
            out.print(Padding(values_block(step.values), (0, 0, 0, 4)))
    out.print(Panel(values_block(solution.answer), title="answer", title_align="left",
                    box=box.HEAVY, expand=False, border_style="green"))


def print_topic_list(topics: dict, *, no_color: bool = False) -> None:
    """The solve topics with their parameters (defaults in brackets) and answer names."""
    from examprep.solve import REQUIRED

    out = console(no_color)
    table = Table(box=box.SIMPLE_HEAVY, show_lines=False)
    table.add_column("topic", style="bold cyan", no_wrap=True)
    table.add_column("parameters (default)")
    table.add_column("answer", style="green")
    for t in topics.values():
        parts = []
        for p in t.params:
            if p.default is REQUIRED:
                parts.append(p.name)
            elif p.default is None:
                parts.append(f"[{p.name}]")
            else:
                parts.append(f"{p.name}={fmt_number(p.default) if not isinstance(p.default, str) else repr(p.default)}")
        table.add_row(t.name, Group(Text(t.title, style="dim"), Text(", ".join(parts))), ", ".join(t.answers))
    out.print(table)
