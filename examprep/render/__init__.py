"""Renderers of Problems and documents: terminal (rich), Markdown, Typst PDF, Moodle XML, reports."""
from __future__ import annotations

import re
from typing import Any

# one setting for a decimal-comma sheet, read and printed alike (examprep.decimal_comma)
from examprep.decimal_comma import decimal_comma, decimal_comma_on  # noqa: F401  (the renderers' API too)

_DECIMAL = re.compile(r"(?<![\w.,])(\d+)\.(\d+)(?![\w.])")     # 0.25, −1.5, 2.5%; not 1.2.3, v1.2, x.5
_THOUSANDS = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\w.,])")    # 65,536: a narrow space instead
_MATH = re.compile(r"(\$[^$]+\$)")


def decimals(text: str, comma: str = ",") -> str:
    """``text`` with its decimal numbers written with ``comma`` (0.25 → 0,25) and a narrow space
    between groups of thousands (65,536 → 65 536) when decimal_comma() is on, else unchanged.
    ``comma``: what stands for the comma (in math, a form that is not a list separator)."""
    if not decimal_comma_on() or not ("." in text or "," in text):
        return text
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", "\u202f"), text)    # 65,536 would read 65.536
    return _DECIMAL.sub(lambda m: f"{m.group(1)}{comma}{m.group(2)}", text)


def answer_form(part: Any) -> str:
    """A part's expected form (Part.form(): "vector of 2 [a, b, …]"), with ';' between list entries
    within decimal_comma(), as such a sheet's answers are written: "[a; b; …]"."""
    form = part.form()
    if decimal_comma_on() and "[" in form:
        head, _, rest = form.partition("[")
        return f"{head}[{rest.replace(', ', '; ')}"
    return form


def prose_decimals(text: str, math_comma: str) -> str:
    """decimals() for a paragraph with $…$ inline math: plain commas in the words, ``math_comma``
    inside the math."""
    if not decimal_comma_on() or not ("." in text or "," in text):
        return text
    return "".join(decimals(piece, math_comma if piece.startswith("$") and piece.endswith("$") and len(piece) > 1
                            else ",") for piece in _MATH.split(text))


# A symbol of the course's notation typed in prose (a statement, a convention, a hint, a mistake's
# explanation, a step's title): a one-letter base, Latin or Greek (or ∏, ∑), with a subscript
# (letters and digits, or a {…} or (…) group) and optionally a braced superscript, then primes, ᵀ, ²
# or ³ — d_k, W_hn, C_out, δ_ij, h_{t−1}, h_(t−1), e^{z_i}, x_nᵀ, h_k²; or a number with a braced
# superscript, 10000^{2i/d_model}. Not a name with a longer base or a second underscore
# (kernel_size, grad_w1, h_new_pytorch, max_pool2d: code and part ids), nor one inside a word, a
# number (2x_1), a dotted name or file name (x_train.csv), a code span or math.
_GROUP = r"\{[^{}$`]*\}"
_PROSE_SYMBOL = re.compile(rf"(?<![\w\\.$`])(?P<base>[A-Za-zα-ωΑ-Ω∏∑]|\d+(?=\^\{{))"
                           rf"(?P<scripts>_(?:{_GROUP}|\([^()$`]*\)|[A-Za-z0-9]+)(?:\^{_GROUP})?|\^{_GROUP})"
                           r"(?P<primes>'*)(?P<power>[ᵀ²³]?)(?![\w{]|\.\w)")
_POWER = {"": "", "ᵀ": r"^{\top}", "²": "^{2}", "³": "^{3}"}
_PROSE_PIECES = re.compile(r"(\$[^$]+\$|`[^`]*`)")       # math and code in prose: left as they are


