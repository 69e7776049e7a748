"""LaTeX formulas to readable Unicode text for the terminal (a small, fixed subset of LaTeX).

Only the macros our own formulas use are rewritten; anything else is left as written.
"""
from __future__ import annotations

import re

_SYMBOLS = {
    r"\sigma": "σ", r"\tanh": "tanh", r"\odot": "⊙", r"\cdot": "·", r"\sum": "Σ", r"\max": "max",
    r"\log": "log", r"\ln": "ln", r"\ell": "ℓ", r"\sqrt": "√", r"\partial": "∂", r"\alpha": "α", r"\beta": "β",
    r"\gamma": "γ", r"\delta": "δ", r"\lambda": "λ", r"\dots": "…", r"\ldots": "…", r"\big": "", r"\Big": "",
    r"\varepsilon": "ε", r"\epsilon": "ε", r"\mu": "μ", r"\eta": "η", r"\theta": "θ", r"\omega": "ω",
    r"\varphi": "φ", r"\phi": "φ", r"\prod": "Π", r"\Phi": "Φ", r"\infty": "∞", r"\le": "≤", r"\ge": "≥", r"\times": "×",
    r"\leftarrow": "←", r"\Rightarrow": "⇒", r"\mapsto": "↦", r"\top": "ᵀ", r"\in": "∈", r"\lceil": "⌈",
    r"\rceil": "⌉", r"\lfloor": "⌊", r"\rfloor": "⌋", r"\left": "", r"\right": "", r"\quad": "   ",
    r"\,": " ", r"\ ": " ", r"\mathbb{1}": "𝟙", r"\arg": "arg", r"\sin": "sin", r"\cos": "cos",
    r"\pi": "π", r"\min": "min", r"\nabla": "∇", r"\to": "→", r"\lVert": "‖", r"\rVert": "‖",
    r"\rho": "ρ", r"\Delta": "Δ", r"\bar": "", r"\psi": "ψ", r"\cdots": "⋯",
}
_SUB = str.maketrans("0123456789+-=()aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ")
_SUP = str.maketrans("0123456789+-=()inT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿᵀ")


def _group(text: str, i: int) -> tuple[str, int]:
    """The brace group starting at text[i] == '{' (or a single char): (content, index after)."""
    while i < len(text) and text[i] == " ":
        i += 1
    if i < len(text) and text[i] == "{":
        depth = 0
        for j in range(i, len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                return text[i + 1:j], j + 1
        return text[i + 1:], len(text)
    if i < len(text) and text[i] == "\\":
        m = re.match(r"\\[A-Za-z]+", text[i:])
        if m:
            return m.group(0), i + len(m.group(0))
    return text[i:i + 1], i + 1


def _script(content: str, table: dict, wrap: str) -> str:
    letters = sum(c.isalpha() for c in content)
    if content and letters <= 1 and all(ord(c) in table for c in content):
        return content.translate(table)
    if re.fullmatch(r"[A-Za-z0-9]+", content):
        return f"{wrap}{content}"
    return f"{wrap}({content})" if len(content) > 1 else f"{wrap}{content}"


def to_text(latex: str) -> str:
    """Rewrite fractions, roots, sub/superscripts and common macros as Unicode text."""
    out, i = [], 0
    s = latex
    while i < len(s):
        if s.startswith(r"\frac", i) or s.startswith(r"\tfrac", i):
            i += 6 if s.startswith(r"\tfrac", i) else 5
            num, i = _group(s, i)
            den, i = _group(s, i)
            n, d = to_text(num).replace("∂ ", "∂"), to_text(den).replace("∂ ", "∂")
            n = n if re.fullmatch(r"[\w.∂ᵢⱼₖₗₘₙ₀-₉]+", n) else f"({n})"
            d = d if re.fullmatch(r"[\w.∂ᵢⱼₖₗₘₙ₀-₉]+", d) else f"({d})"
            out.append(f"{n}/{d}")
        elif s.startswith(r"\sqrt", i):
            arg, i = _group(s, i + 5)
            t = to_text(arg)
            out.append(f"√{t}" if re.fullmatch(r"\w+", t) else f"√({t})")
        elif s.startswith(r"\text", i) or s.startswith(r"\mathrm", i):
            i += 5 if s.startswith(r"\text", i) else 7
            arg, i = _group(s, i)
            out.append(arg.replace("\\_", "_"))
        elif s.startswith((r"\hat", r"\widehat", r"\tilde"), i):
            accent = "\u0303" if s.startswith(r"\tilde", i) else "\u0302"
            arg, i = _group(s, i + len(re.match(r"\\[a-z]+", s[i:]).group(0)))
            out.append(to_text(arg) + accent)
        elif s[i] in "_^":
            table = _SUB if s[i] == "_" else _SUP
            arg, i = _group(s, i + 1)
            if arg == r"\top":
                out.append("ᵀ")
            else:
                out.append(_script(to_text(arg), table, "_" if table is _SUB else "^"))
        elif s[i] == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", s[i:])
            tok = m.group(0)
            if s.startswith(r"\mathbb{1}", i):
                out.append("𝟙")
                i += len(r"\mathbb{1}")
                continue
            out.append(_SYMBOLS.get(tok, tok[1:] if tok in (r"\{", r"\}", r"\_") else tok))
            i += len(tok)
        elif s[i] in "{}":
            i += 1
        else:
            out.append(s[i])
            i += 1
    return re.sub(r"[ ]{2,}", " ", "".join(out)).strip() if "\\quad" not in latex else "".join(out).strip()
