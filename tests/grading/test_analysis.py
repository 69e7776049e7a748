"""Item analysis (issue 23): every statistic against an independent computation written here with
numpy (textbook formulas: Pearson's r from deviations, KR-20 from p and q, α from variances), on
hand-built classes whose answers are known, and its edge cases (one student, all correct, a part
nobody answered, zero variance: None in JSON, never NaN)."""
import json

import numpy as np
import pytest

from examprep.grading.analysis import GROUP_MIN, analyse, csv_text, from_grades, item_data
from examprep.fileio import InputError


def grades(matrix, points, *, parts=None, statuses=None, mistakes=None, variants=None):
    """grades.json's submissions for a students × parts matrix of points earned. parts: addresses
    (default q1.a, q1.b, q2.c, …: two parts per question); statuses/mistakes: {(i, j): value}."""
    matrix = np.asarray(matrix, float)
    n, k = matrix.shape
    parts = parts or [f"q{j // 2 + 1}.{'abcdefghij'[j]}" for j in range(k)]
    subs = []
    for i in range(n):
        problems = {}
        for j, addr in enumerate(parts):
            q, pid = addr.split(".")
            pr = problems.setdefault(q, {"question": q, "title": q.upper(), "parts": [],
                                         "variant": (variants or {}).get((i, q), "")})
            st = (statuses or {}).get((i, j)) or ("correct" if matrix[i, j] == points[j] else "wrong")
            pr["parts"].append({"part": pid, "status": st, "score": float(matrix[i, j]), "max_score": points[j],
                                "misconception": (mistakes or {}).get((i, j))})
        subs.append({"student_id": f"s{i}", "problems": list(problems.values())})
    return subs


def strict(text):
    def refuse(name):
        raise AssertionError(f"{name} in JSON")
    return json.loads(text, parse_constant=refuse)


# a class of 6 where every value is known: parts of 2, 1 and 1 points
M = np.array([[2, 1, 1], [2, 1, 0], [1, 0, 1], [2, 0, 0], [0, 1, 0], [0, 0, 0]], float)
P = [2, 1, 1]


def item_rest(x, totals):
    rest = totals - x
    dx, dr = x - x.mean(), rest - rest.mean()
    return (dx * dr).sum() / np.sqrt((dx ** 2).sum() * (dr ** 2).sum())


def test_difficulty_discrimination_alpha_sem_against_textbook_formulas():
    r = analyse(item_data(grades(M, P)))
    T = M.sum(axis=1)
    assert r["students"] == 6
    assert r["mean"] == pytest.approx(T.mean(), abs=1e-4)
    assert r["sd"] == pytest.approx(np.sqrt(((T - T.mean()) ** 2).sum() / 5), abs=1e-4)
    for j, p in enumerate(r["parts"]):
        assert p["points"] == P[j]
        assert p["difficulty"] == pytest.approx(M[:, j].mean() / P[j], abs=1e-4)
        assert p["discrimination"] == pytest.approx(item_rest(M[:, j], T), abs=1e-4)
    # α = k/(k−1)·(1 − Σσ²ᵢ/σ²ₜ), both with n − 1
    k = 3
    item_vars = sum(((M[:, j] - M[:, j].mean()) ** 2).sum() / 5 for j in range(k))
    total_var = ((T - T.mean()) ** 2).sum() / 5
    alpha = k / (k - 1) * (1 - item_vars / total_var)
    assert r["alpha"] == pytest.approx(alpha, abs=1e-4)
    assert r["sem"] == pytest.approx(np.sqrt(total_var) * np.sqrt(1 - alpha), abs=1e-4)
    # by hand: difficulty of q1.a = 7/12, of q1.b = 3/6
    assert r["parts"][0]["difficulty"] == pytest.approx(7 / 12, abs=1e-4)
    assert r["parts"][1]["difficulty"] == 0.5


