"""The concept bank: complete, sourced, gradable, and refused when malformed."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from examprep.answers import check_part
from examprep.quiz import CHECKLIST, ConceptBankError, concept_problem, load_concepts

SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
TRANSFORMER_NOTES = "003_12529766f4c57e41.txt"

# The "Recall" prompts of the Transformer lecture, verbatim. The test below checks this list
# against the notes themselves whenever ../shared is beside the checkout.
RECALL_PROMPTS = [
    "What two RNN limits does attention mitigate?",
    r"Why divide by \(\sqrt{d_k}\)?",
    r"Self-attention output \(\mathbf{o}_i\) as weighted sum — weights from what?",
    "What do multiple heads buy you vs one head?",
    "Why causal mask in decoder training?",
    "Residual + LN: one purpose each.",
    "Where do Q vs K,V come from in cross-attention?",
    "BERT vs GPT: encoder-only or decoder-only? What do scaling laws predict?",
]

BANK = load_concepts()


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_every_question_has_an_answer_an_explanation_and_a_source():
    assert len(BANK.questions) >= 30
    for q in BANK.questions.values():
        assert q.answer is not None and q.explanation and len(q.explanation) > 40, q.id
        assert q.source.file in BANK.lectures and q.source.section and q.source.quote, q.id
        if q.kind == "choice":
            assert len(q.choices) >= 3 and 0 <= q.answer < len(q.choices), q.id


def test_every_recall_prompt_of_the_transformer_lecture_is_covered():
    covered = {q.recall for q in BANK.questions.values() if q.recall}
    assert set(RECALL_PROMPTS) <= covered
    assert covered <= set(RECALL_PROMPTS)            # no typo'd recall field


def test_every_fact_of_the_lecture_checklist_is_taught():
    taught = {tag for q in BANK.questions.values() for tag in q.covers}
    assert taught == set(CHECKLIST)


def test_no_trivia():
    trivia = re.compile(r"citation|BLEU|P100|Gmail|Baidu|Hinton|PageRank|interview|anecdote", re.I)
    for q in BANK.questions.values():
        assert not trivia.search(q.question + " ".join(q.choices)), q.id


def test_where_the_notes_are_loose_the_bank_says_so():
    notes = {q.id for q in BANK.questions.values() if q.note}
    # the known loose statements: tanh "mitigates" vanishing gradients; "PyTorch style" GRU blend;
    # "1 input, 2 outputs"; "permutation-invariant"; GPT-1 "few-shot"; −∞ on "tokens"
    assert {"tanh-vanishing-gradients", "gru-blend-convention", "lstm-gru-inputs-outputs",
            "positional-encoding-purpose", "bert-vs-gpt-objective", "causal-mask-placement"} <= notes


needs_notes = pytest.mark.skipif(not SEEDS.is_dir(), reason="../shared/seeds is not beside the checkout")


@needs_notes
def test_the_recall_list_is_the_lectures_own():
    lines = (SEEDS / TRANSFORMER_NOTES).read_text(encoding="utf-8").splitlines()
    assert [ln[len("Recall"):] for ln in lines if ln.startswith("Recall")] == RECALL_PROMPTS


DOCS = "pytorch-docs"         # the source where the lecture notes do not cover a subject (issue 19)


@needs_notes
def test_every_source_quote_is_verbatim_in_the_cited_notes():
    for q in BANK.questions.values():
        if q.source.file == DOCS:
            continue
        text = _norm((SEEDS / q.source.file).read_text(encoding="utf-8"))
        assert _norm(q.source.quote) in text, (q.id, q.source.quote)
        assert _norm(q.source.section) in text, (q.id, q.source.section)


def _plain_rst(text: str) -> str:
    """A docstring without its RST markup: roles (:math:`x`, :attr:`p`) and literals (``x``, `x`) as their text."""
    text = re.sub(r":[a-z]+:`([^`]*)`", r"\1", text)
    return _norm(text.replace("``", "").replace("`", ""))


def test_every_documentation_quote_is_verbatim_in_the_installed_torch():
    import importlib
    import inspect

    pytest.importorskip("torch")
    cited = [q for q in BANK.questions.values() if q.source.file == DOCS]
    assert len(cited) >= 10
    for q in cited:
        module, _, name = q.source.section.rpartition(".")
        obj = getattr(importlib.import_module(module), name)          # the section names the documented object
        quote = _norm(q.source.quote.replace("\\(", "").replace("\\)", ""))
        assert quote in _plain_rst(inspect.getdoc(obj)), (q.id, q.source.section, quote)


def test_the_new_subjects_have_their_concept_questions():
    ids = set(BANK.questions)
    assert {"batch-norm-eval", "adam-bias-correction", "one-by-one-convolution", "dropout-scaling",
            "bptt-summed-gradients"} <= ids
    assert {"cnn", "training"} <= set(BANK.topics())


@pytest.mark.parametrize("qid", sorted(BANK.questions))
def test_the_grader_accepts_the_answer_and_names_each_mistake(qid):
    q = BANK.questions[qid]
    problem = concept_problem(q, seed=0)
    (part,) = problem.parts
    assert check_part(part, str(part.expected)).status == "correct"
    for m in part.misconceptions:
        r = check_part(part, str(m.value))
        assert r.status == "misconception" and r.misconception.explanation == m.explanation, (qid, m.id)


@given(st.integers(0, 10**6))
def test_shuffled_choices_keep_the_right_answer(seed):
    for q in BANK.questions.values():
        if q.kind != "choice":
            continue
        problem = concept_problem(q, seed)
        label = problem.parts[0].expected
        shown = {t.text.split(") ", 1)[0]: t.text.split(") ", 1)[1] for t in problem.statement[1:]}
        assert shown[label] == q.choices[q.answer]


def test_choice_order_varies_with_the_seed():
    q = BANK.questions["why-sqrt-dk"]
    orders = {tuple(concept_problem(q, s).params["order"]) for s in range(20)}
    assert len(orders) > 5


GOOD = """
version = 1
[lectures]
"notes.txt" = "Notes"
[[question]]
id = "q1"
topic = "rnn"
kind = "choice"
question = "Which?"
choices = ["x", "y"]
answer = "a"
explanation = "Because."
source = { file = "notes.txt", section = "S", quote = "Q" }
"""


@pytest.mark.parametrize("edit, message", [
    (('explanation = "Because."\n', ""), "'explanation' must be a non-empty string"),
    (('answer = "a"\n', 'answer = "c"\n'), "answer 'c' must be one of the labels a, b"),
    (('answer = "a"\n', ""), "no 'answer'"),
    (('quote = "Q" ', 'quote = "" '), "'source' needs file, section and quote"),
    (('"notes.txt", section', '"other.txt", section'), "not listed in [lectures]"),
    (('topic = "rnn"', 'topic = "vision"'), "topic 'vision' is not one of"),
    (('kind = "choice"', 'kind = "essay"'), "kind 'essay'"),
    (('explanation', 'covers = ["trivia"]\nexplanation'), "unknown 'covers' tag"),
    (('explanation', 'mistakes = [{ answer = "a", why = "?" }]\nexplanation'), "is the correct answer"),
    (("version = 1", "version = 0"), "'version' must be a positive integer"),
    (("[[question]]", "[[question]\n"), "invalid TOML"),
])
def test_a_malformed_bank_is_refused_naming_the_question(tmp_path, edit, message):
    path = tmp_path / "bank.toml"
    path.write_text(GOOD.replace(*edit), encoding="utf-8")
    with pytest.raises(ConceptBankError) as err:
        load_concepts(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


def test_the_minimal_bank_loads(tmp_path):
    path = tmp_path / "bank.toml"
    path.write_text(GOOD, encoding="utf-8")
    assert list(load_concepts(path).questions) == ["q1"]


def test_duplicate_ids_are_refused(tmp_path):
    path = tmp_path / "bank.toml"
    path.write_text(GOOD + GOOD[GOOD.index("[[question]]"):], encoding="utf-8")
    with pytest.raises(ConceptBankError, match="duplicate id 'q1'"):
        load_concepts(path)
