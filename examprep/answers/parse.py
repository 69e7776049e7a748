"""Safe parsing of what students type: numbers, exact expressions, vectors and matrices.

Nothing here evaluates student text as code: no ``eval``, ``sympify`` or ``parse_expr``. A small
tokenizer and a recursive-descent parser accept a whitelist of forms and build a tiny syntax tree
of tuples; ``evaluate`` computes it in floats, ``to_sympy`` (examprep.answers.symbolic) builds
sympy objects node by node.

Accepted (the forms students naturally type):
  numbers     0.245  -0.5 (also with the Unicode minus −)  .5  2e-3  2×10^-3  2·10⁻³  1/3  50%
  exact       e^2/(1+e^2)  exp(2)  sqrt(2)/2  √2/2  ln 2  log(2) (natural log, as in the course)
              log10(x)  log2(x)  sin cos tan tanh sigmoid/σ abs  pi/π
  vectors     [0.1, 0.2, 0.7]   (0.1, 0.2, 0.7)   0.1 0.2 0.7
  matrices    [[1, 2], [3, 4]]  [1 2; 3 4]  1 2; 3 4
  thousands   17 010  4’832  where one value is asked; 17,010 and 25,636,712 too where no decimal comma
              may be meant (read_thousands); "[1,000, 2]" is refused as ambiguous
Whitespace separates list entries ("1 -2" is two entries, "1 - 2" is one), so implicit
multiplication needs no space: "2e^2", "2sqrt(2)", "3(1+e)"; "2 ln 2" is refused with a hint.
In an expression part "2e+1" is refused as ambiguous (2·e + 1, or 20?); elsewhere it is 20.

Work is bounded before it is done: input length (MAX_CHARS), tokens (MAX_TOKENS), nesting depth
(MAX_DEPTH) and exponents (|exponent| ≤ MAX_EXPONENT unless the base is 0 or ±1); a tower such as
9^9^9^9 is refused at its first oversized exponent. Every refusal is an AnswerParseError with a
one-line message and, where it helps, a hint.
"""
from __future__ import annotations

import re
from typing import Any

from examprep.answers.evaluate import check_exponents
from examprep.answers.tokens import (CONSTANTS, DECIMAL_COMMA, FUNCTION_ALIASES, FUNCTIONS, MAX_DEPTH, MAX_ENTRIES,
                                     MAX_OPERATIONS, PLAIN_NUMBER, AnswerParseError, Token, check_size, normalise,
                                     tokenize)
from examprep.decimal_comma import decimal_comma, decimal_comma_on  # noqa: F401  (answers' API too)

_REFUSED_OPS = {
    "=": "type only the value, without 'x =' or an equation",
    "!": "factorials are not accepted; write the number",
    "|": "write abs(x) for an absolute value",
    "<": "type only the value", ">": "type only the value",
    "{": "use parentheses ( ) or brackets [ ]", "}": "use parentheses ( ) or brackets [ ]",
}


