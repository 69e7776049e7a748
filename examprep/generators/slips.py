"""The allow-list of known mistakes that stay in a generator (issue 37 item 1): slips of a problem's
own statement that no solve topic's parameters can express (the problem's choice options, a
question about the statement's wording), each with the reason it is not a table's. Every other
known mistake a generator emits is declared in its solve topic's table (examprep/solve/<area>.py)
and selected from there; tests/generators/test_mistakes_declared.py holds the rule and the cap of
40 slips in all.

SLIPS[generator][mistake id] = why it is a slip of the statement, not a mistake of a solve answer.
"""
from __future__ import annotations

SLIPS: dict[str, dict[str, str]] = {
    "attention-scores": {
        "bilinear": "an option of the statement's choice: which score form has no learned parameters",
        "additive": "an option of the statement's choice: which score form has no learned parameters",
    },
    "causal-mask": {
        "past": "an option of the statement's choice: what the causal mask prevents in training",
        "padding": "an option of the statement's choice: what the causal mask prevents (the padding mask's job)",
        "itself": "an option of the statement's choice: what the causal mask prevents (the diagonal stays allowed)",
    },
    "cross-attention": {
        "swapped-roles": "the options of the statement's two choices: which of decoder and encoder output gives Q, K, V",
    },
    "multi-head": {
        "projections": "an option of the statement's choice: which grows faster with n, the scores or the projections",
        "alike": "an option of the statement's choice: which grows faster with n, the scores or the projections",
    },
}
