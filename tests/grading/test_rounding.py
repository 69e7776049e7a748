"""Rounding too coarsely: a vector or matrix entry gets the verdict a number rounded the same way
gets, named once with its figures, and the penalty counts once per chain of dependent parts.
The students' answers are rounded here with Python's own formatting (f"{x:.2g}"), and the
carried-forward values are recomputed with numpy formulas written out, never the engine's."""
import math

import numpy as np
import pytest

from examprep import generators, sheets
from examprep.answers import check_part
from examprep.answers.rounding import Counted, RoundingChain
from examprep.grading import Settings, grade_submission
from examprep.keys import answer_template
from examprep.problem import EXACT, Misconception, Part, Tolerance
from examprep.sheets.build import instructions

SIGFIGS = Tolerance("sigfigs", 3)           # the default rule: 3 figures, or ±0.001 near zero


def sig(x, k=2):
    """Round like a student: k significant figures, entry by entry."""
    if isinstance(x, (list, tuple, np.ndarray)):
        return [sig(v, k) for v in x]
    return float(f"{float(x):.{k}g}")


def text(value) -> str:
    """A number or nested lists as a student types them."""
    if isinstance(value, list):
        return "[" + ", ".join(text(v) for v in value) + "]"
    return f"{value:g}"


def vector(expected, tol=SIGFIGS):
    return Part("v", "v", "vector", expected, shape=(len(expected),), tolerance=tol, points=3)


def number(expected, tol=SIGFIGS):
    return Part("x", "x", "number", expected, tolerance=tol, points=1)


# ----------------------------------------------------------------------------- one part

def test_a_rounded_vector_gets_per_entry_what_a_rounded_number_gets():
    want, typed = [0.2447, 0.0900, 0.6652], ["0.24", "0.090", "0.67"]
    alone = [check_part(number(w), t) for w, t in zip(want, typed)]
    assert [r.feedback for r in alone] == ["rounded to 2 significant figures; give 3", "correct",
                                           "rounded to 2 significant figures; give 3"]
    r = check_part(vector(want), "[" + ", ".join(typed) + "]")
    assert r.status == "wrong"
    assert r.score == pytest.approx(3 * sum(a.score for a in alone) / 3)      # the same credit, entry by entry
    assert r.feedback == "1 of 3 entries right; entries 1, 3 rounded to 2 significant figures; give 3"


def test_a_vector_with_every_entry_rounded_says_so_rather_than_no_entry_is_right():
    r = check_part(vector([0.3844, 0.2332, 0.3824]), "[0.38, 0.23, 0.38]")
    assert (r.status, r.score) == ("wrong", 0)
    assert r.feedback == "entries 1, 2, 3 rounded to 2 significant figures; give 3"
    assert check_part(vector([0.3844, 0.2332, 0.3824]), "[0.1, 0.8, 0.1]").feedback == "no entry is right"


def test_a_rounded_matrix_names_its_entries_by_row_and_column():
    part = Part("m", "m", "matrix", [[0.2447, 1.5], [0.0900, -0.6652]], shape=(2, 2), tolerance=SIGFIGS, points=2)
    r = check_part(part, "[[0.24, 1.5], [0.090, -0.67]]")
    assert r.feedback == "2 of 4 entries right; entries (1, 1), (2, 2) rounded to 2 significant figures; give 3"
    assert r.score == pytest.approx(1.0)


def test_a_mixed_vector_names_the_rounded_entry_and_the_wrong_one_apart():
    r = check_part(vector([0.2447, 0.0900, 0.6652]), "[0.24, 0.5, 0.6652]")
    assert r.feedback == "1 of 3 entries right; entry 1 rounded to 2 significant figures; give 3; check entry 2"
    assert r.score == pytest.approx(1.0)


def test_a_tie_rounds_either_way_and_the_figures_named_are_those_written():
    # 1.25 to 2 figures is 1.3 by hand and 1.2 by Python's float formatting: both are rounding
    for typed in ("1.2", "1.3"):
        assert check_part(number(1.25), typed).feedback == "rounded to 2 significant figures; give 3"
    assert check_part(number(0.2447), "0.2").feedback == "rounded to 1 significant figure; give 3"
    assert check_part(vector([0.2447, 0.6652]), "[0.2, 0.67]").feedback == \
        "entries 1, 2 rounded to 1 or 2 significant figures; give 3"
    assert "rounded" not in check_part(number(0.6652), "0.66").feedback        # cut off, not rounded: wrong


