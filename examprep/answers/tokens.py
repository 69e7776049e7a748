"""The tokens of what students type: the answer syntax's limits, functions and constants, the
Unicode forms read as ASCII, and the tokenizer (examprep.answers.parse builds the syntax tree)."""
from __future__ import annotations

import math
import re
import unicodedata

from examprep.errors import ExamprepError

MAX_CHARS = 4000          # one answer, as typed (a 10 kB paste is refused at once)
MAX_TOKENS = 1500
MAX_DEPTH = 40            # nesting of brackets, parentheses, unary signs and powers
MAX_EXPONENT = 1000.0     # |b| in a^b (unless a is 0 or ±1): 9^9^9^9 stops at 9^387420489
MAX_MAGNITUDE = 1e300     # any intermediate value beyond this is refused as "too large"
MAX_ENTRIES = 400         # entries of one vector or matrix answer
MAX_OPERATIONS = 200      # operators and functions in one entry (keeps every tree shallow)


class AnswerParseError(ExamprepError):
    """An answer that cannot be read: the message says what and how to write it instead."""


# ----------------------------------------------------------------------------- syntax tree
# Nodes are tuples (cheap to build and walk):
#   ("num", value: float, text: str)      a literal as typed ("0.245", "2e-3")
#   ("const", name)                        e, pi, inf
#   ("var", name)                          a variable of an expression part
#   ("neg", x) ("add", a, b) ("sub", a, b) ("mul", a, b) ("div", a, b) ("pow", a, b) ("pct", x)
#   ("call", function, (args...))
# A list answer is a Python list of nodes or of lists (rows).

FUNCTIONS = {
    "exp": 1, "ln": 1, "log": 1, "log10": 1, "log2": 1, "sqrt": 1, "sin": 1, "cos": 1, "tan": 1,
    "tanh": 1, "sigmoid": 1, "abs": 1,
}
FUNCTION_ALIASES = {"log_e": "ln", "log_10": "log10", "lg": "log10", "log_2": "log2", "σ": "sigmoid",
                    "sig": "sigmoid", "√": "sqrt"}
CONSTANTS = {"e": math.e, "pi": math.pi, "π": math.pi, "inf": math.inf, "∞": math.inf}

_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁽⁾·", "0123456789+-()*")
_SUPER_RUN = re.compile(r"[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁽⁾]+")
_CHAR_MAP = str.maketrans({
    "−": "-", "–": "-", "—": "-", "‐": "-", "‑": "-", "﹣": "-", "－": "-",
    "×": "*", "·": "*", "⋅": "*", "∗": "*", "✕": "*", "÷": "/", "⁄": "/", "∕": "/",
    "∞": " inf ",
    "‘": "'", "’": "'", "“": '"', "”": '"',
})
_NUMBER = r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+(?![\w.]))?"
_OPS = r"\*\*|[-+*/^%()\[\],;=!|<>{}&@~`$#:?\\'\"]"
# π, σ and √ are names of their own, so "2π", "πr" and "3√2" are products of adjacent tokens
_TOKEN = re.compile(rf"\s*(?:(?P<num>{_NUMBER})|(?P<name>√|σ|π|[^\W\dπσ][^\Wπσ]*)|(?P<op>{_OPS})|(?P<bad>.))", re.DOTALL)
PLAIN_NUMBER = re.compile(rf"\s*[-+]?{_NUMBER}\s*")
DECIMAL_COMMA = re.compile(r"(?<![\d.])(\d+),(\d+)(?![\d.])")


class Token:
    """One token: kind "num", "name", "op", "bad" (a character never accepted) or "end"; its text;
    1-based column in the normalised text; whether white space comes before and after it (list
    entries split on white space)."""

    __slots__ = ("kind", "text", "col", "space_before", "space_after")

    def __init__(self, kind: str, text: str, col: int, space_before: bool, space_after: bool = True):
        self.kind, self.text, self.col = kind, text, col
        self.space_before, self.space_after = space_before, space_after

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.text!r}, col {self.col})"


def normalise(text: str) -> str:
    """Unicode forms to the ASCII syntax: superscript exponents, minus signs, ×, ·, √, π."""
    if any(c in text for c in "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻"):
        text = _SUPER_RUN.sub(lambda m: "^(" + m.group(0).translate(_SUPERSCRIPTS) + ")", text)
    text = unicodedata.normalize("NFKC", text)
    return text.translate(_CHAR_MAP).strip()


def check_size(text: str) -> None:
    if len(text) > MAX_CHARS:
        raise AnswerParseError(f"answer too long ({len(text)} characters; at most {MAX_CHARS})")


def tokenize(text: str) -> list[Token]:
    """Split normalised text into tokens; a character we never accept is a "bad" token, which the
    parser refuses ("unexpected character '.' at column 13") when it reaches it."""
    tokens: list[Token] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "bad":
            if m.group("bad").isspace():
                continue
            # kept as a token: the parser refuses it where it reaches it, so an earlier mistake is
            # named first ("[l](http://e.com)": the 'l' at column 2, not the '.' at column 13)
        start = m.start(kind)
        space = start > m.start()
        if tokens and space:
            tokens[-1].space_after = True
        elif tokens:
            tokens[-1].space_after = False
        tokens.append(Token(kind, m.group(kind), start + 1, space))
        if kind == "bad":
            break                   # nothing after it is read
        if len(tokens) > MAX_TOKENS:
            raise AnswerParseError(f"answer too long (more than {MAX_TOKENS} symbols)")
    tokens.append(Token("end", "", len(text) + 1, True, True))
    return tokens