def test_alpha_equals_kr20_for_all_or_nothing_parts():
    rng = np.random.default_rng(3)
    ability = np.linspace(0.1, 0.9, 30)
    M01 = (rng.random((30, 8)) < ability[:, None]).astype(float)
    r = analyse(item_data(grades(M01, [1] * 8)))
    p = M01.mean(axis=0)
    T = M01.sum(axis=1)
    kr20 = 8 / 7 * (1 - (p * (1 - p)).sum() / T.var())        # KR-20: pq and σ² both population
    assert r["alpha"] == pytest.approx(kr20, abs=1e-4)


def test_questions_sum_their_parts():
    r = analyse(item_data(grades(M, P)))
    q1 = M[:, 0] + M[:, 1]
    T = M.sum(axis=1)
    [a, b] = r["questions"]
    assert (a["question"], a["points"], b["question"], b["points"]) == ("q1", 3, "q2", 1)
    assert a["difficulty"] == pytest.approx((q1 / 3).mean(), abs=1e-4)
    assert a["discrimination"] == pytest.approx(item_rest(q1, T), abs=1e-4)
    assert b["discrimination"] == r["parts"][2]["discrimination"]


def test_misconceptions_top_three_with_top_and_bottom_27_percent_shares():
    n = 11                            # round(0.27 · 11) = 3 students in each tail
    Mm = np.array([[1.0, 1.0, 1.0 - (i >= 8)] if i < 6 else [0.0, float(i < 8), 0.0] for i in range(n)])
    mistakes = {(i, 0): "often" for i in range(6, 11)} | {(i, 0): "mid" for i in (2, 3)} | {(4, 0): "rare"}
    mistakes |= {(5, 0): "rarest"}
    for i in (2, 3, 4, 5):
        Mm[i, 0] = 0.0
    T = Mm.sum(axis=1)
    order = sorted(range(n), key=lambda i: -T[i])          # stable: ties keep the students' order
    top, bottom = set(order[:3]), set(order[-3:])
    r = analyse(item_data(grades(Mm, [1, 1, 1], mistakes=mistakes)))
    got = r["parts"][0]["misconceptions"]
    who = {}
    for (i, _), m in mistakes.items():
        who.setdefault(m, set()).add(i)
    assert [(m["misconception"], m["count"]) for m in got] == [("often", 5), ("mid", 2), ("rare", 1)]
    for m in got:
        assert m["top_share"] == pytest.approx(len(who[m["misconception"]] & top) / 3, abs=1e-4)
        assert m["bottom_share"] == pytest.approx(len(who[m["misconception"]] & bottom) / 3, abs=1e-4)
    assert got[0]["bottom_share"] == 1 and got[0]["top_share"] == 0
    q = r["questions"][0]["misconceptions"]
    assert [m["misconception"] for m in q] == ["often", "mid", "rare"]


def test_one_student():
    r = analyse(item_data(grades([[2, 0, 1]], P)))
    assert r["students"] == 1 and r["mean"] == 3
    assert r["sd"] is None and r["alpha"] is None and r["sem"] is None
    assert [p["discrimination"] for p in r["parts"]] == [None, None, None]
    assert [p["difficulty"] for p in r["parts"]] == [1, 0, 1]
    strict(json.dumps(r, allow_nan=False))


def test_all_correct_is_zero_variance():
    r = analyse(item_data(grades(np.tile(P, (5, 1)), P)))
    assert [p["difficulty"] for p in r["parts"]] == [1, 1, 1]
    assert [p["discrimination"] for p in r["parts"]] == [None, None, None]
    assert r["sd"] == 0 and r["alpha"] is None and r["sem"] is None
    assert ",1,,0,0," in csv_text(r).splitlines()[1]          # undefined: an empty cell


def test_a_part_nobody_answered():
    Mb = M.copy()
    Mb[:, 2] = 0
    statuses = {(i, 2): "blank" for i in range(6)}
    r = analyse(item_data(grades(Mb, P, statuses=statuses)))
    c = r["parts"][2]
    assert (c["difficulty"], c["discrimination"], c["blank"], c["unreadable"]) == (0, None, 6, 0)
    T = Mb.sum(axis=1)                    # the other parts' item-rest r are unaffected by a constant part
    assert r["parts"][0]["discrimination"] == pytest.approx(item_rest(Mb[:, 0], T), abs=1e-4)