class _Parser:
    """Recursive descent over the tokens. ``variables``: names an expression part may use."""

    def __init__(self, tokens: list[Token], variables: frozenset[str]):
        self.t = tokens
        self.i = 0
        self.vars = variables
        self.depth = 0
        self.ops = 0                # operators in the current entry
        self.space_sep = False      # whitespace separated two list entries somewhere
        self.comma_sep = False      # a comma separated two list entries somewhere

    # -- helpers
    @property
    def tok(self) -> Token:
        return self.t[self.i]

    def advance(self) -> Token:
        tok = self.t[self.i]
        self.i += 1
        return tok

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise AnswerParseError(f"answer nested too deeply (more than {MAX_DEPTH} levels)")

    def error(self, what: str | None = None) -> AnswerParseError:
        tok = self.tok
        if tok.kind == "bad":
            return AnswerParseError(f"unexpected character {tok.text!r} at column {tok.col}")
        if tok.kind == "end":
            return AnswerParseError(what or "the answer ends too early (an operator or bracket is missing its other half)")
        if tok.kind == "op" and tok.text in _REFUSED_OPS:
            return AnswerParseError(f"unexpected {tok.text!r} at column {tok.col}: {_REFUSED_OPS[tok.text]}")
        return AnswerParseError(what or f"unexpected {tok.text!r} at column {tok.col}")

    def expect(self, text: str) -> None:
        if self.tok.kind == "op" and self.tok.text == text:
            self.advance()
            return
        raise self.error(f"expected {text!r} at column {self.tok.col}"
                         + (f", found {self.tok.text!r}" if self.tok.kind != "end" else ", found the end"))

    def op(self) -> None:
        self.ops += 1
        if self.ops > MAX_OPERATIONS:
            raise AnswerParseError(f"formula too long (more than {MAX_OPERATIONS} operations in one entry)")

    def starts_operand(self, tok: Token) -> bool:
        return tok.kind in ("num", "name") or tok.kind == "op" and tok.text in ("(", "[")

    # -- lists
    def parse_answer(self) -> Any:
        """A scalar node, or nested lists of nodes (top level may be an unbracketed list)."""
        rows = self.parse_rows(closing=None)
        if self.tok.kind != "end":
            raise self.error()
        return self.collapse(rows, bracketed=False)

    def collapse(self, rows: list[list[Any]], bracketed: bool) -> Any:
        if len(rows) == 1:
            row = rows[0]
            if len(row) == 1 and not bracketed:
                return row[0]
            return row
        return rows

    def parse_rows(self, closing: str | None) -> list[list[Any]]:
        rows = [self.parse_row(closing)]
        while self.tok.kind == "op" and self.tok.text == ";":
            self.advance()
            if self.tok.kind == "end" or self.tok.kind == "op" and self.tok.text == closing:
                break   # a trailing ";" ends the last row
            rows.append(self.parse_row(closing))
        return rows

    def parse_row(self, closing: str | None) -> list[Any]:
        row = [self.parse_entry()]
        while True:
            tok = self.tok
            if tok.kind == "op" and tok.text == ",":
                self.advance()
                self.comma_sep = True
                if self.tok.kind == "op" and self.tok.text in (closing, ";") or self.tok.kind == "end":
                    break   # a trailing comma
                row.append(self.parse_entry())
            elif tok.kind == "end" or tok.kind == "op" and tok.text in (";", closing):
                break
            elif tok.space_before and (self.starts_operand(tok) or tok.kind == "op" and tok.text in "+-"):
                self.space_sep = True
                row.append(self.parse_entry())
            else:
                raise self.error()
            if len(row) > MAX_ENTRIES:
                raise AnswerParseError(f"too many entries (more than {MAX_ENTRIES})")
        return row

    def parse_entry(self) -> Any:
        tok = self.tok
        if tok.kind == "op" and tok.text == "[":
            self.enter()
            self.advance()
            if self.tok.kind == "op" and self.tok.text == "]":
                raise self.error(f"empty brackets at column {tok.col}")
            rows = self.parse_rows(closing="]")
            self.expect("]")
            self.depth -= 1
            return self.collapse(rows, bracketed=True)
        if tok.kind == "op" and tok.text == "(" and self._is_tuple():
            self.enter()
            self.advance()
            row = [self.parse_expr(in_list=False)]
            while self.tok.kind == "op" and self.tok.text == ",":
                self.advance()
                self.comma_sep = True
                if self.tok.kind == "op" and self.tok.text == ")":
                    break
                row.append(self.parse_entry())
            self.expect(")")
            self.depth -= 1
            return row
        self.ops = 0
        return self.parse_expr(in_list=True)

    def _is_tuple(self) -> bool:
        """Does the "(" at the cursor open a tuple (a comma at its own level)?"""
        level = 0
        for tok in self.t[self.i:]:
            if tok.kind != "op":
                continue
            if tok.text in "([":
                level += 1
            elif tok.text in ")]":
                level -= 1
                if level == 0:
                    return False
            elif tok.text == "," and level == 1:
                return True
        return False

    # -- expressions
    def parse_expr(self, in_list: bool) -> tuple:
        node = self.parse_term(in_list)
        while self.tok.kind == "op" and self.tok.text in "+-":
            tok = self.tok
            if in_list and tok.space_before and not tok.space_after:
                break           # "1 -2": a new list entry, not a subtraction
            self.advance()
            self.op()
            rhs = self.parse_term(in_list)
            node = ("add" if tok.text == "+" else "sub", node, rhs)
        return node

    def parse_term(self, in_list: bool) -> tuple:
        node = self.parse_unary(in_list)
        while True:
            tok = self.tok
            if tok.kind == "op" and tok.text in ("*", "/"):
                self.advance()
                self.op()
                rhs = self.parse_unary(in_list)
                node = ("mul" if tok.text == "*" else "div", node, rhs)
            elif tok.kind in ("num", "name") or tok.kind == "op" and tok.text == "(":
                # juxtaposition: "2e^2", "2sqrt(2)", "(1+e)(2)" multiply; with a space only
                # inside parentheses ("(2 ln 2)"), since in a list a space separates entries
                if tok.space_before and in_list:
                    return node
                if tok.kind == "num":
                    raise self.error(f"two numbers in a row at column {tok.col}: separate entries with a comma, "
                                     "or write a product with *")
                self.op()
                rhs = self.parse_unary(in_list)
                node = ("mul", node, rhs)
            else:
                return node

    def parse_unary(self, in_list: bool) -> tuple:
        tok = self.tok
        if tok.kind == "op" and tok.text in "+-":
            self.enter()
            self.advance()
            self.op()
            operand = self.parse_unary(in_list)
            self.depth -= 1
            return ("neg", operand) if tok.text == "-" else operand
        return self.parse_power(in_list)

    def parse_power(self, in_list: bool) -> tuple:
        base = self.parse_postfix(in_list)
        tok = self.tok
        if tok.kind == "op" and tok.text in ("^", "**"):
            self.enter()
            self.advance()
            self.op()
            exponent = self.parse_unary(in_list)       # right-associative; "e^-2" allowed
            self.depth -= 1
            return ("pow", base, exponent)
        return base

    def parse_postfix(self, in_list: bool) -> tuple:
        node = self.parse_primary(in_list)
        while self.tok.kind == "op" and self.tok.text == "%":
            self.advance()
            node = ("pct", node)
        return node

    def parse_primary(self, in_list: bool) -> tuple:
        tok = self.tok
        if tok.kind == "num":
            self.advance()
            return ("num", float(tok.text), tok.text)
        if tok.kind == "op" and tok.text == "(":
            self.enter()
            self.advance()
            node = self.parse_expr(in_list=False)
            if self.tok.kind == "op" and self.tok.text == ",":
                raise self.error(f"unexpected ',' at column {self.tok.col}: a list here is not a number")
            self.expect(")")
            self.depth -= 1
            return node
        if tok.kind == "name":
            return self.parse_name(in_list)
        if tok.kind == "op" and tok.text == "[":
            raise self.error(f"unexpected '[' at column {tok.col}: a list inside a formula")
        raise self.error()

    def parse_name(self, in_list: bool) -> tuple:
        tok = self.advance()
        name = tok.text
        fname = FUNCTION_ALIASES.get(name, name)
        if fname in FUNCTIONS:
            self.enter()
            self.op()
            nxt = self.tok
            if nxt.kind == "op" and nxt.text == "(" and not self._is_tuple():
                self.advance()
                arg = self.parse_expr(in_list=False)
                self.expect(")")
            elif nxt.kind in ("num", "name") or nxt.kind == "op" and nxt.text == "(":
                # "ln 2", "sqrt 2", "√2": the function takes the next power ("ln 2^3" = ln 8)
                arg = self.parse_power(in_list=False)
            else:
                raise self.error(f"{name} at column {tok.col} needs an argument, e.g. {name}(2)")
            self.depth -= 1
            return ("call", fname, (arg,))
        if name in self.vars:
            return ("var", name)
        if name in CONSTANTS:
            return ("const", name)
        if name.lower() in ("nan",):
            raise AnswerParseError("NaN is not an answer: give a finite number")
        hint = ""
        if self.vars:
            hint = f"; this answer may use {', '.join(sorted(self.vars))}"
            joined = [v for v in self.vars if v in name and v != name]
            if joined:
                hint += " (write products with *, e.g. " + "*".join(sorted(joined)[:2]) + ")"
        elif name in ("E", "Exp", "EXP"):
            hint = "; write e for Euler's number or exp(x)"
        elif name in ("x", "y", "p", "q"):
            hint = "; this answer is a number, not a formula"
        raise AnswerParseError(f"unknown name {name!r} at column {tok.col}{hint}")