def test_no_rounding_rule_where_the_part_is_exact_or_a_whole_number():
    # the same typed vector that reads as rounded under significant figures is simply wrong when exact
    assert "rounded to 2" in check_part(vector([0.2447, 0.0900, 0.6652]), "[0.24, 0.090, 0.67]").feedback
    exact = check_part(vector([0.2447, 0.0900, 0.6652], EXACT), "[0.24, 0.090, 0.67]")
    assert exact.feedback == "1 of 3 entries right; check entries 1, 3"
    count = Part("n", "n", "integer", 1234, tolerance=EXACT)
    assert check_part(count, "1200").feedback == "not the right whole number"
    assert check_part(number(0.6652, Tolerance("decimals", 3)), "0.67").feedback == "not within the tolerance"


# ----------------------------------------------------------------------------- once per chain

@pytest.fixture(scope="module")
def softmax():
    p = generators.build("softmax-cross-entropy", 4, 1)
    assert p.part("probs").expected == pytest.approx([0.2447, 0.0900, 0.6652], abs=1e-4)     # the vector
    return p


@pytest.mark.parametrize("seed", [4, 8])
def test_later_parts_built_on_rounded_probs_are_carried_forward_not_docked_again(seed):
    p = generators.build("softmax-cross-entropy", seed, 1)
    assert p.params["reduction"] == "mean" and not p.params["label_smoothing"] and np.ndim(p.part("probs").expected) == 1
    probs = sig(p.part("probs").expected)                          # seed 4: [0.24, 0.09, 0.67]
    target = p.params["target"]
    y = np.eye(len(probs))[target]
    grad = sig(np.array(probs) - y)                                # from the rounded probs, rounded again
    loss = sig(p.part("loss").expected)                            # the key's loss rounded, as the trial wrote it
    assert not math.isclose(loss, -math.log(probs[target]), abs_tol=5e-4)     # not what the rounded probs give
    answers = {"q1.probs": text(probs), "q1.loss": text(loss), "q1.grad_logits": text(grad)}
    res = grade_submission([p], answers)
    parts = {r.part_id: r for _, _, r in res.parts()}
    assert parts["probs"].status == "wrong" and "rounded to 2 significant figures" in parts["probs"].feedback
    for pid in ("loss", "grad_logits"):
        assert (parts[pid].status, parts[pid].score) == ("ecf", p.part(pid).points), (pid, parts[pid].feedback)
    assert parts["loss"].feedback == ("rounded, as in probs, where the rounding was already counted (once per "
                                      "chain): error carried forward") and parts["loss"].ecf_from == ("probs",)
    # carried-forward credit is the run's; without it the rounding is docked again
    half = grade_submission([p], answers, settings=Settings(ecf_credit=0.5))
    assert {r.part_id: r.score for _, _, r in half.parts()}["loss"] == pytest.approx(0.5 * p.part("loss").points)
    off = grade_submission([p], answers, settings=Settings(ecf=False))
    assert {r.part_id: r.status for _, _, r in off.parts()}["loss"] == "wrong"


@pytest.mark.parametrize("figures", [2, 1])        # at 1 figure throughout, docked once at 1 as at 2
def test_a_chain_rounded_throughout_is_docked_once_at_its_first_rounded_part(figures):
    p = generators.build("mlp-backprop", 1, 1)
    assert all(part.tolerance == SIGFIGS for part in p.parts)

    def within(a, e):       # the 3-figure rule with its ±0.001 floor, written out
        return abs(a - e) <= max(0.5 * 10 ** (math.floor(math.log10(abs(e))) - 2), 1e-3) if e else abs(a) <= 1e-3

    def rounded_off(part):
        return not all(within(a, e) for a, e in zip(np.ravel(sig(part.expected, figures)), np.ravel(part.expected)))

    first = next(part.id for part in p.parts if rounded_off(part))
    later = [part.id for part in p.parts[[q.id for q in p.parts].index(first) + 1:] if rounded_off(part)]
    assert later                                    # the chain goes on rounding after its first docking
    res = grade_submission([p], {f"q1.{part.id}": text(sig(part.expected, figures)) for part in p.parts})
    got = {r.part_id: r for _, _, r in res.parts()}
    kept = np.mean([within(a, e) for a, e in zip(np.ravel(sig(p.part(first).expected, figures)),
                                                  np.ravel(p.part(first).expected))]) * p.part(first).points
    assert got[first].status == "wrong" and got[first].score == pytest.approx(kept)     # its right entries count
    assert all(got[pid].status == "ecf" and got[pid].full_marks for pid in later), \
        {pid: got[pid].feedback for pid in later}
    assert res.score == pytest.approx(p.points - p.part(first).points + kept)