def test_unreadable_counted():
    r = analyse(item_data(grades(M, P, statuses={(0, 1): "unparseable", (2, 1): "unparseable"})))
    assert r["parts"][1]["unreadable"] == 2 and r["parts"][1]["blank"] == 0


def test_pending_written_parts_are_left_out_until_marked():
    Mw = np.column_stack([M, np.zeros(6)])
    subs = grades(Mw, [*P, 4], parts=["q1.a", "q1.b", "q2.c", "q3.w1"], statuses={(i, 3): "pending" for i in range(6)})
    data = item_data(subs)
    assert data.left_out == ["q3.w1"] and "q3.w1" not in data.parts
    assert analyse(data)["mean"] == pytest.approx(M.sum(axis=1).mean(), abs=1e-4)
    marked = grades(Mw + np.array([0, 0, 0, 3]), [*P, 4], parts=["q1.a", "q1.b", "q2.c", "q3.w1"],
                    statuses={(i, 3): "marked" for i in range(6)})
    assert "q3.w1" in item_data(marked).parts


def test_variant_groups_compared_from_ten_students_and_flagged_above_015():
    n = 2 * GROUP_MIN
    Mg = np.array([[1, 1, 1]] * GROUP_MIN + [[1, 0, 1]] * 4 + [[1, 1, 0]] * (GROUP_MIN - 4), float)
    variants = {(i, "q1"): ("after" if i < GROUP_MIN else "before") for i in range(n)}
    [g] = analyse(item_data(grades(Mg, [1, 1, 1], variants=variants)))["groups"]
    d = {v["variant"]: v["difficulty"] for v in g["variants"]}
    assert {v["variant"]: v["students"] for v in g["variants"]} == {"after": GROUP_MIN, "before": GROUP_MIN}
    assert d["after"] == 1 and d["before"] == pytest.approx(Mg[GROUP_MIN:, :2].sum(1).mean() / 2, abs=1e-4)
    assert g["spread"] == pytest.approx(0.2, abs=1e-4) and g["flag"] is True
    # a difference of exactly 0.15 is not "more than 0.15"
    Mg2 = np.array([[1, 1, 1]] * GROUP_MIN + [[1, 0, 1]] * 3 + [[1, 1, 0]] * (GROUP_MIN - 3), float)
    g15 = analyse(item_data(grades(Mg2, [1, 1, 1], variants=variants)))["groups"][0]
    assert g15["spread"] == pytest.approx(0.15, abs=1e-4) and g15["flag"] is False
    small = dict(variants)
    small[(0, "q1")] = "odd"
    g2 = analyse(item_data(grades(Mg, [1, 1, 1], variants=small)))["groups"][0]
    assert g2["spread"] is None and g2["flag"] is False and "too small" in g2["note"]


def test_one_variant_label_makes_no_group():
    variants = {(i, "q1"): "qkv" for i in range(6)}
    assert analyse(item_data(grades(M, P, variants=variants)))["groups"] == []


def test_parts_missing_from_some_variants():
    """A structural variant asks different parts: each part is analysed over the students who have
    it, α over the parts everyone has."""
    subs = grades(M, P)
    for i in range(3):
        subs[i]["problems"][0]["parts"][1]["part"] = "b2"
    data = item_data(subs)
    assert data.parts == ["q1.a", "q1.b2", "q1.b", "q2.c"] or data.parts == ["q1.a", "q1.b", "q1.b2", "q2.c"]
    r = analyse(data)
    T = M.sum(axis=1)
    b2 = next(p for p in r["parts"] if p["part"] == "q1.b2")
    assert b2["difficulty"] == pytest.approx(M[:3, 1].mean(), abs=1e-4)
    assert b2["discrimination"] == pytest.approx(item_rest(M[:3, 1], T[:3]), abs=1e-4)
    common = M[:, [0, 2]]
    ct = common.sum(1)
    alpha = 2 * (1 - common.var(axis=0, ddof=1).sum() / ct.var(ddof=1))
    assert r["alpha"] == pytest.approx(alpha, abs=1e-4)