# ----------------------------------------------------------------------------- entry points

_E_NOTATION = re.compile(r"(\d*\.?\d*)e([+-])(\d+)")


def _refuse_ambiguous_e(tokens: list[Token]) -> None:
    """In an expression, "2e" is 2·e, so "2e+1" may be 2·e + 1 as well as 2×10¹: refuse it."""
    for tok in tokens:
        m = _E_NOTATION.fullmatch(tok.text) if tok.kind == "num" else None
        if m:
            mantissa, sign, digits = m.groups()
            other = f"{mantissa}e{digits}" if sign == "+" else f"{mantissa}*10^-{digits}"
            raise AnswerParseError(f"{tok.text!r} at column {tok.col} is ambiguous: write {mantissa}*e {sign} {digits} "
                                   f"or {other}")


_COMMA = re.compile(r",")
# on a decimal-comma sheet a point between a 1–3 digit lead and groups of three digits ("2.000",
# "1.234.567", "1.500,5") is how the comma locales group thousands: read as a decimal point it
# would silently make 2000 into 2
_GROUPED = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:\.\d{3})+(?![\d.eE])(?:,\d+)?")


# thousands grouped with a space, a no-break or thin space or an apostrophe ("4 832", "4’832",
# "1'234,5"): an apostrophe is never an answer's character, a space is only where one value is asked.
# A whole answer so written is read (read_thousands); one inside other text is refused, naming it
_SPACES = " \u00a0\u202f\u2009"
_SEPARATORS = f"[{_SPACES}'’]"
_SPACED = re.compile(f"(?<![\\d.,eE])[1-9]\\d{{0,2}}(?:{_SEPARATORS}\\d{{3}})+(?![\\d'’])(?:[.,]\\d+)?(?:[eE][-+]?\\d+)?")
_APOSTROPHE = re.compile("['’]")
# a decimal part with no leading zero (",75" where 0,75 or 0.75 was meant), at the start or after a sign
_BARE_FRACTION = re.compile(r"^\s*([-+−]?)\s*,(\d+)\s*$")