def test_each_chain_is_docked_once_where_two_chains_meet():
    p = generators.build("gru-step", 1, 1)
    deps = {part.id: tuple(part.depends_on) for part in p.parts}
    assert deps == {"r": (), "z": (), "n": ("r",), "h_new": ("z", "n")}       # two chains, r→n and z, meet in h_new
    res = grade_submission([p], {f"q1.{part.id}": text(sig(part.expected, 1)) for part in p.parts})
    got = {r.part_id: r for _, _, r in res.parts()}
    assert [(got[i].status, got[i].feedback) for i in ("r", "z")] == [("wrong", "rounded to 1 significant figure; give 3")] * 2
    assert all(got[i].status == "ecf" and got[i].full_marks for i in ("n", "h_new"))
    assert res.score == pytest.approx(p.points - p.part("r").points - p.part("z").points)


def graded(p, answers, **settings):
    res = grade_submission([p], {f"q1.{k}": v for k, v in answers.items()}, **settings)
    return {r.part_id: r for _, _, r in res.parts()}


def test_a_later_part_rounded_coarser_than_its_chain_was_docked_at_is_docked_again():
    # the attack: one entry docked at 2 figures, then the later parts written to 1 figure
    gru = generators.build("gru-step", 1, 1)
    got = graded(gru, {"r": "0.378", "z": text(sig(gru.part("z").expected)), "n": "-0.830",
                       "h_new": text(sig(gru.part("h_new").expected, 1))})            # z 0.73, h_new -0.3
    assert (got["z"].status, got["z"].rounded) == ("wrong", 2)
    assert (got["h_new"].status, got["h_new"].score, got["h_new"].feedback) == \
        ("wrong", 0, "rounded to 1 significant figure; give 3")
    p = generators.build("softmax-cross-entropy", 7, 1)                       # the attacker's: loss 2.2395
    probs, y = sig(p.part("probs").expected), np.eye(3)[p.params["target"]]   # [0.11, 0.79, 0.11]: docked at 2
    loss, grad = sig(p.part("loss").expected, 1), sig(p.part("grad_logits").expected, 1)     # 2; [0.1, -0.2, 0.1]
    assert sig(-math.log(probs[p.params["target"]]), 1) == loss and sig(np.array(probs) - y, 1) == grad   # and of ECF
    got = graded(p, {"probs": text(probs), "loss": text(loss), "grad_logits": text(grad)})
    assert (got["loss"].status, got["loss"].score, got["loss"].feedback) == \
        ("wrong", 0, "rounded to 1 significant figure; give 3")
    assert (got["grad_logits"].score, got["grad_logits"].feedback) == \
        (0, "entries 1, 2, 3 rounded to 1 significant figure; give 3")


def test_a_chain_docked_at_2_figures_then_at_1_is_docked_twice_and_then_excused_at_1():
    p = generators.build("gru-step", 1, 1)                                     # r→n, and z, meet in h_new
    at = {"r": 2, "z": 2, "n": 1, "h_new": 1}
    got = graded(p, {pid: text(sig(p.part(pid).expected, k)) for pid, k in at.items()})
    assert [(got[i].status, got[i].rounded) for i in at] == [("wrong", 2), ("wrong", 2), ("wrong", 1), ("ecf", 0)]
    assert got["n"].feedback == "rounded to 1 significant figure; give 3"
    assert got["h_new"].feedback.startswith("rounded, as in n, where the rounding was already counted")
    chain = RoundingChain(p.parts)
    for part in p.parts:
        chain.after(part, got[part.id])
    assert chain.docked == {"r": 2, "z": 2, "n": 1}
    assert chain.counted_for(p.part("h_new")) == Counted("n", 1)                # the coarsest docked so far
    assert chain.counted_for(p.part("r")) is None
    # after the docking at 1, a finer rounding is excused too; a number that is no rounding is still wrong
    assert graded(p, {**{pid: text(sig(p.part(pid).expected, k)) for pid, k in at.items()}, "h_new": "-0.34"}
                  )["h_new"].status == "ecf"
    assert graded(p, {**{pid: text(sig(p.part(pid).expected, k)) for pid, k in at.items()}, "h_new": "-0.5"}
                  )["h_new"].feedback == "not within the tolerance"