def _symbol_latex(m: re.Match) -> str:
    """A prose symbol as inline LaTeX: d_k → $d_{k}$, h_(t−1) → $h_{t-1}$, x_nᵀ → $x_{n}^{\\top}$;
    inside a group, a subscript of several characters is braced (2i/d_model → 2i/d_{model})."""
    pieces = re.findall(r"[_^](?:\{[^{}]*\}|\([^()]*\)|[A-Za-z0-9]+)", m.group("scripts"))
    body = ""
    for piece in pieces:
        inner = piece[2:-1] if piece[1] in "{(" else piece[1:]
        body += piece[0] + "{" + re.sub(r"_([A-Za-z0-9]{2,})", r"_{\1}", inner) + "}"
    return "$" + (m.group("base") + body + m.group("primes")).replace("−", "-") + _POWER[m.group("power")] + "$"


def prose_symbols(text: str) -> str:
    """``text`` with each symbol of the course's notation it types in prose (see _PROSE_SYMBOL:
    d_k, W_hn, h_{t−1}) as inline math, ``$d_{k}$``, which every renderer typesets as its own math
    (a subscript in the PDF and in Markdown, Unicode in the terminal where the subscript has one);
    the rest of the text, its $…$ math and its `code` as they were. Text with an unpaired "$" is
    returned as it is (a "$" added could pair with it)."""
    if "_" not in text and "^{" not in text or text.count("$") % 2:
        return text
    return "".join(piece if _PROSE_PIECES.fullmatch(piece) else _PROSE_SYMBOL.sub(_symbol_latex, piece)
                   for piece in _PROSE_PIECES.split(text))


def plural(n: float, word: str) -> str:
    """"1 problem", "2 problems", "0.5 points": a count and its noun, agreeing in number (0,5 points
    within decimal_comma())."""
    return decimals(f"{n:g} {word}{'' if n == 1 else 's'}")


def fmt_points(x: float) -> str:
    """A score or a number of points as grade and the quiz show it: to 2 decimals, trailing zeros
    dropped ("0.33", "6.5", "7")."""
    return f"{x:.2f}".rstrip("0").rstrip(".")


def shape_answer(part: Any) -> str | None:
    """The key's answer as the sheet writes it where the part's answer is a tensor shape
    ("16×24×24") or a list of them, one per layer ("3×28×28; 6×24×24; 864"); None for any other part."""
    if part.kind == "vector" and part.tensor_shape:
        return "×".join(str(int(d)) for d in part.expected)
    if part.kind == "shapes":
        return "; ".join("×".join(str(int(d)) for d in shape) for shape in part.expected)
    return None


def receptive_field_rows(fig: Any) -> list[str]:
    """A receptive-field figure (document.ReceptiveField) in words, one line per layer, top layer
    first: "conv 2: units 3…7 (5 used, 1 of them padding)" — the text renderers' form of it."""
    rows = []
    for level in reversed(range(len(fig.sizes))):
        units = fig.needed[level]
        pad = sum(1 for u in units if u < 0 or u >= fig.sizes[level])
        span = f"units {units[0]}…{units[-1]}" if len(units) > 1 else f"unit {units[0]}"
        rows.append(f"{fig.labels[level]}: {span} ({len(units)} used" + (f", {pad} of them padding" if pad else "") + ")")
    return rows


def choices_shown(part: Any) -> list[str]:
    """A choice part's options in alphabetical order: the order the generator lists them in
    (the correct one first, often) must not leak onto paper."""
    return sorted((str(c) for c in part.choices), key=str.casefold)


def part_note(part: Any, *, listed: bool = True) -> str:
    """The expected form and precision of a part's answer, as printed under its prompt
    (``listed``: name a choice's options, where no answer box shows them)."""
    if part.kind == "choice":
        return "choose one: " + "; ".join(choices_shown(part)) if listed else "circle one"
    if part.kind == "written":
        return "written answer, marked by hand"
    return decimals(f"{answer_form(part)}; {part.tolerance.describe()}")


def accepted(part: Any) -> str:
    """What a part accepts, in words: its tolerance, or "marked by hand" for a written part."""
    return "marked by hand" if part.kind == "written" else decimals(part.tolerance.describe())


def model_answer_text(part: Any) -> str:
    """A written part's model answer with its rubric, on one line (answer tables print it)."""
    rubric = f" Rubric: {'; '.join(part.rubric)}." if part.rubric else ""
    return f"{part.model_answer}{rubric}"