def test_bad_grades_files_are_named():
    with pytest.raises(InputError, match="not a grades file"):
        from_grades({"submissions": []}, "g.json")
    with pytest.raises(InputError, match=r"^g.json: submission 1 \(s0\): a problem's question must be text \(q1\), "
                                         r"got null$"):
        from_grades({"format": "examprep-grades", "submissions": [{"student_id": "s0", "problems": [{"x": 1}]}]},
                    "g.json")


def part0(subs, i=0):
    return subs[i]["problems"][0]["parts"][0]


@pytest.mark.parametrize("edit, message", [
    (lambda s: part0(s).update(score=10 ** 400),          # float() of it overflowed: a traceback
     "submission 1 (s0), q1.a: score 1000000000000000000000000000000000000000… is not a score examprep grade writes"),
    (lambda s: part0(s).update(misconception={"a": 1}),
     'submission 1 (s0), q1.a: misconception must be text or null, got {"a": 1}'),
    (lambda s: part0(s).update(misconception=["x"]), 'submission 1 (s0), q1.a: misconception must be text or null, '
                                                     'got ["x"]'),
    (lambda s: part0(s, 1).update(status="great"),
     'submission 2 (s1), q1.a: status must be one of correct, ecf, misconception, wrong, blank, unparseable, '
     'pending, marked, got "great"'),
    (lambda s: part0(s).update(score="abc"), 'submission 1 (s0), q1.a: score must be a number, got "abc"'),
    (lambda s: part0(s).update(score=True), "submission 1 (s0), q1.a: score must be a number, got true"),
    (lambda s: part0(s).update(max_score=float("inf")), "submission 1 (s0), q1.a: score 2 of inf is not a score"),
    (lambda s: part0(s).pop("max_score"), "submission 1 (s0), q1.a: max_score must be a number, got null"),
    (lambda s: s[0]["problems"][0]["parts"].append(dict(part0(s))), "submission 1 (s0), q1.a: the part appears twice"),
    (lambda s: s[0]["problems"][0]["parts"].append(7),
     'submission 1 (s0), q1: a part must be a table with its id as text in "part", got 7'),
    (lambda s: s[0]["problems"][0].update(title=["t"]), 'submission 1 (s0), q1: title must be text, got ["t"]'),
    (lambda s: s[0]["problems"][0].update(parts="x"), 'submission 1 (s0), q1: parts must be a list, got "x"'),
    (lambda s: s[0].update(problems=None), "submission 1 (s0): problems must be a list, got null"),
    (lambda s: s[0].update(student_id=5), "submission 1: student_id must be text, got 5"),
    (lambda s: s.__setitem__(0, "ada"), 'submission 1: must be a table, got "ada"'),
    (lambda s: s[0].update(student_id="x\x1b[2J"), "submission 1 (x\\x1b[2J), q1.a: score nan"),
])
def test_every_field_analyze_reads_is_checked_naming_file_submission_and_field(edit, message):
    subs = grades([[2, 1], [1, 0], [0, 1]], [2, 1])
    if "nan" in message:
        part0(subs).update(score=float("nan"))
    edit(subs)
    with pytest.raises(InputError) as info:
        from_grades({"format": "examprep-grades", "submissions": subs}, "g.json")
    assert str(info.value).startswith(f"g.json: {message}"), str(info.value)
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value)


@pytest.mark.parametrize("summary, message", [
    ([], "summary: must be a table with a list of misconceptions, got []"),
    ({"misconceptions": {"a": 1}}, 'summary: must be a table with a list of misconceptions, got {"misconceptions": '),
    ({"misconceptions": [{"misconception": {"a": 1}, "explanation": "x"}]},
     'summary: misconception 1: misconception must be text, got {"a": 1}'),
    ({"misconceptions": [{"misconception": "m", "explanation": 3}]},
     "summary: misconception 1: explanation must be text, got 3"),
    ({"misconceptions": [None]}, "summary: misconception 1 must be a table, got null"),
])
def test_the_summarys_misconceptions_are_checked(summary, message):
    data = {"format": "examprep-grades", "submissions": grades([[2, 1], [1, 0]], [2, 1]), "summary": summary}
    with pytest.raises(InputError) as info:
        from_grades(data, "g.json")
    assert str(info.value).startswith(f"g.json: {message}"), str(info.value)