def test_mixed_entries_dock_the_chain_at_its_coarsest_figures(softmax):
    grad_key = softmax.part("grad_logits").expected                            # [0.2447, 0.0900, -0.3348]
    # probs with one entry at 1 figure and one at 2: the chain is docked at 1, and 1-figure answers are excused
    got = graded(softmax, {"probs": "[0.2, 0.090, 0.67]", "loss": "0.4", "grad_logits": text(sig(grad_key, 1))})
    assert (got["probs"].rounded, got["probs"].feedback) == \
        (1, "1 of 3 entries right; entries 1, 3 rounded to 1 or 2 significant figures; give 3")
    assert [(got[i].status, got[i].full_marks) for i in ("loss", "grad_logits")] == [("ecf", True)] * 2
    # probs docked at 2: in a later vector the 2-figure entry is excused, the 1-figure one docked
    got = graded(softmax, {"probs": text(sig(softmax.part("probs").expected)), "grad_logits": "[0.24, 0.09, -0.3]"})
    g = got["grad_logits"]
    assert (g.status, g.rounded, g.score) == ("wrong", 1, pytest.approx(2.0))
    assert g.feedback == ("1 of 3 entries right; entry 1 rounded to 2 significant figures, as in probs, where the "
                          "rounding was already counted; entry 3 rounded to 1 significant figure; give 3")


def test_a_known_mistake_that_is_also_the_key_rounded_is_named_as_the_mistake_and_says_so():
    slope_only = Misconception("slope-only", [1.0] * 4, "∂h_t/∂h_{t−1} = w·ReLU'(a_t): include the weight w.")
    part = Part("local_derivatives", "d", "vector", [1.25] * 4, shape=(4,), tolerance=SIGFIGS, points=2,
                misconceptions=(slope_only,))
    for counted in (Counted("hidden", 1), None):             # the chain docked at 1 figure, or not docked
        r = check_part(part, "[1, 1, 1, 1]", rounding_counted=counted)
        assert (r.status, r.score, r.misconception) == ("misconception", 0, slope_only)
        assert r.feedback == ("∂h_t/∂h_{t−1} = w·ReLU'(a_t): include the weight w (also the right value rounded "
                              "to 1 significant figure: too few figures to tell the two apart; give 3)")
    one = Part("d", "d", "number", 1.25, tolerance=SIGFIGS, misconceptions=(Misconception("m", 1.0, "no w"),))
    assert check_part(one, "1", rounding_counted=Counted("hidden", 1)).feedback.startswith("no w (also the right value")
    # a mistake that is no rounding of the key keeps its explanation alone
    assert check_part(Part("d", "d", "number", 1.6, tolerance=SIGFIGS, misconceptions=(Misconception("m", 1.0, "no w"),)),
                      "1").feedback == "no w"


# ----------------------------------------------------------------------------- the answer file says so

def test_the_answer_file_and_the_sheet_state_the_once_per_chain_rule_where_figures_are_the_rule(softmax):
    assert "carried forward" in answer_template([softmax]).split("student_id")[0]
    exact = generators.build("receptive-field", 1, 1)
    assert all(part.tolerance.rule == "exact" for part in exact.parts)
    assert "rounded answers" not in answer_template([exact])
    for topic, said in (("softmax-cross-entropy", True), ("receptive-field", False)):
        printed = " ".join(instructions(sheets.build_sheet(sheets.recipe_from_topics([topic], count=1, difficulty=1), 1)))
        assert ("rounded to too few figures loses its marks once" in printed) is said, topic
