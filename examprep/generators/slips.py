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
    "conv2d-channels": {
        "per-position": "the 1×1 layer's count times the positions of this statement's 2×2 image, which no "
                        "param-count parameter holds",
        "standard-conv": "the answer of the statement's own standard_params part (the standard conv it compares) "
                         "given for the depthwise-separable layer",
    },
    "param-count": {
        "grows-with-heads": "an option of the depends_on_heads choice the statement offers (more heads, more "
                            "parameters): no count, so no param-count answer",
        "shrinks-with-heads": "an option of the depends_on_heads choice the statement offers (more heads, fewer "
                              "parameters): no count, so no param-count answer",
    },
}