# a whole answer that is one number with its thousands grouped ("17,010", "17 010", "25,636,712",
# "4’832,5"): a 1-3 digit lead, then groups of exactly three digits, each after the same separator
# (a space of any width, an apostrophe or a comma); "1,00" and "17,01" are no such number
_THOUSANDS = re.compile(rf"\s*(?P<sign>[-+−]?)(?P<whole>(?P<lead>[1-9]\d{{0,2}})(?P<sep>[{_SPACES},'’])\d{{3}}"
                        r"(?:(?P=sep)\d{3})*)(?P<frac>[.,]\d+)?(?P<exp>[eE][-+]?\d+)?\s*")


def read_thousands(text: str, integer: bool) -> str:
    """One number with its thousands grouped, where one value is asked, without its separators
    ("17,010" → "17010"); any other text as it is. A space or an apostrophe groups thousands on any
    sheet. A comma does on a sheet with decimal points, where an integer part takes "17,010" and
    "1,000" (a decimal reading is no whole number) and a number part the groupings no decimal comma
    could write ("25,636,712", "17,010.5"), refusing "17,010" as ambiguous. On a decimal-comma sheet
    a comma is the decimal mark: a number part reads "17,010" as 17.01, as the sheet asks, and an
    integer part refuses it as ambiguous; "25,636,712" is refused there in every part."""
    m = _THOUSANDS.fullmatch(text)
    if not m:
        return text
    mark = "," if decimal_comma_on() else "."
    sep, frac, lead = m.group("sep"), m.group("frac") or "", m.group("lead")
    if frac and (frac[0] != mark or frac[0] == sep) or sep == "," and m.group("exp"):
        return text             # "4 832,5" on a decimal-point sheet, "17,010e3": refused as before
    number = text.strip()
    sign = m.group("sign").replace("−", "-")
    digits = re.sub(r"\D", "", m.group("whole"))
    groups = m.group("whole").count(sep)
    if sep == "," and mark == ",":
        spaced = f"{sign}{lead} " + " ".join(re.findall(r"\d{3}", digits[len(lead):]))
        if groups > 1:
            raise AnswerParseError(f"{number!r}: on this decimal-comma sheet a comma marks decimals and cannot group "
                                   f"thousands: write {sign}{digits} or {spaced}")
        if integer:
            raise AnswerParseError(f"{number!r} is ambiguous on this decimal-comma sheet: read with its decimal comma it "
                                   f"is no whole number, and a comma groups no thousands there; write {sign}{digits} "
                                   f"or {spaced}")
        return text
    if sep == "," and groups == 1 and not frac and not integer:
        point = f"{sign}{lead}.{digits[len(lead):]}"
        raise AnswerParseError(f"{number!r} is ambiguous: a comma groups thousands ({sign}{digits}) or marks decimals "
                               f"({point}); write {sign}{digits} or {point}")
    return sign + digits + frac + (m.group("exp") or "")


