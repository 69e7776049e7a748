"""Typst rendering: our LaTeX subset as Typst math, the document model as Typst markup, and the
compiler call that turns a Typst source into PDF bytes.

The PDF is compiled by the ``typst`` Python package (it bundles the compiler and its fonts: no TeX,
no network, no system fonts). Everything is deterministic: built-in fonts only, no creation date,
so the same source gives byte-identical PDFs on any machine.

Escaping: every piece of text (ours or a user's: titles, course names, student names) reaches
Typst as a string literal (``#"…";``), never as markup, so no character in it can start markup,
code, a reference or an import. Math is converted token by token from LaTeX; unknown macros
raise ``UnsupportedLatex`` in strict mode (the tests run every formula our topics produce through
it) and are printed upright by name otherwise.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable

from examprep import document as d
from examprep.errors import ExamprepError


class UnsupportedLatex(ValueError):
    """A LaTeX construct outside the subset this converter knows (a bug in a formula of ours)."""


class TypstCompileError(ExamprepError):
    """The Typst compiler rejected a document; the message is Typst's own."""

    exit_code = 1


# ------------------------------------------------------------------------------ LaTeX → Typst math

# Symbols as Unicode characters: Typst math accepts them directly, and their names never change
# between Typst releases (several sym names were renamed in 0.13–0.15).
_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "upsilon": "υ", "phi": "ϕ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ",
    "Pi": "Π", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "odot": "⊙", "otimes": "⊗", "oplus": "⊕", "cdot": "⋅", "times": "×", "div": "÷", "pm": "±", "mp": "∓",
    "circ": "∘", "ast": "∗", "star": "⋆", "bullet": "∙",
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "equiv": "≡",
    "sim": "∼", "simeq": "≃", "propto": "∝", "ll": "≪", "gg": "≫", "in": "∈", "notin": "∉", "subset": "⊂",
    "subseteq": "⊆", "cup": "∪", "cap": "∩", "forall": "∀", "exists": "∃", "emptyset": "∅",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "gets": "←", "Rightarrow": "⇒", "Leftarrow": "⇐",
    "Leftrightarrow": "⇔", "leftrightarrow": "↔", "mapsto": "↦", "implies": "⟹", "iff": "⟺",
    "partial": "∂", "nabla": "∇", "infty": "∞", "ell": "ℓ", "top": "⊤", "bot": "⊥", "perp": "⊥",
    "prime": "'", "lceil": "⌈", "rceil": "⌉", "lfloor": "⌊", "rfloor": "⌋", "langle": "⟨", "rangle": "⟩",
    "vert": "|", "mid": "|", "Vert": "‖", "lvert": "|", "rvert": "|", "lVert": "‖", "rVert": "‖",
    "ldots": "…", "dots": "…", "cdots": "⋯", "vdots": "⋮", "ddots": "⋱",
    "colon": ":", "neg": "¬", "land": "∧", "lor": "∨", "angle": "∠", "degree": "°",
}
# Operators Typst predefines (upright, with limits where LaTeX puts them)
_OPERATORS = {"sin", "cos", "tan", "tanh", "sinh", "cosh", "exp", "log", "ln", "lg", "max", "min", "sup", "inf",
              "lim", "arg", "det", "dim", "ker", "gcd", "Pr", "liminf", "limsup", "arccos", "arcsin", "arctan"}
_BIG = {"sum": "sum", "prod": "product", "coprod": "product.co", "int": "integral", "oint": "integral.cont",
        "bigcup": "union.big", "bigcap": "sect.big"}
_SPACES = {",": "thin", ":": "med", ";": "thick", " ": "med", "quad": "quad", "qquad": "wide", "!": "",
           "enspace": "med", "thinspace": "thin"}
_ACCENTS = {"hat": "hat", "widehat": "hat", "tilde": "tilde", "widetilde": "tilde", "bar": "overline",
            "overline": "overline", "underline": "underline", "vec": "arrow", "dot": "dot", "ddot": "dot.double",
            "check": "caron", "breve": "breve", "acute": "acute", "grave": "grave"}
_STYLES = {"mathbf": "bold", "boldsymbol": "bold", "bm": "bold", "mathit": "italic", "mathcal": "cal",
           "mathbb": "bb", "mathsf": "sans", "mathtt": "mono", "mathfrak": "frak"}
_TEXT = {"text": "", "textrm": "", "mbox": "", "textnormal": "", "textit": "italic", "textbf": "bold",
         "texttt": "mono"}
_DELIMS = {"(": "(", ")": ")", "[": "[", "]": "]", "\\{": "\\{", "\\}": "\\}", "|": "|", "\\|": "‖",
           ".": "", "/": "\\/"}
_ENV_DELIMS = {"matrix": None, "smallmatrix": None, "bmatrix": "[", "pmatrix": "(", "vmatrix": "|",
               "Vmatrix": "‖", "Bmatrix": "{"}
# characters that mean something in Typst math and are literal in LaTeX
_ESCAPE = {"/": "\\/", ",": "\\,", ";": "\\;", "#": "\\#", "$": "\\$", "@": "\\@", '"': '\\"', "`": "\\`",
           "<": "lt", ">": "gt", "~": "med", "&": "", "%": "%", "*": "∗"}

_EMPTY = '""'
_SHADE = 'rgb("#3a6ea5")'
_TOKEN = re.compile(r"\\(?:[A-Za-z]+\*?|.)|\d+(?:\.\d+)?|\s+|.", re.S)


def typst_string(text: str) -> str:
    """A Typst string literal holding ``text`` verbatim."""
    out = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "").replace("\t", " ")
    return f'"{out}"'