@pytest.mark.parametrize("edit, message", [
    (lambda subs: subs[0]["problems"][0]["parts"][0].update(score=50.0),
     r"submission 1 \(s0\), q1.a: score 50 is outside 0 … 2"),
    (lambda subs: subs[1]["problems"][0]["parts"][1].update(max_score=-5),
     r"submission 2 \(s1\), q1.b: score .* of -5"),
    (lambda subs: subs[0]["problems"][0]["parts"][0].update(score=float("nan")), r"q1.a: score nan of 2 is not a score"),
    (lambda subs: subs[2].update(student_id="s0"), r"submission 3: student 's0' appears twice"),
    (lambda subs: subs.clear(), r"no submissions to analyse"),
])
def test_a_grades_file_with_impossible_scores_is_refused_naming_the_cell(edit, message):
    # a hand-edited grades.json would otherwise give difficulties above 1 or a class of nobody
    subs = grades([[2, 1], [1, 0], [0, 1]], [2, 1])
    edit(subs)
    with pytest.raises(InputError, match=message) as info:
        from_grades({"format": "examprep-grades", "submissions": subs}, "g.json")
    assert str(info.value).startswith("g.json: ") and "\n" not in str(info.value)


def test_a_part_too_few_students_answered_is_too_few_answers_not_hard():
    """q2's variant y (one student of twelve) has part c, which that student missed: below
    MIN_ANSWERS it is "too few answers" (pointing to q2, whose row groups both variants), never
    "hard"; q2's own row is computed over all twelve, checked here with numpy."""
    from examprep.grading.analysis import MIN_ANSWERS, review_reasons
    from examprep.grading.analysis_text import terminal_summary, typst_source

    assert MIN_ANSWERS == 5
    rng = np.random.default_rng(7)
    n = 12
    M = np.column_stack([rng.integers(0, 3, n), rng.integers(0, 2, n), np.zeros(n)]).astype(float)
    P = [2, 1, 1]
    variants = {(i, "q2"): "y" if i == 0 else "x" for i in range(n)}
    subs = grades(M, P, parts=["q1.a", "q2.b", "q2.c"], variants=variants)
    for i, sub in enumerate(subs):                      # b only in variant x, c only in variant y
        q2 = sub["problems"][1]
        q2["parts"] = [p for p in q2["parts"] if (p["part"] == "c") == (i == 0)]
    r = analyse(item_data(subs))
    assert r["min_answers"] == MIN_ANSWERS
    part = {p["part"]: p for p in r["parts"]}
    assert [part[a]["answers"] for a in ("q1.a", "q2.b", "q2.c")] == [12, 11, 1]
    assert part["q2.c"]["difficulty"] == 0.0                       # reported, but not judged
    why = review_reasons(part["q2.c"])
    assert why == ["too few answers (1 < 5); read q2, which groups its variants"]
    assert not any("hard" in w or "easy" in w for w in why)
    q2 = next(q for q in r["questions"] if q["question"] == "q2")
    earned = np.where(np.arange(n) == 0, M[:, 2], M[:, 1])          # each student's own variant's part
    assert q2["answers"] == n and q2["difficulty"] == pytest.approx((earned / 1.0).mean(), abs=1e-4)
    assert not any(w.startswith("too few") for w in review_reasons(q2))
    rows = csv_text(r).splitlines()
    assert rows[0].split(",")[3] == "answers"
    assert {row.split(",")[0]: row.split(",")[3] for row in rows[1:4]} == {"q1.a": "12", "q2.b": "11", "q2.c": "1"}
    from rich.console import Console
    import io
    console = Console(width=100, record=True, file=io.StringIO())
    console.print(terminal_summary(r, [], title="t"))
    shown = console.export_text()
    assert "too few answers (1 < 5)" in shown
    assert "Not on the map (too few answers, fewer than 5): q2.c" in typst_source(r, list(M.sum(axis=1)))
