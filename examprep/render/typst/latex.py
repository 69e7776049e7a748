"""Our LaTeX subset as Typst math, and text with ``$…$`` inline math as Typst markup.

Escaping: every piece of text (ours or a user's: titles, course names, student names) reaches
Typst as a string literal (``#"…";``), never as markup, so no character in it can start markup,
code, a reference or an import. Math is converted token by token from LaTeX; unknown macros
raise ``UnsupportedLatex`` in strict mode (the tests run every formula our topics produce through
it) and are printed upright by name otherwise.
"""
from __future__ import annotations

import re

from examprep.escape import typst_string  # noqa: F401 - renderers import it from here too
from examprep.render import decimals, prose_symbols


class UnsupportedLatex(ValueError):
    """A LaTeX construct outside the subset this converter knows (a bug in a formula of ours)."""


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
_TOKEN = re.compile(r"\\(?:[A-Za-z]+\*?|.)|\d+(?:\.\d+)?|\s+|.", re.S)


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
            shown = self.delimiter(name)
            if name != "left":
                return shown or ""
            body = self.sequence(stop={r"\right"})
            if self.stopped == r"\right":
                closing = self.delimiter("right")
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

    def delimiter(self, after: str) -> str:
        """The delimiter after \\left, \\right or \\big…: a known one in Typst's math, else (\\left X)
        the token shown as written, in a string, so no character reaches Typst as code or markup."""
        delim = self.next()
        if not delim:
            return ""
        if delim in _DELIMS:
            return _DELIMS[delim]
        if delim.startswith("\\") and delim[1:] in _SYMBOLS:
            return _SYMBOLS[delim[1:]]
        self.fail(f"unknown delimiter {delim!r} after \\{after}")
        return typst_string(delim)

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
    return decimals(_Parser(latex, strict).sequence().strip(), '#","')



_INLINE = re.compile(r"\$([^$]+)\$")


def text(value: str, *, strict: bool = False) -> str:
    """Markup for a paragraph with ``$…$`` inline LaTeX: text as string literals, math converted."""
    out, pos = [], 0

    for m in _INLINE.finditer(value):
        if m.start() > pos:
            out.append(f"#{typst_string(decimals(value[pos:m.start()]))};")
        out.append(math_inline(m.group(1), strict=strict))
        pos = m.end()
    if pos < len(value):
        out.append(f"#{typst_string(decimals(value[pos:]))};")
    return "".join(out)


def prose(value: str, *, strict: bool = False) -> str:
    """text() for a problem's own prose (statements, prompts, conventions, step titles, mistakes):
    the symbols it types (d_k, W_hn, C_out: examprep.render.prose_symbols) typeset as math too."""
    return text(prose_symbols(value), strict=strict)


def math_inline(latex: str, *, strict: bool = False) -> str:
    body = latex_to_typst(latex, strict=strict)
    return f"${body}$" if body else ""


def math_display(latex: str, *, strict: bool = False) -> str:
    body = latex_to_typst(latex, strict=strict)
    return f"$ {body} $" if body else ""