# an integer part's number with points between a 1–3 digit lead and groups of three digits
_POINT_GROUPS = re.compile(r"\s*(?P<sign>[-+−]?)(?P<lead>[1-9]\d{0,2})(?P<groups>(?:\.\d{3})+)\s*")


def read_integer_points(text: str) -> str:
    """An integer part's "99.328": points before groups of three digits. On a decimal-comma sheet a
    point groups thousands, and a whole number reads no other way: "99328" (but "2.000", two or two
    thousand, stays ambiguous there as in every part). On a decimal-point sheet the point may be a
    decimal point or a thousands separator: refused with both readings ("99.328 is not a whole
    number; if the point separates thousands, write 99328"). Any other text as it is ("22.5", a
    decimal graded wrong; "99328.000000001")."""
    m = _POINT_GROUPS.fullmatch(text)
    if not m:
        return text
    sign, lead, groups = m.group("sign").replace("−", "-"), m.group("lead"), m.group("groups")
    digits = sign + lead + groups.replace(".", "")
    zeros = groups == ".000"
    if decimal_comma_on():
        return text if zeros else digits
    number = text.strip()
    if groups.count(".") > 1:
        raise AnswerParseError(f"{number!r}: a point marks decimals on this sheet and groups no thousands: write "
                               f"{digits}")
    if zeros:
        raise AnswerParseError(f"{number!r} is ambiguous: a point marks decimals ({sign}{lead}) or groups thousands "
                               f"({digits}); write {sign}{lead} or {digits}")
    raise AnswerParseError(f"{number!r} is not a whole number; if the point separates thousands, write {digits}")