class _Parser:
    def __init__(self, latex: str, strict: bool):
        self.src = latex
        self.toks = [t for t in _TOKEN.findall(latex)]
        self.i = 0
        self.strict = strict

    # -- token helpers
    def peek(self, skip_space: bool = True) -> str | None:
        j = self.i
        while skip_space and j < len(self.toks) and self.toks[j].isspace():
            j += 1
        return self.toks[j] if j < len(self.toks) else None

    def next(self, skip_space: bool = True) -> str | None:
        while skip_space and self.i < len(self.toks) and self.toks[self.i].isspace():
            self.i += 1
        if self.i >= len(self.toks):
            return None
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, why: str) -> str:
        if self.strict:
            raise UnsupportedLatex(f"{why} in {self.src!r}")
        return ""

    # -- grammar
    def raw_group(self) -> str:
        """The verbatim source of a {…} group (or of the next token), for \\text and friends."""
        tok = self.next()
        if tok != "{":
            return "" if tok is None else tok
        depth, out = 1, []
        while self.i < len(self.toks):
            t = self.toks[self.i]
            self.i += 1
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    return "".join(out)
            out.append(t)
        self.fail("unclosed {")
        return "".join(out)

    def argument(self) -> str:
        """One argument: a {…} group or a single atom, as Typst math."""
        tok = self.peek()
        if tok == "{":
            self.next()
            return self.sequence(stop={"}"})
        if tok is not None and tok[0].isdigit() and len(tok) > 1:
            # a macro argument is one character: \tfrac14 is 1/4, x^23 is x²3
            while self.toks[self.i].isspace():
                self.i += 1
            self.toks[self.i:self.i + 1] = [tok[0], tok[1:]]
        return self.atom() or ""

    def sequence(self, stop: set[str] = frozenset(), env: str | None = None) -> str:
        frags: list[str] = []
        self.stopped = None
        while True:
            tok = self.peek()
            if tok is None:
                self.stopped = None
                if stop:
                    self.fail(f"missing {' or '.join(sorted(stop))}")
                break
            if tok in stop:
                self.next()
                self.stopped = tok
                break
            if tok == r"\end" and env:
                break
            if tok in ("_", "^"):
                self.next()
                arg = self.argument()
                base = frags.pop() if frags else '""'
                frags.append(f"{base}{tok}{_script(arg)}")
                continue
            if tok == "'":
                self.next()
                if frags:
                    frags[-1] += "'"
                else:
                    frags.append("'")
                continue
            if tok in ("&", r"\\") and env:
                self.next()
                frags.append("&" if tok == "&" else "\x00ROW\x00")
                continue
            piece = self.atom()
            if piece:
                frags.append(piece)
        return " ".join(frags)

    def atom(self) -> str:
        tok = self.next()
        if tok is None:
            return ""
        if tok == "{":
            return self.sequence(stop={"}"})
        if tok == "}":
            return self.fail("unbalanced }")
        if tok[0].isdigit():
            return tok
        if tok.isalpha():
            return tok if len(tok) == 1 else " ".join(tok)
        if tok.startswith("\\"):
            return self.command(tok)
        if tok in _ESCAPE:
            return _ESCAPE[tok]
        if tok in "()[]|+-=!?.:'":
            return tok
        if tok in "_^":      # handled by sequence(); here only after a script with no base
            return self.fail(f"unexpected {tok}")
        return tok       # any other Unicode character (→, ⊙, ∈, letters with accents) is a symbol

    def command(self, tok: str) -> str:
        name = tok[1:]
        if name in _SYMBOLS:
            return _SYMBOLS[name]
        if name in _OPERATORS:
            return name
        if name in _BIG:
            return _BIG[name]
        if name in _SPACES:
            return _SPACES[name]
        if name in ("{", "}", "_", "#", "$", "%", "&"):
            return {"{": "\\{", "}": "\\}", "_": "\\_", "#": "\\#", "$": "\\$", "%": "%", "&": "\\&"}[name]
        if name == "|":
            return "‖"
        if name == "\\":
            return "\\ "
        if name in ("frac", "tfrac", "dfrac", "cfrac"):
            num, den = self.argument(), self.argument()
            return f"frac({num or _EMPTY}, {den or _EMPTY})"
        if name == "binom":
            top, bottom = self.argument(), self.argument()
            return f"binom({top}, {bottom})"
        if name == "sqrt":
            index = None
            if self.peek() == "[":
                self.next()
                index = self.sequence(stop={"]"})
            body = self.argument()
            return f"root({index}, {body})" if index else f"sqrt({body})"
        if name in _TEXT:
            text = _latex_text(self.raw_group())
            wrap = _TEXT[name]
            return f"{wrap}({typst_string(text)})" if wrap else typst_string(text)
        if name in ("mathrm", "operatorname", "operatorname*"):
            raw = self.raw_group()
            if re.fullmatch(r"[A-Za-z0-9 ]*(\\_[A-Za-z0-9 ]*)*", raw):
                word = raw.replace("\\_", "_")
                if name != "mathrm" or (len(word) > 1 and word.isalpha()):
                    limits = ", limits: #true" if name.endswith("*") else ""
                    return f"op({typst_string(word)}{limits})"
                return f"upright({typst_string(word)})"
            return f"upright({_Parser(raw, self.strict).sequence()})"
        if name in _STYLES:
            return f"{_STYLES[name]}({self.argument()})"
        if name in _ACCENTS:
            return f"{_ACCENTS[name]}({self.argument()})"
        if name in ("left", "bigl", "Bigl", "biggl", "Biggl", "big", "Big", "bigg", "Bigg", "bigr", "Bigr",
                    "biggr", "Biggr", "right"):
            delim = self.next()
            shown = _DELIMS.get(delim, _SYMBOLS.get((delim or "\\")[1:], delim)) if delim else ""
            if name != "left":
                return shown or ""
            body = self.sequence(stop={r"\right"})
            if self.stopped == r"\right":
                close = self.next()
                closing = _DELIMS.get(close, _SYMBOLS.get((close or "\\")[1:], close)) if close else ""
            else:
                closing = ""
                self.fail("\\left without \\right")
            return f"lr({shown} {body} {closing})".replace("lr( ", "lr(")
        if name == "mathbb":
            return f"bb({self.argument()})"
        if name == "begin":
            return self.environment(self.raw_group())
        if name in ("displaystyle", "textstyle", "limits", "nolimits", "nonumber", "notag"):
            return ""
        if name == "not":
            return f"cancel({self.atom()})"
        return self.fail(f"unsupported LaTeX command {tok}") or f"upright({typst_string(name)})"

    def environment(self, env: str) -> str:
        body = self.sequence(env=env)
        if self.next() != r"\end":
            self.fail(f"\\begin{{{env}}} without \\end")
        end = self.raw_group()
        if end != env:
            self.fail(f"\\begin{{{env}}} closed by \\end{{{end}}}")
        rows = [r.strip() for r in body.split("\x00ROW\x00")]
        rows = [r for r in rows if r]
        if env in _ENV_DELIMS:
            cells = "; ".join(", ".join(c.strip() or '""' for c in row.split("&")) for row in rows)
            delim = _ENV_DELIMS[env]
            opt = f"delim: {typst_string(delim)}, " if delim else "delim: #none, "
            return f"mat({opt}{cells})"
        if env == "cases":
            return "cases(" + ", ".join(r.replace("&", "&") for r in rows) + ")"
        if env in ("aligned", "align", "align*", "gathered", "split"):
            return " \\ ".join(rows)
        return self.fail(f"unsupported environment {env}") or " \\ ".join(rows)


