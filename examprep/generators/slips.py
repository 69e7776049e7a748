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
    "activation": {     # level 3's d/dx σ(σ(x₀)), worded for the statement's one function taken twice
        "outer-only": "the outer sigmoid's slope alone, the statement's inner σ'(x₀) left out of the chain",
        "both-at-x0": "the statement's outer sigmoid's slope taken at x₀ instead of its own input σ(x₀)",
    },
    "residual": {
        "wrong-stack": "the other one of the statement's two choice options (plain or residual) for the stack "
                       "passing the larger gradient",
    },
    "softmax-cross-entropy": {      # the level-1 derivation, answered as an expression in p_i and y_i
        "y-minus-p": "the derivation's symbolic answer with its sign flipped, y_i − p_i",
        "p-only": "the derivation's symbolic answer without its target term, p_i alone",
        "sigmoid-derivative": "the derivation's symbolic answer as ∂p_i/∂z_i = p_i(1 − p_i) alone",
    },
    "optimizer-step": {
        "l2-is-decoupled": "the wrong one of the statement's two choice options (AdamW or Adam with L2) for the "
                           "decay that is the same for every weight",
    },
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
    "vanishing-gradient": {
        "explodes": "the other option of the statement's long_run choice (vanishes, explodes, stays moderate), "
                    "chosen from the same gradient",
        "bound-decides": "the other option of the statement's verdict choice (shrinks or grows), the bound |w|^T "
                         "read as the gradient's size",
    },
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
