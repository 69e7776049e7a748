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
    "lora": {
        "one-per-layer": "the statement adapts W_Q and W_V of every layer; one per layer miscounts its wording",
        "all-four": "the statement adapts W_Q and W_V only; adding W_K and W_O misreads its wording",
        "unmerged": "a wrong option of the statement's merge-latency choice, worded by the statement",
        "two-products": "a wrong option of the statement's merge-latency choice, worded by the statement",
    },
    "positional-encoding": {
        "pair-zero-frequency": "the statement's pair i read as pair 0: its own choice of which two entries to ask",
        "shortest": "the statement asks the longest wavelength; the shortest answers another question",
        "added-not-rotated": "the statement sets the sinusoidal code beside RoPE; adding it is its comparison",
        "both": "a wrong option of the statement's depends-on choice, worded by the statement",
        "position": "a wrong option of the statement's depends-on choice, worded by the statement",
    },
    "rope": {
        "grows": "a wrong option of the statement's length choice, worded by the statement",
        "shrinks": "a wrong option of the statement's length choice, worded by the statement",
        "absolute": "a wrong option of the statement's depends-on choice, worded by the statement",
        "sum": "a wrong option of the statement's depends-on choice, worded by the statement",
    },
    "scaling-law": {
        "wrong-direction": "a wrong option of the statement's regime choice (fewer or more tokens than compute-optimal)",
        "ignores-ratio": "a wrong option of the statement's regime choice (about compute-optimal)",
        "linear": "the statement's growth factor of the budget taken for N's: its own question, no topic's answer",
    },
}