def _latex_text(raw: str) -> str:
    """The text of a \\text{…} argument: LaTeX escapes undone."""
    out = re.sub(r"\\([_%&#${}])", r"\1", raw)
    out = out.replace("~", " ").replace("\\,", " ").replace("\\ ", " ")
    return out


def _script(arg: str) -> str:
    """A sub/superscript argument: bare when it is one letter or digit, else parenthesised."""
    if re.fullmatch(r"[A-Za-z0-9]|[^\x00-\x7f]", arg):
        return arg
    return f"({arg})"


def latex_to_typst(latex: str, *, strict: bool = False) -> str:
    """Typst math source (without the ``$``) for a formula in our LaTeX subset.

    Covers fractions, roots, sub/superscripts, accents (hat, tilde, bar), text, operators, big
    operators with limits, \\left…\\right, matrices (bmatrix, pmatrix, …), cases and Greek letters.
    ``strict``: raise UnsupportedLatex for anything outside the subset (used by the tests);
    otherwise an unknown macro is printed upright by name, so a document still compiles.
    """
    return _Parser(latex, strict).sequence().strip()


# ------------------------------------------------------------------------------ text and values

_INLINE = re.compile(r"\$([^$]+)\$")


def text(value: str, *, strict: bool = False) -> str:
    """Markup for a paragraph with ``$…$`` inline LaTeX: text as string literals, math converted."""
    out, pos = [], 0
    for m in _INLINE.finditer(value):
        if m.start() > pos:
            out.append(f"#{typst_string(value[pos:m.start()])};")
        out.append(math_inline(m.group(1), strict=strict))
        pos = m.end()
    if pos < len(value):
        out.append(f"#{typst_string(value[pos:])};")
    return "".join(out)


def math_inline(latex: str, *, strict: bool = False) -> str:
    body = latex_to_typst(latex, strict=strict)
    return f"${body}$" if body else ""


def math_display(latex: str, *, strict: bool = False) -> str:
    body = latex_to_typst(latex, strict=strict)
    return f"$ {body} $" if body else ""


_EXACT_WORDS = re.compile(r"\b(?:ln|log|sqrt|exp|e|pi)\b")


def is_exact_form(text: str) -> bool:
    """True for an exact value in the answer syntax ("e^2/(1 + e^2)", "ln 2", "-1/3", "sqrt(2)/2"),
    False for words (a choice such as "attending to later positions")."""
    rest = _EXACT_WORDS.sub("", text)
    return bool(text.strip()) and re.fullmatch(r"[0-9.+\-*/^()\s,]*", rest) is not None


def number(x: Any, digits: int = 4) -> str:
    """A value as Typst math: integers plainly, floats to ``digits`` significant figures, exact
    strings ("e^2/(1 + e^2)", "ln 2") typeset, words (a choice) upright, None (a masked score)
    as −∞."""
    if isinstance(x, str):
        from examprep.generators._exact import to_latex

        return latex_to_typst(to_latex(x)) if is_exact_form(x) else typst_string(x)
    if isinstance(x, bool):
        return typst_string(str(x).lower())
    if x is None:
        return "-∞"
    f = float(x)
    if math.isinf(f):
        return "-∞" if f < 0 else "∞"
    if math.isnan(f):
        return typst_string("undefined")
    if abs(f) < 1e-12:
        f = 0.0            # float noise of a value that is exactly 0 (a cancelled gradient)
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    s = f"{f:.{digits}g}"
    if "e" in s:
        mant, exp = s.split("e")
        return f"{mant} times 10^({int(exp)})".replace("times", "×")
    return s


def value_math(values: Any, digits: int = 4) -> str:
    """A scalar, vector (a bracketed row) or matrix as Typst math, at full size even inline."""
    if isinstance(values, list) and values and isinstance(values[0], list):
        rows = "; ".join(", ".join(number(v, digits) for v in row) for row in values)
        return f'display(mat(delim: "[", column-gap: #0.9em, {rows}))'
    if isinstance(values, list):
        if not values:
            return "[ ]"
        return 'display(mat(delim: "[", column-gap: #0.9em, ' + ", ".join(number(v, digits) for v in values) + "))"
    return number(values, digits)


_GREEK_NAMES = {"α": "α", "α (exact)": "α"}


def name_markup(name: str) -> str:
    """A value's name as markup: math for symbols (W_ih, α, \\hat y), plain text for words
    (grad_weight, pad_before)."""
    if name in _GREEK_NAMES:
        return f"${_GREEK_NAMES[name]}$" + (f"#{typst_string(name[1:])};" if name != "α" else "")
    if name.startswith("\\"):
        return math_inline(name)
    m = re.fullmatch(r"([A-Za-z])(?:_([A-Za-z0-9]{1,2}))?('*)", name)
    if m:
        base, sub, primes = m.groups()
        subs = f"_({' '.join(sub)})" if sub else ""
        return f"${base}{subs}{primes}$"
    return f"#{typst_string(name)};"


def block(b: Any, *, strict: bool = False) -> str:
    """One document-model block as Typst markup."""
    if isinstance(b, d.Text):
        return text(b.text, strict=strict)
    if isinstance(b, d.Math):
        return math_display(b.latex, strict=strict)
    if isinstance(b, d.Matrix):
        return _matrix(b)
    if isinstance(b, d.Table):
        cells = [f"[#strong[{text(h, strict=strict)}]]" for h in b.header]
        for row in b.rows:
            cells += [f"[{text(c, strict=strict) if isinstance(c, str) else '$' + number(c) + '$'}]" for c in row]
        return (f"#align(center, table(columns: {len(b.header)}, align: center + horizon, stroke: 0.4pt + luma(140), "
                f"inset: (x: 6pt, y: 4pt), fill: (x, y) => if y == 0 {{ luma(235) }}, {', '.join(cells)}))")
    if isinstance(b, d.Heatmap):
        return heatmap(b.values, b.row_labels, b.col_labels, b.title)
    raise TypeError(f"unknown block {b!r}")