def _refuse_grouped_thousands(text: str, scalar: bool) -> None:
    """Thousands grouped with spaces or apostrophes, and a decimal part written without its zero:
    refused with the number as it should be written (on this sheet's decimal mark)."""
    mark = "," if decimal_comma_on() else "."
    for g in _SPACED.finditer(text):
        number = g.group(0)
        if scalar or _APOSTROPHE.search(number):
            digits = re.sub(_SEPARATORS, "", number)
            written = re.sub("[.,]", mark, digits)
            pieces = re.split(f"[{_SPACES}]", number)
            also = f", or a product with *: {'*'.join(pieces)}" if len(pieces) == 2 and number.isascii() \
                and not re.search("[.,eE]", number) else ""
            raise AnswerParseError(f"{number!r} at column {g.start() + 1}: write numbers without a thousands "
                                   f"separator: {written}{also}")
    if scalar:
        m = _BARE_FRACTION.match(text)
        if m:
            raise AnswerParseError(f"{text.strip()!r}: write the zero before the decimal {'comma' if mark == ',' else 'point'}: "
                                   f"{m.group(1).replace('−', '-')}0{mark}{m.group(2)}")


def from_decimal_comma(text: str) -> str:
    """Text written with decimal commas and ';' list separators, as the parser reads it (decimal
    points and ',' separators). A comma that is not between two digits is refused: lists take ';'.
    A point that may group thousands ("2.000": two thousand, or two?) is refused as ambiguous: a
    decimal point elsewhere ("0.5", "2.5", "1234.5") is read as one, as before."""
    g = _GROUPED.search(text)
    if g:
        number = g.group(0)
        grouped = number.replace(".", "")
        if number.count(".") == 1 and "," not in number:
            raise AnswerParseError(f"{number!r} at column {g.start() + 1} is ambiguous on this decimal-comma sheet: "
                                   f"a point groups thousands there ({grouped}) or marks decimals "
                                   f"({number.replace('.', ',')}); write {grouped} or {number.replace('.', ',')}")
        raise AnswerParseError(f"{number!r} at column {g.start() + 1}: write numbers without a thousands separator "
                               f"on this decimal-comma sheet: {grouped}")
    for m in _COMMA.finditer(text):
        i = m.start()
        bare = re.match(r"\d+", text[i + 1:])
        if bare and (i == 0 or text[i - 1] in " [(;+-−*/"):          # ",75": the zero left out
            raise AnswerParseError(f"',{bare.group(0)}' at column {i + 1}: write the zero before the decimal comma: "
                                   f"0,{bare.group(0)}")
        if not (0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()):
            raise AnswerParseError(f"',' at column {i + 1}: this sheet uses decimal commas (0,5); "
                                   "separate entries with ';', e.g. [0,1; 0,9]")
    return text.replace(",", ".").replace(";", ",")


