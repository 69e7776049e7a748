"""Exact answers as text in the answer syntax students type (parsed by examprep.answers), and
their LaTeX for display. Templated, never simplified by sympy at generation time (speed)."""
from __future__ import annotations

import re
from fractions import Fraction


def frac(f: Fraction) -> str:
    """A fraction as typed: "3", "-1/2"."""
    f = Fraction(f)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def exp_term(a: Fraction | int) -> str:
    """e^a as typed: 1 for a = 0, e for a = 1, e^(a) otherwise."""
    a = Fraction(a)
    if a == 0:
        return "1"
    if a == 1:
        return "e"
    return f"e^{frac(a)}" if a.denominator == 1 and a > 0 else f"e^({frac(a)})"


def softmax_entry(exponents: list, i: int) -> str:
    """e^{a_i} / (e^{a_1} + … + e^{a_n}) as typed."""
    den = " + ".join(exp_term(a) for a in exponents)
    return f"{exp_term(exponents[i])}/({den})"


def weighted_sum(exponents: list, values: list) -> str:
    """(Σ v_j e^{a_j}) / (Σ e^{a_j}) as typed."""
    terms = []
    for a, v in zip(exponents, values):
        v = Fraction(v)
        if v == 0:
            continue
        e = exp_term(a)
        coef = frac(v)
        if e == "1":
            terms.append(coef)
        elif coef in ("1", "-1"):
            terms.append(e if coef == "1" else f"-{e}")
        else:
            terms.append(f"{coef}*{e}")
    num = " + ".join(terms) if terms else "0"
    den = " + ".join(exp_term(a) for a in exponents)
    num = num.replace("+ -", "- ")
    return f"{num}/({den})" if len(terms) == 1 and not num.startswith("-") else f"({num})/({den})"


def to_latex(expr: str) -> str:
    """The typed syntax above (and ln, sqrt) as LaTeX."""
    s = expr
    s = re.sub(r"sqrt\(([^()]*)\)", r"\\sqrt{\1}", s)
    s = re.sub(r"\be\^\(([^()]*)\)", r"e^{\1}", s)
    s = re.sub(r"\be\^(-?\d+(?:/\d+)?)", r"e^{\1}", s)
    s = re.sub(r"\bln\b", r"\\ln", s)
    s = s.replace("*", r" \cdot ")
    # a top-level a/b with parenthesised sides becomes \frac
    m = re.fullmatch(r"\((.*)\)/\((.*)\)", s)
    if m and m.group(1).count("(") == m.group(1).count(")"):
        return rf"\frac{{{m.group(1)}}}{{{m.group(2)}}}"
    m = re.fullmatch(r"([^/()]+)/\((.*)\)", s)
    if m:
        return rf"\frac{{{m.group(1)}}}{{{m.group(2)}}}"
    m = re.fullmatch(r"(-?\d+)/(\d+)", s)
    if m:
        return rf"{'-' if m.group(1).startswith('-') else ''}\frac{{{m.group(1).lstrip('-')}}}{{{m.group(2)}}}"
    return s


_EXACT_WORDS = re.compile(r"\b(?:ln|log|sqrt|exp|e|pi)\b")


def is_exact_form(text: str) -> bool:
    """True for an exact value in the answer syntax ("e^2/(1 + e^2)", "ln 2", "-1/3", "sqrt(2)/2"),
    False for words (a choice such as "attending to later positions")."""
    rest = _EXACT_WORDS.sub("", text)
    return bool(text.strip()) and re.fullmatch(r"[0-9.+\-*/^()\s,]*", rest) is not None