def _matrix(b: d.Matrix) -> str:
    vals = b.values
    is_matrix = isinstance(vals, list) and vals and isinstance(vals[0], list)
    if is_matrix and (b.row_labels or b.col_labels):
        return f"#labelled([{name_markup(b.name)}], {_labelled_args(vals, b.row_labels, b.col_labels)})"
    if isinstance(vals, list) and vals and isinstance(vals[0], str) and not is_matrix:
        return f"{name_markup(b.name)} $=$ " + ", ".join(f"${number(v)}$" for v in vals)
    return f"{name_markup(b.name)} $= {value_math(vals)}$"


def _labelled_args(vals: list, row_labels: list | None, col_labels: list | None) -> str:
    rows = row_labels or []
    cols = col_labels or []
    body = ", ".join(f"[${number(v)}$]" for row in vals for v in row)
    return f"{_array(typst_string(r) for r in rows)}, {_array(typst_string(c) for c in cols)}, {len(vals[0])}, ({body},)"


def _array(items: Iterable[str]) -> str:
    """A Typst array literal (a one-element array needs its trailing comma; an empty one is ())."""
    items = list(items)
    return f"({', '.join(items)},)" if items else "()"


def heatmap(values: list[list[float]], row_labels: Iterable[str] = (), col_labels: Iterable[str] = (),
            title: str = "") -> str:
    """Weights in [0, 1] as a grid of shaded cells, each with its value (darker = larger)."""
    rows, cols = list(row_labels), list(col_labels)
    ncol = len(values[0]) if values else 0
    cells = []
    if cols:
        cells += (["[]"] if rows else []) + [f"[#text(size: 8pt, {typst_string(c)})]" for c in cols]
    for i, row in enumerate(values):
        if rows:
            cells.append(f"[#text(size: 8pt, {typst_string(rows[i] if i < len(rows) else '')})]")
        for v in row:
            w = 0.0 if v is None else min(max(float(v), 0.0), 1.0)
            shade = round(100 - 70 * w)
            ink = "white" if w > 0.55 else "black"
            cells.append(f"table.cell(fill: luma({shade}%))[#text(fill: {ink}, size: 8pt)[{float(w):.2f}]]")
    head = f"#text(size: 8.5pt, style: \"italic\", {typst_string(title)}) \\ " if title else ""
    return (f"#block(breakable: false)[{head}#table(columns: {ncol + (1 if rows else 0)}, align: center + horizon, "
            f"stroke: 0.3pt + luma(60%), inset: 4pt, {', '.join(cells)})]")