def parse_text(text: str, *, variables: tuple[str, ...] | frozenset[str] = (), scalar: bool = False,
               integer: bool = False, expression: bool = False) -> Any:
    """Parse typed text into a node (scalar) or nested lists of nodes (vector, matrix).

    ``scalar``: the part expects one value, so a decimal comma ("0,5") is refused with a hint
    (unless inside ``decimal_comma()``, where commas are decimal and ';' separates entries).
    ``expression``: the text is an expression part's answer, where "2e" means 2·e, so a number
    written "<number>e[+-]<digits>" without spaces is refused as ambiguous ("2e+1": write
    2*e + 1 or 2e1); elsewhere it is scientific notation.
    Raises AnswerParseError (one line, with the column and a hint) for anything else.
    """
    check_size(text)
    if scalar:
        stripped = text.rstrip()
        if stripped.endswith(",") and not stripped.endswith(",,"):
            text = stripped[:-1]        # one value and a trailing comma ("80,100,"), as a list takes "[1, 2,]"
        text = read_thousands(text, integer)
    _refuse_grouped_thousands(text, scalar)
    if decimal_comma_on():
        text = from_decimal_comma(text)
    norm = normalise(text)
    if not norm:
        raise AnswerParseError("empty answer")
    if scalar:
        m = DECIMAL_COMMA.search(norm)
        if m:
            if integer and re.fullmatch(r"[-+]?\d+(?:,\d+){2,}", norm):       # "9,93,28": not in threes
                raise AnswerParseError(f"{norm!r}: a comma groups digits in threes (as in 17,010 or 25,636,712); write "
                                       "the whole number without commas, or with one before each group of three")
            if integer and m.group(0) != norm.lstrip("+-"):        # "[1,000, 2]", "1,000 + 2"
                raise AnswerParseError(f"{m.group(0)!r} at column {m.start() + 1}: one whole number is asked; write it "
                                       f"alone, e.g. {m.group(1)}{m.group(2)}")
            if integer:         # ("17,010" alone was read above: this comma groups no thousands)
                raise AnswerParseError(f"{m.group(0)!r}: a comma groups thousands in threes (as in 17,010); "
                                       "write the whole number without it")
            raise AnswerParseError(f"{m.group(0)!r}: use a decimal point, not a comma: {m.group(1)}.{m.group(2)}")
    if "=" in norm:
        raise AnswerParseError(f"'=' at column {norm.index('=') + 1}: type only the value, not an equation "
                               f"(e.g. {' '.join(norm.rsplit('=', 1)[1].split())[:30] or '0.5'})")
    tokens = tokenize(norm)
    if expression:
        _refuse_ambiguous_e(tokens)
    parser = _Parser(tokens, frozenset(variables))
    node = parser.parse_answer()
    check_exponents(node)
    if not scalar and not decimal_comma_on():
        _refuse_thousands_in_a_list(norm, parser.space_sep)
    if parser.comma_sep and parser.space_sep and DECIMAL_COMMA.search(norm):
        m = DECIMAL_COMMA.search(norm)
        raise AnswerParseError(f"{m.group(0)!r} is ambiguous: use a decimal point ({m.group(1)}.{m.group(2)}) "
                               "and separate entries with commas or spaces")
    return node


_LIST_THOUSANDS = re.compile(r"(?<![\d.])([1-9]\d{0,2})((?:,\d{3})+)(?![\d.])")


def _refuse_thousands_in_a_list(norm: str, space_sep: bool) -> None:
    """A list whose entries are separated by ", " or spaces, holding "1,000": a thousand, or the
    entries 1 and 0? Refused, never guessed ("[1,000,2]", commas alone, stays three entries)."""
    g = _LIST_THOUSANDS.search(norm)
    if g and (space_sep or re.search(r",\s", norm)):
        digits = g.group(1) + g.group(2).replace(",", "")
        point = f", or {g.group(1)}.{g.group(2)[1:]} with a decimal point" if g.group(2).count(",") == 1 else ""
        raise AnswerParseError(f"{g.group(0)!r} at column {g.start() + 1} is ambiguous in a list, where a comma "
                               f"separates entries: write {digits} for one number (no thousands separator in a "
                               f"list){point}")


def fast_number(text: str) -> float | None:
    """A plain decimal number ("0.245", "-2e-3") without the parser, or None (also for "2.000" on a
    decimal-comma sheet, which the parser refuses as ambiguous)."""
    if len(text) < 40 and PLAIN_NUMBER.fullmatch(text):
        if decimal_comma_on() and _GROUPED.search(text):
            return None
        try:
            return float(text)
        except ValueError:
            return None
    return None


def shape_of(value: Any, _depth: int = 0) -> tuple[int, ...]:
    """The shape of nested lists (rows of equal length), or raises AnswerParseError (ragged, or
    nested more than MAX_DEPTH levels)."""
    if not isinstance(value, list):
        return ()
    if not value:
        return (0,)
    if _depth >= MAX_DEPTH:
        raise AnswerParseError(f"answer nested too deeply (more than {MAX_DEPTH} levels)")
    inner = [shape_of(v, _depth + 1) for v in value]
    if any(s != inner[0] for s in inner):
        lengths = sorted({s[0] if s else 1 for s in inner})
        raise AnswerParseError(f"rows of different lengths ({', '.join(map(str, lengths))} entries): "
                               "every row needs the same number of entries")
    return (len(value),) + inner[0]
