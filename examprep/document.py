"""The document model: renderer-neutral blocks for statements and worked solutions.

Every renderer (terminal, Markdown, Typst) reads these blocks and nothing else. Math is LaTeX
(the subset our formulas use); inline math inside Text is written between ``$…$``.
Each block round-trips through JSON: ``to_dict`` adds a "type" tag, ``block_from_dict`` reads it.
"""
from __future__ import annotations

import re
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


@dataclass(frozen=True)
class ReceptiveFieldFigure:
    """What one output of the last layer of a conv/pool stack depends on, level by level (a figure
    a generator draws for its solutions; computed when a sheet is rendered, never stored in JSON).

    Level 0 is the input, level l the output of layer l. ``sizes[l]``: the level's length;
    ``needed[l]``: indices of the units the chosen output reads there (negative or ≥ size: padding);
    ``jumps[l]``: input positions between neighbouring units of level l (product of the strides);
    ``offsets[l]``: input position where unit 0 of level l starts reading;
    ``fields[l]``: how many input positions one unit of level l spans (its receptive field);
    ``receptive_field``: the engine's receptive field (the span of ``needed[0]``).
    """

    sizes: list[int]
    needed: list[list[int]]
    jumps: list[int]
    offsets: list[float]
    fields: list[int]
    labels: list[str]
    receptive_field: int


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


_LATEX_NAMES = {"α": r"\alpha", "α (exact)": r"\alpha"}
_SYMBOL = re.compile(r"([A-Za-z])(?:_([A-Za-z0-9]{1,2}))?('*)")


def name_latex(name: str) -> str:
    """A value's name (a Matrix block's, a question's parameter's) as LaTeX, for every renderer that
    writes math: a symbol with a short subscript as a subscript (W_1 → W_{1}, W_ih → W_{ih}, as the
    PDF prints it; once ``\\mathrm{W\\_1}``, which MathJax shows as a literal "W_1"), a list of
    symbols each so, other names as upright words (grad_weight)."""
    if name in _LATEX_NAMES:
        return _LATEX_NAMES[name]
    if name.startswith("\\"):
        return name
    symbols = [_SYMBOL.fullmatch(s) for s in name.split(", ")]
    if all(symbols):
        return ", ".join(f"{m.group(1)}{'_{' + m.group(2) + '}' if m.group(2) else ''}{m.group(3)}" for m in symbols)
    return name if len(name) <= 2 else r"\mathrm{" + name.replace("_", r"\_") + "}"