@dataclass(frozen=True)
class ReceptiveFieldFigure:
    """What one output of the last layer of a conv/pool stack depends on, level by level.

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


def receptive_field_figure(fig: ReceptiveFieldFigure, width_pt: float = 300) -> str:
    """The stack drawn to scale, input at the bottom: each unit of level l is a cell as wide as
    ``jumps[l]`` input positions, centred over the inputs it reads; the units the top output
    depends on are shaded, padding cells are dashed."""
    lo_in, hi_in = min(fig.needed[0]), max(fig.needed[0])
    window = (lo_in - 2, hi_in + 3)                      # input positions shown, [a, b)
    unit = min(12.0, width_pt / (window[1] - window[0]))
    row_h, gap = 11.0, 9.0
    levels = len(fig.sizes)
    items = []
    for level in range(levels):
        y = (levels - 1 - level) * (row_h + gap)
        jump, size = fig.jumps[level], fig.sizes[level]
        off = fig.offsets[level] + (fig.fields[level] - jump) / 2     # left edge of unit 0's cell
        needed = set(fig.needed[level])
        first = math.floor((window[0] - off) / jump) - 1
        last = math.ceil((window[1] - off) / jump) + 1
        for u in range(first, last + 1):
            x0 = off + u * jump
            if x0 < window[0] or x0 + jump > window[1] + 1e-9:
                continue
            pad = u < 0 or u >= size
            if pad and u not in needed:
                continue
            fill = _SHADE if u in needed else "white"
            stroke = "(paint: luma(45%), thickness: 0.4pt, dash: \"dashed\")" if pad else "0.4pt + luma(35%)"
            items.append(f"place(dx: {(x0 - window[0]) * unit:.2f}pt, dy: {y:.2f}pt, rect(width: {jump * unit - 1:.2f}pt, "
                         f"height: {row_h}pt, fill: {fill}, stroke: {stroke}))")
        items.append(f"place(dx: {(window[1] - window[0]) * unit + 8:.2f}pt, dy: {y + 1:.2f}pt, "
                     f"text(size: 7.5pt, {typst_string(fig.labels[level])}))")
    height = levels * (row_h + gap)
    span = (f"#text(size: 8pt)[The shaded inputs are the receptive field of the middle output: "
            f"{hi_in - lo_in + 1} positions (dashed cells are padding).]")
    return (f"#block(breakable: false, above: 0.8em)[#box(width: 100%, height: {height:.1f}pt)[{'#' if items else ''}"
            f"{' #'.join(items)}] \\ {span}]")


# ------------------------------------------------------------------------------ compile

def compile_pdf(source: str, font_folder: str | None = None) -> bytes:
    """PDF bytes of a Typst source: built-in fonts only (plus the fonts in ``font_folder``, for
    names they cannot show: see examprep.render.fonts), no timestamp, no packages.

    Raises TypstCompileError with Typst's message (and the offending source line) when the
    compiler rejects the document.
    """
    import typst

    try:
        if font_folder:
            return typst.compile(source.encode("utf-8"), ignore_system_fonts=True, pdf_tags=False,
                                 font_paths=[font_folder])
        return typst.compile(source.encode("utf-8"), ignore_system_fonts=True, pdf_tags=False)
    except typst.TypstError as err:
        where = _error_line(source, getattr(err, "diagnostic", "") or "")
        raise TypstCompileError(f"typst could not typeset the document: {err.message}{where}") from None


def page_count(pdf: bytes) -> int:
    """Pages of a PDF written by Typst (the /Count of its page tree's root)."""
    counts = [int(n) for n in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)", pdf)]
    counts += [int(n) for n in re.findall(rb"/Count\s+(\d+)[^>]*?/Type\s*/Pages\b", pdf)]
    if not counts:
        raise RuntimeError("cannot find the page count of a Typst PDF")     # a Typst output change
    return max(counts)


def merge_pdfs(parts: list[bytes], *, title: str = "", author: str = "", even: bool = True) -> bytes:
    """One PDF of the pages of ``parts`` in order, each page placed as a vector image (Typst
    imports PDF pages losslessly). ``even``: pad every part to an even page count, so that each
    part starts on a recto when printed double-sided. Deterministic, like every compile here."""
    import tempfile

    import typst

    if len(parts) == 1 and not even:
        return parts[0]
    lines = [f"#set document(title: {typst_string(title)}, author: {typst_string(author)}, date: none)",
             '#set page(paper: "a4", margin: 0pt)']
    with tempfile.TemporaryDirectory(prefix="examprep-merge-") as tmp:
        for i, pdf in enumerate(parts):
            name = f"part{i:04d}.pdf"
            with open(f"{tmp}/{name}", "wb") as fh:
                fh.write(pdf)
            n = page_count(pdf)
            lines += [f'#image("{name}", page: {p}, width: 100%, height: 100%)' for p in range(1, n + 1)]
            if even and n % 2:
                lines.append("#page[]")
        try:
            return typst.compile("\n".join(lines).encode(), root=tmp, ignore_system_fonts=True, pdf_tags=False)
        except typst.TypstError as err:
            raise TypstCompileError(f"typst could not assemble the PDF: {err.message}") from None


_MAIN_UNSET = object()


class PdfWorkers:
    """Worker processes for Typst compiles, each replaced after two compiles; ``submit`` returns
    an object whose ``result()`` gives the value or raises the worker's exception.

    Typst memoises layout in a process-wide cache that typst-py never evicts (about 40 MB per
    copy of a midterm's solutions stays behind after each compile), so long runs compile in
    short-lived processes; they also let the problems and solutions compile in parallel with the
    Python work. multiprocessing.Pool (not ProcessPoolExecutor, whose max_tasks_per_child can
    deadlock on Python 3.11) with the forkserver start method, so no thread state is forked.
    Falls back to threads (Typst releases the GIL) where processes cannot start.
    """

    TASK_TIMEOUT = 1800      # seconds: a worker killed by the system must not hang the command
    STARTUP_TIMEOUT = 120    # seconds for the first worker to answer (well under one on an idle machine)

    def __init__(self, workers: int | None = None):
        import multiprocessing
        import os

        if workers is None:      # one per CPU this process may use, at most 8 (memory: ~0.6 GB each)
            cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 2)
            workers = max(2, min(cpus, 8))

        self._threads = None
        self._pool = None
        self._main_spec = _MAIN_UNSET
        try:
            method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
            ctx = multiprocessing.get_context(method)
            if method == "forkserver":
                ctx.set_forkserver_preload(["examprep.render.typst", "typst"])
            self._skip_main_in_workers()
            # Ctrl-C reaches the whole process group: the workers ignore it and the parent, which
            # got it too, stops them (__exit__); they printed KeyboardInterrupt tracebacks before.
            self._pool = ctx.Pool(workers, maxtasksperchild=2, initializer=_ignore_interrupts)
            try:     # workers that cannot start are replaced forever, silently: check that one answers
                self._pool.apply_async(os.getpid).get(timeout=self.STARTUP_TIMEOUT)
            except Exception:
                self._stop()
                raise OSError("the PDF worker processes did not start") from None
        except (OSError, ValueError, NotImplementedError, ImportError):     # no processes here: threads
            from concurrent.futures import ThreadPoolExecutor

            self._restore_main()
            self._pool = None
            self._threads = ThreadPoolExecutor(max_workers=workers)
        except BaseException:            # Ctrl-C while the pool starts: leave no process behind
            self._stop()
            self._restore_main()
            raise

    def _skip_main_in_workers(self) -> None:
        """A new worker re-runs the parent's main script unless __main__ names a module ending in
        ".__main__" (multiprocessing.spawn). For the `examprep` console script that re-run imports
        examprep again, from the current directory first: a folder named "examprep" there made
        every worker fail at start. The workers need nothing from __main__, so for the pool's life
        __main__ names examprep's own entry module, which multiprocessing then skips."""
        import importlib.machinery
        import sys

        main = sys.modules.get("__main__")
        if main is not None and getattr(main, "__spec__", None) is None:
            self._main_spec = None
            main.__spec__ = importlib.machinery.ModuleSpec("examprep.__main__", None)

    def _restore_main(self) -> None:
        import sys

        if self._main_spec is not _MAIN_UNSET and "__main__" in sys.modules:
            sys.modules["__main__"].__spec__ = self._main_spec
            self._main_spec = _MAIN_UNSET

    def submit(self, fn, *args, **kwargs):
        if self._pool is None:
            return self._threads.submit(fn, *args, **kwargs)
        return _Pending(self._pool.apply_async(fn, args, kwargs))

    def __enter__(self) -> "PdfWorkers":
        return self

    def _stop(self) -> None:
        """Stop the workers at once (an error or Ctrl-C in the parent). terminate() signals them
        itself; killing them first deadlocks it when one dies holding the task queue's lock (an
        idle worker waits for a task holding it), and so could a worker dying of Ctrl-C: which is
        why they ignore SIGINT."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.terminate()
            pool.join()

    def __exit__(self, kind, err, tb) -> None:
        try:
            if self._pool is None and self._threads is not None:
                self._threads.shutdown(wait=kind is None, cancel_futures=kind is not None)
            elif kind is None:
                self._pool.close()
                self._pool.join()
            else:
                self._stop()
        finally:
            self._restore_main()


def _ignore_interrupts() -> None:
    """A PDF worker's initializer: Ctrl-C is the parent's to handle."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclass
class _Pending:
    async_result: Any

    def result(self) -> Any:
        import multiprocessing

        try:
            return self.async_result.get(timeout=PdfWorkers.TASK_TIMEOUT)
        except multiprocessing.TimeoutError:
            raise TypstCompileError("a PDF worker gave no result (killed for lack of memory?)") from None


def _error_line(source: str, diagnostic: str) -> str:
    m = re.search(r":(\d+):(\d+)", diagnostic)
    if not m:
        return ""
    lines = source.splitlines()
    n = int(m.group(1))
    if 1 <= n <= len(lines):
        snippet = lines[n - 1].strip()
        return f" (source line {n}: {snippet[:120]})"
    return ""


# ------------------------------------------------------------------------------ sheets

_PREAMBLE = r"""
#set page(paper: "a4", margin: (x: 1.8cm, top: 1.6cm, bottom: 1.9cm), footer: context {
  let p = here().page()
  let starts = query(<copy-start>).filter(m => m.location().page() <= p)
  if starts.len() > 0 {
    let s = starts.last()
    let ends = query(<copy-end>).filter(m => m.location().page() >= s.location().page())
    if ends.len() > 0 and p <= ends.first().location().page() {
      let n = counter(page).get().first()
      let total = counter(page).at(ends.first().location()).first()
      set text(size: 8pt, fill: luma(40%))
      [#s.value #h(1fr) page #n of #total]
    }
  }
})
#set text(font: "Libertinus Serif", size: 10.5pt, lang: "en")
#show math.equation: set text(font: "New Computer Modern Math")
#set par(leading: 0.62em, spacing: 0.9em)
#let ink = luma(38%)
#let shade = rgb("#3a6ea5")
#let field(label, value) = box(width: 100%)[#label #box(width: 1fr, stroke: (bottom: 0.5pt),
  inset: (bottom: 2pt), outset: (bottom: 1pt))[#value]]
#let cell(w) = box(width: w, height: 0.8cm, stroke: 0.5pt + luma(45%))
#let cells(r, c) = {
  let br = 0.8pt + black
  table(columns: (4pt,) + c * (1.5cm,) + (4pt,), rows: r * (0.85cm,), inset: 2pt, align: center + horizon,
    stroke: (x, y) => if x == 0 { (left: br, top: if y == 0 { br }, bottom: if y == r - 1 { br }) }
      else if x == c + 1 { (right: br, top: if y == 0 { br }, bottom: if y == r - 1 { br }) },
    ..range(r).map(_ => ([], ..range(c).map(_ => box(width: 100%, height: 100%, stroke: 0.5pt + luma(45%))), [])).flatten())
}
#let answer(label, ref, body) = grid(columns: (auto, auto, 1fr), column-gutter: 8pt,
  align: (left + horizon, left + horizon, right + bottom),
  text(size: 9pt)[Answer (#label)], body, text(size: 7pt, fill: ink, font: "DejaVu Sans Mono", ref))
#let problem-head(n, title, info) = block(sticky: true, above: 1.6em, below: 0.8em, width: 100%)[
  #text(size: 12pt, weight: "bold")[Problem #n] #h(0.5em) #text(size: 12pt)[#title] #h(1fr) #text(size: 9pt, fill: ink)[#info]
  #v(-0.55em) #line(length: 100%, stroke: 0.5pt + luma(60%))
]
#let part(label, prompt, pts, note, room, box-body) = block(breakable: false, above: 1.1em, width: 100%)[
  #grid(columns: (1.7em, 1fr, auto), column-gutter: 4pt, [*(#label)*], prompt, text(size: 9pt, fill: ink)[#pts])
  #pad(left: 1.7em, top: -0.2em)[#text(size: 8.5pt, fill: ink)[#note]]
  #v(room)
  #pad(left: 1.7em, box-body)
]
#let labelled(name, rows, cols, n, cells) = {
  let top = if cols.len() > 0 { 1 } else { 0 }
  let m = calc.div-euclid(cells.len(), n)
  let last = top + m - 1
  let body = ()
  if top == 1 { body += ([], [], ..cols.map(c => text(size: 8pt, fill: ink, c)), []) }
  for i in range(m) {
    body += (text(size: 8pt, fill: ink, rows.at(i, default: "")), [], ..cells.slice(i * n, i * n + n), [])
  }
  let br = 0.7pt + black
  block(breakable: false, grid(columns: 2, column-gutter: 4pt, align: horizon, [#name $=$], table(
    columns: (auto, 3pt) + n * (auto,) + (3pt,), align: right + horizon,
    inset: (x, y) => if x == 1 or x == n + 2 { (x: 0pt, y: 3pt) } else { (x: 4pt, y: 3pt) },
    stroke: (x, y) => if y < top { none } else if x == 1 {
      (left: br, top: if y == top { br }, bottom: if y == last { br })
    } else if x == n + 2 { (right: br, top: if y == top { br }, bottom: if y == last { br }) },
    ..body)))
}
#show math.equation.where(block: true): set align(left)
#show math.equation.where(block: true): it => pad(left: 1.2em, it)
#let brief(label, prompt, pts, note) = block(breakable: false, above: 0.7em, width: 100%)[
  #grid(columns: (1.7em, 1fr, auto), column-gutter: 4pt, [*(#label)*], [#prompt #text(size: 8.5pt, fill: ink)[(#note)]],
    text(size: 9pt, fill: ink)[#pts])
]
#let keep(body) = block(sticky: true, width: 100%, above: 0.9em, below: 0.9em, body)
#let step(title, target) = block(sticky: true, above: 0.9em, below: 0.5em)[
  *#title* #h(0.4em) #text(size: 9pt, fill: ink)[#target]]
"""


def _letter(i: int) -> str:
    return chr(97 + i) if i < 26 else f"a{i - 25}"


def _pts(x: float) -> str:
    return f"{x:g} pt" if x == 1 else f"{x:g} pts"


def _answer_box(part: Any) -> str:
    shape = tuple(part.shape or ())
    if part.kind == "matrix" and len(shape) == 2:
        return f"cells({shape[0]}, {shape[1]})"
    if part.kind == "vector" and len(shape) == 1:
        return f"cells(1, {shape[0]})"
    if part.kind == "choice" and part.choices:
        opts = ", ".join(f"box[○ #{typst_string(c)};]" for c in choices_shown(part))
        return f"block(width: 100%, {{ set par(leading: 0.9em); ({opts}).join(h(1.4em)) }})"
    return "cell(5cm)"


