"""LaTeX → Typst: every formula our topics produce converts in strict mode and compiles; the
constructs convert to the right Typst; text (ours or a user's) can never become markup."""
import re

import pytest
from hypothesis import given, settings, strategies as st

from examprep.render.pdf import compile_pdf
from examprep.render.typst.blocks import name_markup
from examprep.render.typst import latex as typst_latex
from tests.sheets.helpers import corpus, inline_math, pdf_text


def test_every_formula_of_every_topic_converts_strictly_and_compiles():
    formulas, texts, names = corpus()
    assert len(formulas) > 50 and len(texts) > 100        # the corpus really covers the topics
    parts = [typst_latex.math_display(f, strict=True) for f in formulas]
    for t in texts:
        for m in inline_math(t):
            typst_latex.latex_to_typst(m, strict=True)
        parts.append(typst_latex.text(t, strict=True))
    parts += [name_markup(n) for n in names]
    pdf = compile_pdf("#set document(date: none)\n" + "\n\n".join(parts))
    text, pages = pdf_text(pdf)
    assert pages >= 5 and "softmax" in text


@pytest.mark.parametrize("latex, typst", [
    (r"\frac{\partial L}{\partial z}", "frac(∂ L, ∂ z)"),
    (r"\sqrt{d_k}", "sqrt(d_k)"),
    (r"\hat y = X w + b", "hat(y) = X w + b"),
    (r"\tilde h_t", "tilde(h)_t"),
    (r"W_{ih} x", "W_(i h) x"),
    (r"h' = (1 - z) \odot h + z \odot n", "h' = ( 1 - z ) ⊙ h + z ⊙ n"),
    (r"S = QK^\top / \sqrt{d_k}", "S = Q K^⊤ \\/ sqrt(d_k)"),
    (r"\tfrac14", "frac(1, 4)"),
    (r"e^{23}", "e^(23)"),
    (r"x^23", "x^2 3"),
    (r"\max(a, b)", "max ( a \\, b )"),
    (r"\sum_{j'} e^{s_{ij'}}", "sum_(j') e^(s_(i j'))"),
    (r"\left\lceil \frac{n}{s} \right\rceil", "lr(⌈ frac(n, s) ⌉)"),
    (r"\mathrm{softmax}(z)", 'op("softmax") ( z )'),
    (r"x \text{ if } x > 0", 'x " if " x gt 0'),
    (r"\text{output\_padding}", '"output_padding"'),
    (r"\mathbb{1}[x > 0]", "bb(1) [ x gt 0 ]"),
    (r"\begin{bmatrix} 1 & -2 \\ 3 & 4 \end{bmatrix}", 'mat(delim: "[", 1, - 2; 3, 4)'),
    (r"\varepsilon, \epsilon, \phi, \varphi", "ε \\, ϵ \\, ϕ \\, φ"),
    (r"\lVert g \rVert", "‖ g ‖"),
])
def test_constructs_convert_to_typst(latex, typst):
    assert typst_latex.latex_to_typst(latex, strict=True) == typst


def test_typst_specials_in_latex_are_escaped():
    # '/' would be a fraction, ',' and ';' would split a function's arguments, '#' starts code
    out = typst_latex.latex_to_typst(r"\frac{a/b, c; d}{\#x}", strict=True)
    assert out == "frac(a \\/ b \\, c \\; d, \\# x)"
    compile_pdf(f"$ {out} $")


def test_unknown_macro_is_an_error_in_strict_mode_and_shown_by_name_otherwise():
    with pytest.raises(typst_latex.UnsupportedLatex, match=r"\\weird"):
        typst_latex.latex_to_typst(r"a \weird b", strict=True)
    assert 'upright("weird")' in typst_latex.latex_to_typst(r"a \weird b")
    with pytest.raises(typst_latex.UnsupportedLatex, match="right"):
        typst_latex.latex_to_typst(r"\left( x", strict=True)


@pytest.mark.parametrize("latex", [r"\left# a \right;", r"\left X b \right X", r"\left@ c \right\}", r"\bigl# d \bigr,"])
def test_an_unknown_delimiter_after_left_is_shown_as_written_and_compiles(latex):
    """\\left X passed X to Typst as code: '#' and ';' stopped the document from compiling."""
    with pytest.raises(typst_latex.UnsupportedLatex, match="unknown delimiter"):
        typst_latex.latex_to_typst(latex, strict=True)
    out = typst_latex.latex_to_typst(latex)
    assert re.search(r'"[#X@]"', out), out
    compile_pdf(f"#set document(date: none)\n$ {out} $")


HOSTILE = ['#import "@preview/cetz:0.2.0": *', '$x$ and $$', "*bold* _em_ `raw` <label> @ref",
           "// not a comment", "= not a heading", "- not a list", 'quote " and backslash \\ and \\n',
           "#{ panic() }", "]) ) } #set page(width: 1pt)", "ünïcödé — ⊙ √ ᵀ 🎓"]


@pytest.mark.parametrize("raw", HOSTILE)
def test_user_text_is_typeset_verbatim_never_as_markup(raw):
    pdf = compile_pdf(f"#set document(date: none)\nBEGIN #{typst_latex.typst_string(raw)}; END")
    text, _ = pdf_text(pdf)
    squash = lambda s: re.sub(r"\s+", "", s)       # pypdf's spacing is not the source's
    if "🎓" not in raw:                            # no built-in font has the emoji glyph
        assert squash(f"BEGIN {raw} END") in squash(text)


@settings(max_examples=25)
@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_categories=("Cs",)),
               max_size=40))
def test_any_printable_text_compiles(raw):
    compile_pdf(f"#set document(date: none)\n{typst_latex.text(raw)}")
