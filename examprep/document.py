"""The document model: renderer-neutral blocks for statements and worked solutions.

Every renderer (terminal, Markdown, Typst) reads these blocks and nothing else. Math is LaTeX
(the subset our formulas use); inline math inside Text is written between ``$…$``.
Each block round-trips through JSON: ``to_dict`` adds a "type" tag, ``block_from_dict`` reads it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Union


@dataclass(frozen=True)
class Text:
    """A paragraph; ``$…$`` marks inline LaTeX math."""

    text: str


@dataclass(frozen=True)
class Math:
    """A display formula in LaTeX."""

    latex: str


@dataclass(frozen=True)
class Matrix:
    """A named vector or matrix of numbers (or exact strings such as "\\ln 2"), shown as a table.

    ``values`` is a list (vector) or list of lists (matrix); ``row_labels``/``col_labels`` name
    rows and columns (tokens, gates) where they help.
    """

    name: str
    values: Any
    row_labels: list[str] | None = None
    col_labels: list[str] | None = None


@dataclass(frozen=True)
class Table:
    header: list[str]
    rows: list[list[Any]]


@dataclass(frozen=True)
class Heatmap:
    """A matrix of weights in [0, 1] drawn as shaded cells (attention maps)."""

    title: str
    values: list[list[float]]
    row_labels: list[str] = field(default_factory=list)
    col_labels: list[str] = field(default_factory=list)


Block = Union[Text, Math, Matrix, Table, Heatmap]
_TYPES = {"text": Text, "math": Math, "matrix": Matrix, "table": Table, "heatmap": Heatmap}
_NAMES = {cls: name for name, cls in _TYPES.items()}


def to_dict(block: Block) -> dict[str, Any]:
    return {"type": _NAMES[type(block)], **asdict(block)}


def block_from_dict(d: dict[str, Any]) -> Block:
    d = dict(d)
    cls = _TYPES[d.pop("type")]
    return cls(**d)


def blocks_to_list(blocks: list[Block]) -> list[dict[str, Any]]:
    return [to_dict(b) for b in blocks]


def blocks_from_list(items: list[dict[str, Any]]) -> list[Block]:
    return [block_from_dict(d) for d in items]