def choices_shown(part: Any) -> list[str]:
    """A choice part's options in alphabetical order: the order the generator lists them in
    (the correct one first, often) must not leak onto paper."""
    return sorted((str(c) for c in part.choices), key=str.casefold)


def part_note(part: Any, *, listed: bool = True) -> str:
    """The expected form and precision of a part's answer, as printed under its prompt
    (``listed``: name a choice's options, where no answer box shows them)."""
    if part.kind == "choice":
        return "choose one: " + "; ".join(choices_shown(part)) if listed else "circle one"
    return f"{part.form()}; {part.tolerance.describe()}"


def _room(part: Any) -> str:
    """Space to work, from the part's estimated minutes (the answer box comes after it)."""
    cm = min(max(0.45 * float(part.minutes), 1.0), 5.0)
    return f"{cm:.2f}cm"


def _statement(problem: Any, strict: bool) -> list[str]:
    """The statement's blocks and conventions, each sticky: a page never breaks between the
    problem's heading, its statement, its data and its first part (parts are unbreakable blocks;
    a statement taller than a page still breaks, as stickiness gives way then)."""
    out = [block(b, strict=strict) for b in problem.statement]
    if problem.conventions:
        conv = "; ".join(f"{k}: {v}" for k, v in problem.conventions.items())
        out.append(f"#text(size: 8.5pt, fill: ink)[#emph[Conventions.] #{typst_string(conv)};]")
    return [f"#keep[{piece}]" for piece in out]


def _header(sheet: Any, copy: Any, solutions: bool, instructions: list[str], strict: bool) -> list[str]:
    r = sheet.recipe
    title = r.title + (" — solutions" if solutions else "")
    from examprep.render import plural

    bits = []
    if r.minutes:
        bits.append(plural(r.minutes, "minute"))
    bits.append(plural(copy.points, "point"))
    bits.append(plural(len(copy.problems), "problem"))
    right = " · ".join(bits)
    if copy.code:
        right_box = (f"#box(stroke: 0.6pt, inset: (x: 6pt, y: 4pt), radius: 2pt)[#text(size: 8pt)[variant] "
                     f"#text(font: \"DejaVu Sans Mono\", size: 10pt, weight: \"bold\", {typst_string(copy.code)})]")
    else:
        right_box = f"#text(size: 8pt, fill: ink)[sheet #{typst_string(sheet.sheet_id)};]"
    out = [f"#grid(columns: (1fr, auto), align: (left + bottom, right + bottom), row-gutter: 4pt,"
           f" [#text(size: 9pt, tracking: 0.6pt, fill: ink, upper({typst_string(r.course or 'examprep')}))],"
           f" [{right_box}],"
           f" [#text(size: 18pt, weight: \"bold\", {typst_string(title)})],"
           f" [#text(size: 9.5pt, {typst_string(right)})])",
           "#v(-0.3em)#line(length: 100%, stroke: 0.9pt)"]
    name = copy.student.name if copy.student else ""
    sid = copy.student.id if copy.student else ""
    if not solutions:
        out.append(f"#grid(columns: (1.6fr, 1fr), column-gutter: 1.2em,"
                   f" field([Name], [#{typst_string(name)};]), field([Student ID], [#{typst_string(sid)};]))")
        items = ", ".join(f"[{text(line, strict=strict)}]" for line in instructions)
        out.append(f"#block(width: 100%, fill: luma(97%), stroke: 0.5pt + luma(75%), inset: 9pt, radius: 3pt, above: 1.1em)"
                   f"[#text(weight: \"bold\")[Instructions] #v(-0.3em) #set text(size: 9.5pt)\n#list(tight: false, {items})]")
        out.append(_score_table(copy))
    else:
        who = f"{name} ({sid}) · " if copy.student else ""
        out.append(f"#text(size: 9.5pt, fill: ink)[{text(who + instructions[1], strict=strict)}]")
    return out


def _score_table(copy: Any) -> str:
    """Problem / Points / Score rows for the grader, in rows of equal columns (at most 14)."""
    n = len(copy.problems)
    labels = [str(k + 1) for k in range(n)] + ["Total"]
    points = [f"{p.points:g}" for p in copy.problems] + [f"{copy.points:g}"]
    rows = math.ceil(len(labels) / 14)
    per = math.ceil(len(labels) / rows)
    tables = []
    for r in range(rows):
        idx = list(range(r * per, min((r + 1) * per, len(labels))))
        pad = per - len(idx)
        head = [f"[*{labels[i]}*]" if labels[i] == "Total" else f"[{labels[i]}]" for i in idx]
        cells = ["[*Problem*]", *head, *["table.cell(stroke: none)[]"] * pad,
                 "[Points]", *[f"[{points[i]}]" for i in idx], *["table.cell(stroke: none)[]"] * pad,
                 "[Score]", *["[]"] * len(idx), *["table.cell(stroke: none)[]"] * pad]
        tables.append(f"#table(columns: (auto,) + ({per} * (1fr,)), rows: (auto, auto, 0.9cm), align: center + horizon,"
                      f" stroke: 0.5pt + luma(55%), inset: 4pt, {', '.join(cells)})")
    return "#v(0.4em)\n" + "\n".join(tables)


def _inline_values(blocks: list) -> bool:
    """True when a step's values are short enough to sit on the formula's line."""
    for b in blocks:
        if isinstance(b, d.Math):
            continue
        if not isinstance(b, d.Matrix):
            return False
        v = b.values
        if isinstance(v, list) and (len(v) > 4 or any(isinstance(x, list) for x in v)):
            return False
    return True


def _step_body(step: Any, strict: bool) -> list[str]:
    maths = [b for b in step.blocks if isinstance(b, d.Math)]
    values = [b for b in step.blocks if not isinstance(b, d.Math)]
    if len(maths) <= 1 and values and _inline_values(step.blocks):
        formula = f"$display({latex_to_typst(maths[0].latex, strict=strict)})$" if maths else ""
        shown = " #h(1.4em) ".join(_matrix(b) for b in values)
        sep = " #h(1em) #text(fill: ink)[→] #h(1em) " if formula else ""
        return [f"#pad(left: 1em)[#set text(top-edge: \"bounds\", bottom-edge: \"bounds\")\n{formula}{sep}{shown}]"]
    return [f"#pad(left: 1em)[{block(b, strict=strict)}]" for b in step.blocks]


