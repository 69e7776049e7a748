"""Symbols typed in a problem's prose (d_k, W_hn, b_ih, C_out in statements, conventions, hints,
mistakes and step titles) are typeset as math in the PDF (Typst) and in Markdown, and printed as the
terminal prints math; names of code, part ids, file names, code spans and math stay as written."""
import pytest

from examprep import generators
from examprep.render import prose_symbols
from examprep.render.markdown import sheet_markdown
from examprep.render.pdf import compile_pdf
from examprep.render.terminal import inline, print_problem
from examprep.render.typst import latex as typst_latex
from examprep.render.typst.sheet import sheet_source
from examprep.sheets.build import build_sheet
from examprep.sources.recipes import parse_recipe
from tests.sheets.helpers import pdf_text


@pytest.mark.parametrize("prose, shown", [
    ("d_k", "$d_{k}$"),
    ("W_hn and b_ih, C_out × C_in", "$W_{hn}$ and $b_{ih}$, $C_{out}$ × $C_{in}$"),
    ("the scale 1/d_k.", "the scale 1/$d_{k}$."),                           # a sentence's full stop is no file suffix
    ("Σ_ij δ_ij · 1", "$Σ_{ij}$ $δ_{ij}$ · 1"),                             # a Greek base
    ("r_l = r_{l−1} + (k_eff − 1)·j_{l−1}", "$r_{l}$ = $r_{l-1}$ + ($k_{eff}$ − 1)·$j_{l-1}$"),
    ("p_i = e^{z_i} / Σ_j e^{z_j}", "$p_{i}$ = $e^{z_i}$ / $Σ_{j}$ $e^{z_j}$"),
    ("1/(1 + e^{−x})", "1/(1 + $e^{-x}$)"),
    ("δ_n x_nᵀ", "$δ_{n}$ $x_{n}^{\\top}$"),
    ("h_t'", "$h_{t}'$"),
    ("∂h_t/∂h_(t−1) = ∏_{k=t+1}^{T} diag(1 − h_k²)", "∂$h_{t}$/∂$h_{t-1}$ = $∏_{k=t+1}^{T}$ diag(1 − $h_{k}^{2}$)"),
    ("sin(pos/10000^{2i/d_model})", "sin(pos/$10000^{2i/d_{model}}$)"),          # a subscript in a group, braced
])
def test_a_symbol_in_prose_becomes_math(prose, shown):
    assert prose_symbols(prose) == shown


@pytest.mark.parametrize("prose", [
    "kernel_size, count_include_pad, weight_decay, max_pool2d",     # code: a base longer than one letter
    "grad_w1, total_params, h_new_pytorch",                         # part ids (a second underscore too)
    "answer q1.d_k; the file x_train.csv",                          # a dotted name, a file name
    "2x_1",                                                         # inside a number's product
    "`d_k` and `W_hn`",                                             # code spans
    "$d_{model}$ = 64 and $W_{hn}$",                                # math already
    "costs $5 for d_k",                                             # an unpaired $: nothing could pair safely
    "x[c, i, j] and e^(−x) and |w|^T and 1.5^{2}",                  # no subscript, no braced superscript on a letter
])
def test_names_of_code_ids_files_code_and_math_stay_as_written(prose):
    assert prose_symbols(prose) == prose


def test_the_terminal_prints_them_as_it_prints_math():
    assert inline("d_k, x_i and h_{t−1}") == "dₖ, xᵢ and hₜ₋₁"
    assert inline("W_hn, C_out, d_model") == "W_hn, C_out, d_model"     # as $W_{hn}$ prints: no Unicode for most
    assert inline("grad_w1 and `d_k`") == "grad_w1 and `d_k`"


def test_the_problem_view_at_80_columns_prints_the_conventions_symbols(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    print_problem(generators.build("attention-scores", 3, 1), no_color=True, solution=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "context: c = Σⱼ αⱼ hⱼ" in out and "Σ_j" not in out


@pytest.fixture(scope="module")
def sheet():
    recipe = parse_recipe('[sheet]\ntitle = "Symbols"\n\n[[problem]]\ntopic = "gru-step"\n\n'
                          '[[problem]]\ntopic = "conv2d-channels"\n', "symbols.toml")
    return build_sheet(recipe, 3)


def test_the_pdf_typesets_conventions_mistakes_and_steps_as_math(sheet):
    source = sheet_source(sheet, solutions=True, strict=True)
    conventions = [line for line in source.splitlines() if "Conventions." in line]
    assert "$W_(h n)$" in conventions[0] and "$b_(h n)$" in conventions[0]        # gru-step: reset after
    assert "$C_(o u t)$" in conventions[1] and "$C_(i n)$" in conventions[1]      # conv2d-channels: the kernel's layout
    mistakes = next(line for line in source.splitlines() if "mistakes((" in line)
    assert "$W_(i h)$" in mistakes and "W_ih" not in mistakes
    assert '[(d) #"h_new";]' in source                                             # part ids as written
    assert '"q1.h_new"' in sheet_source(sheet, solutions=False, strict=True)
    text, _ = pdf_text(compile_pdf(source))
    assert "W_hn" not in text and "C_out" not in text and "h_new" in text


def test_markdown_writes_them_as_math(sheet):
    md = sheet_markdown(sheet, solutions=True)
    assert "$W_{hn}$" in md and "$C_{out}$" in md and "W_hn" not in md.replace("$W_{hn}$", "")
    assert "`q1.h_new`" in md and "| (d) h_new |" in md


@pytest.mark.parametrize("raw", ['x_{#import "a"} y_{"} z_{\\}', "a_{]} b_(#set page(width: 1pt)) c_{<l>}",
                                 "d_k_ e_{} f_{@ref} g^{#x}"])
def test_a_hostile_symbol_is_math_that_compiles(raw):
    shown = prose_symbols(raw)
    assert shown.count("$") >= 4, shown                  # made math, whose converter escapes Typst's specials
    compile_pdf(f"#set document(date: none)\n{typst_latex.prose(raw, strict=False)}")