def _problem(sheet: Any, copy: Any, k: int, solutions: bool, strict: bool) -> list[str]:
    p = copy.problems[k]
    from examprep.render import plural

    info = f"{plural(p.points, 'point')} · about {round(p.minutes)} min"
    out = [f"#problem-head({k + 1}, [#{typst_string(p.title)};], [{info}])"]
    out += _statement(p, strict)
    for i, part in enumerate(p.parts):
        note = part_note(part, listed=solutions)
        prompt = f"[{text(part.prompt, strict=strict)}]"
        if solutions:
            out.append(f"#brief({typst_string(_letter(i))}, {prompt}, [{_pts(part.points)}], [#{typst_string(note)};])")
        else:
            ref = f"q{k + 1}.{part.id}"
            out.append(f"#part({typst_string(_letter(i))}, {prompt}, [{_pts(part.points)}], [#{typst_string(note)};], "
                       f"{_room(part)}, answer({typst_string(_letter(i))}, {typst_string(ref)}, {_answer_box(part)}))")
    if solutions:
        out += _solution(p, copy.extras.get(k, []), strict)
    return out


def _solution(p: Any, extras: list, strict: bool) -> list[str]:
    letters = {part.id: _letter(i) for i, part in enumerate(p.parts)}
    out = ["#block(sticky: true, above: 1.2em)[#text(weight: \"bold\", fill: shade)[Worked solution]]"]
    for n, step in enumerate(p.solution, 1):
        target = f"→ ({letters[step.part]})" if step.part in letters else ""
        out.append(f"#step([Step {n}. #{typst_string(step.title)};], [{target}])")
        out += _step_body(step, strict)
    # a table.header repeats on each page the table spans, and Typst never leaves it (nor, through
    # the sticky title, the "Answers" title) alone at the bottom of a page
    cells = ["table.header([*Part*], [*Answer*], [*Accepted*], [*Points*])"]
    for i, part in enumerate(p.parts):
        shown = f"${value_math(part.expected)}$"
        if isinstance(part.exact, str) and part.exact:
            shown = f"${number(part.exact)}$" + (f" $≈ {value_math(part.expected)}$"
                                                   if isinstance(part.expected, (int, float)) else "")
        elif isinstance(part.exact, list):
            shown = f"${value_math(part.exact)}$"
        cells += [f"[({_letter(i)}) #{typst_string(part.id)};]", f"[{shown}]", f"[#{typst_string(part.tolerance.describe())};]",
                  f"[{part.points:g}]"]
    out.append("#block(sticky: true, above: 1.1em)[#text(weight: \"bold\", fill: shade)[Answers]]")
    out.append("#table(columns: (auto, 1fr, auto, auto), align: (left + horizon, left + horizon, left + horizon,"
               " center + horizon), stroke: 0.4pt + luma(65%), inset: (x: 5pt, y: 6pt),"
               f" fill: (x, y) => if y == 0 {{ luma(93%) }}, {', '.join(cells)})")
    for fig in extras:
        if isinstance(fig, d.Heatmap):
            out.append(heatmap(fig.values, fig.row_labels, fig.col_labels, fig.title))
        elif isinstance(fig, ReceptiveFieldFigure):
            out.append(receptive_field_figure(fig))
    mistakes = []
    for i, part in enumerate(p.parts):
        for m in part.misconceptions:
            mistakes += [f"[({_letter(i)})]", f"[${value_math(m.value)}$]", f"[#{typst_string(m.explanation)};]"]
    if mistakes:
        out.append("#block(sticky: true, above: 1.1em)[#text(weight: \"bold\", fill: shade)[Typical mistakes]]")
        out.append(f"#text(size: 9pt, table(columns: (auto, auto, 1fr), stroke: none, inset: (x: 4pt, y: 5pt), "
                   f"align: (left + horizon, left + horizon, left + horizon), "
                   f"fill: (x, y) => if calc.odd(y) {{ luma(96%) }}, {', '.join(mistakes)}))")
    return out


def sheet_source(sheet: Any, *, solutions: bool, strict: bool = False, copies: list | None = None) -> str:
    """The Typst source of a sheet (``examprep.sheets.Sheet``): one copy per student or a single
    copy, each starting on an odd page (duplex printing) with its own page numbers.

    ``copies``: only these copies of the sheet (a chunk of a long run of variants).
    Problems: header with course, title, name and student-id fields (printed for a variant),
    instructions with the tolerance rule, a score table, then each problem with its parts, points,
    room to work and an answer box shaped like the answer. Solutions: the same problems with the
    worked steps, an answers table, figures and the typical mistakes.
    """
    from examprep.sheets import instructions

    r = sheet.recipe
    lines = [f"#set document(title: {typst_string(r.title + (' — solutions' if solutions else ''))}, "
             f"author: {typst_string(r.course or 'examprep')}, date: none)", _PREAMBLE]
    guide = instructions(sheet)
    for c, copy in enumerate(sheet.copies if copies is None else copies):
        if c:
            lines.append("#pagebreak(to: \"odd\")")
        if copy.student:
            foot = f"{r.title} · {copy.student.name + ' · ' if copy.student.name else ''}{copy.student.id} · variant {copy.code}"
        else:
            foot = f"{r.title} · {sheet.sheet_id}"
        if solutions:
            foot += " · solutions"
        lines.append(f"#counter(page).update(1)\n#metadata({typst_string(foot)}) <copy-start>")
        lines += _header(sheet, copy, solutions, guide, strict)
        for k in range(len(copy.problems)):
            lines += _problem(sheet, copy, k, solutions, strict)
        if not solutions:
            lines.append("#v(1.5em)#align(center, text(size: 9pt, fill: ink)[— end of the sheet —])")
        lines.append("#metadata(none) <copy-end>")
    # an even number of pages, as each joined chunk has: printed double-sided, the next file or
    # the next run of this one never starts on the back of the last page
    lines.append('#pagebreak(to: "odd", weak: true)')
    return "\n\n".join(lines) + "\n"
