"""Item analysis of a graded class: which parts were too hard or too easy, which did not separate
strong from weak students, which mistakes the class made, whether one variant was harder.

Input is what `grade --json` writes (grades.json's submissions, or the same dicts from memory), so
`examprep analyze GRADES.json` reruns it without the key or the submissions.

The statistics (classical test theory, as Moodle's quiz statistics and auto-multiple-choice):
- difficulty: the mean fraction of a part's points earned (the facility index);
- discrimination: item–rest correlation, Pearson's r between the part's score and the total of the
  other parts, over the students who have the part;
- Cronbach's α over the parts every student has, item and total variances both with ddof = 1
  (equal to KR-20 when every part is all-or-nothing), and SEM = sd × √(1 − α) of the same totals;
- misconceptions: the three most frequent, with their share among the top and the bottom 27% of
  students by total (round(0.27 n), at least one; ties keep grades.json's order).
A statistic that is undefined (one student, zero variance, a part nobody has) is None, never NaN.
A part or question answered by fewer than MIN_ANSWERS students (a part only one variant has, a
small class) is "too few answers": its statistics are reported but never flagged hard, easy or
non-separating; its question's row (which groups every variant's parts) is the one to read.
Written parts still pending (not yet marked) are left out, and named in ``left_out``.
"""
from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from examprep.answers.result import STATUSES
from examprep.escape import printable, shown
from examprep.fileio import InputError

TAIL = 0.27              # Kelley's upper and lower groups
GROUP_MIN = 10           # students per variant group before two groups are compared
GROUP_FLAG = 0.15        # a difference in difficulty between groups of one question worth a look
HARD, EASY, LOW_DISCRIMINATION = 0.2, 0.95, 0.2     # the item map's review zones
MIN_ANSWERS = 5          # students with a part before its difficulty and discrimination are judged


@dataclass
class ItemData:
    """A class's grades as matrices: students × parts (points earned, NaN where a student's variant
    has no such part), the parts' addresses, points and question, per part the blank/unreadable
    counts and each misconception's students, per question each student's variant label."""

    students: list[str]
    parts: list[str]
    question_of: list[str]
    scores: np.ndarray
    maxima: np.ndarray
    blank: list[int]
    unreadable: list[int]
    mistakes: list[dict[str, list[int]]]
    explanations: dict[str, str]
    titles: dict[str, str]
    variants: dict[str, list[str]]
    left_out: list[str] = field(default_factory=list)


def item_data(submissions: list[dict[str, Any]], explanations: dict[str, str] | None = None) -> ItemData:
    """The matrices of grades.json's ``submissions`` (each with problems → parts, as
    SubmissionResult.to_dict writes them). Written parts with any pending cell are left out.
    Every text (ids, misconceptions, titles, explanations) is made printable (answers.files.printable)
    here, so no output of the analysis (terminal, JSON, CSV, PDF) gets a control character raw."""
    index: dict[str, int] = {}
    question_of: list[str] = []
    rows: list[int] = []
    cols: list[int] = []
    earned: list[float] = []
    possible: list[float] = []
    flags: list[tuple[int, int, str, str | None]] = []      # the cells that are not simply scored
    pending: set[str] = set()
    titles: dict[str, str] = {}
    variants: dict[str, list[str]] = {}
    n = len(submissions)
    for i, sub in enumerate(submissions):
        for pr in sub["problems"]:
            q = printable(pr["question"])      # text from a file: escaped once here for every output
            if q not in variants:
                variants[q] = [""] * n
                titles[q] = printable(pr.get("title") or "")
            variants[q][i] = printable(pr.get("variant") or "")
            for part in pr["parts"]:
                addr = f"{q}.{printable(part['part'])}"
                j = index.get(addr)
                if j is None:
                    j = index[addr] = len(question_of)
                    question_of.append(q)
                rows.append(i)
                cols.append(j)
                earned.append(part["score"])
                possible.append(part["max_score"])
                status, mis = part["status"], part.get("misconception") and printable(part["misconception"])
                if status == "pending":
                    pending.add(addr)
                elif mis or status in ("blank", "unparseable"):
                    flags.append((i, j, status, mis))
    keep = sorted((a for a in index if a not in pending), key=lambda a: (_qnum(a), index[a]))
    column = np.full(len(index), -1)
    for c, a in enumerate(keep):
        column[index[a]] = c
    k = len(keep)
    scores = np.full((n, k), np.nan)
    maxima = np.full((n, k), np.nan)
    r, c = np.asarray(rows, dtype=int), column[np.asarray(cols, dtype=int)] if cols else np.zeros(0, int)
    kept = c >= 0
    scores[r[kept], c[kept]] = np.asarray(earned, dtype=float)[kept]
    maxima[r[kept], c[kept]] = np.asarray(possible, dtype=float)[kept]
    blank, unreadable = [0] * k, [0] * k
    mistakes: list[dict[str, list[int]]] = [{} for _ in range(k)]
    for i, j, status, mis in flags:
        cc = int(column[j])
        if cc < 0:
            continue
        if status == "blank":
            blank[cc] += 1
        elif status == "unparseable":
            unreadable[cc] += 1
        if mis:
            mistakes[cc].setdefault(mis, []).append(i)
    return ItemData(students=[printable(s.get("student_id", "")) for s in submissions], parts=keep,
                    question_of=[question_of[index[a]] for a in keep], scores=scores, maxima=maxima,
                    blank=blank, unreadable=unreadable, mistakes=mistakes,
                    explanations={printable(m): printable(e) for m, e in (explanations or {}).items()},
                    titles=titles, variants=variants, left_out=sorted(pending, key=lambda a: (_qnum(a), index[a])))


def from_grades(data: Any, where: str = "grades.json") -> ItemData:
    """ItemData of a parsed grades.json; raises InputError naming what is missing."""
    if not isinstance(data, dict) or data.get("format") != "examprep-grades":
        raise InputError(f"{where}: not a grades file written by `examprep grade --json` "
                         "(no \"format\": \"examprep-grades\")")
    subs = data.get("submissions")
    if not isinstance(subs, list):
        raise InputError(f"{where}: \"submissions\" is missing or not a list")
    if not subs:
        raise InputError(f"{where}: no submissions to analyse")
    seen: set[str] = set()
    for n, sub in enumerate(subs, 1):
        sid = _check_submission(sub, f"{where}: submission {n}")
        if sid in seen:
            raise InputError(f"{where}: submission {n}: student {printable(sid)!r} appears twice; each student once")
        seen.add(sid)
    summary = data.get("summary", {})
    mistakes = summary.get("misconceptions", []) if isinstance(summary, dict) else None
    if not isinstance(mistakes, list):
        raise InputError(f"{where}: summary: must be a table with a list of misconceptions, got {shown(summary)}")
    explanations = {}
    for k, m in enumerate(mistakes, 1):
        if not isinstance(m, dict):
            raise InputError(f"{where}: summary: misconception {k} must be a table, got {shown(m)}")
        for name, value in (("misconception", m.get("misconception")), ("explanation", m.get("explanation", ""))):
            if not isinstance(value, str):
                raise InputError(f"{where}: summary: misconception {k}: {name} must be text, got {shown(value)}")
        if m["misconception"]:
            explanations.setdefault(m["misconception"], m.get("explanation", ""))
    return item_data(subs, explanations)


def _check_submission(sub: Any, where: str) -> str:
    """One submission of grades.json, every field analyze reads, as `grade --json` writes it; its
    student id. InputError names the submission, the part and the field."""
    if not isinstance(sub, dict):
        raise InputError(f"{where}: must be a table, got {shown(sub)}")
    sid = sub.get("student_id", "")
    if not isinstance(sid, str):
        raise InputError(f"{where}: student_id must be text, got {shown(sid)}")
    where = f"{where} ({printable(sid)})"
    problems = sub.get("problems")
    if not isinstance(problems, list):
        raise InputError(f"{where}: problems must be a list, got {shown(problems)}")
    addresses: set[str] = set()
    for pr in problems:
        if not isinstance(pr, dict):
            raise InputError(f"{where}: a problem must be a table, got {shown(pr)}")
        q = pr.get("question")
        if not isinstance(q, str) or not q:
            raise InputError(f"{where}: a problem's question must be text (q1), got {shown(q)}")
        at = f"{where}, {printable(q)}"
        for name in ("title", "variant"):
            if pr.get(name) is not None and not isinstance(pr[name], str):
                raise InputError(f"{at}: {name} must be text, got {shown(pr[name])}")
        if not isinstance(pr.get("parts"), list):
            raise InputError(f"{at}: parts must be a list, got {shown(pr.get('parts'))}")
        for part in pr["parts"]:
            if not isinstance(part, dict) or not isinstance(part.get("part"), str) or not part["part"]:
                raise InputError(f"{at}: a part must be a table with its id as text in \"part\", got {shown(part)}")
            address = f"{q}.{part['part']}"
            at_part = f"{where}, {printable(address)}"
            if address in addresses:
                raise InputError(f"{at_part}: the part appears twice")
            addresses.add(address)
            if part.get("status") not in STATUSES:
                raise InputError(f"{at_part}: status must be one of {', '.join(STATUSES)}, got {shown(part.get('status'))}")
            mis = part.get("misconception")
            if mis is not None and not isinstance(mis, str):
                raise InputError(f"{at_part}: misconception must be text or null, got {shown(mis)}")
            for name in ("score", "max_score"):
                v = part.get(name)
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise InputError(f"{at_part}: {name} must be a number, got {shown(v)}")
                if isinstance(v, int) and abs(v) > 1e300:            # float() of 10**400 overflows
                    raise InputError(f"{at_part}: {name} {shown(v)} is not a score examprep grade writes")
            _check_score(float(part["score"]), float(part["max_score"]), at_part)
    return sid


def _check_score(score: float, top: float, what: str) -> None:
    """A part's score and maximum as grade writes them: finite, maximum above 0, 0 ≤ score ≤ maximum."""
    if not (np.isfinite(score) and np.isfinite(top)) or top <= 0:
        raise InputError(f"{what}: score {score:g} of {top:g} is not a score examprep grade writes "
                         "(finite, out of a positive maximum)")
    if not -1e-9 <= score <= top + 1e-9:
        raise InputError(f"{what}: score {score:g} is outside 0 … {top:g}")


def _qnum(addr: str) -> int:
    head = addr.split(".", 1)[0]
    return int(head[1:]) if head[1:].isdigit() else 0


def _num(x: float | None, places: int = 4) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), places)


def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r; None with fewer than two pairs or a constant side."""
    if len(x) < 2:
        return None
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(dx @ dx), float(dy @ dy)
    if sxx <= 1e-12 * max(1.0, float(np.abs(x).max()) ** 2) * len(x) or \
            syy <= 1e-12 * max(1.0, float(np.abs(y).max()) ** 2) * len(y):
        return None
    return float(dx @ dy) / np.sqrt(sxx * syy)


def cronbach_alpha(items: np.ndarray) -> float | None:
    """α of a complete students × items matrix (ddof = 1 throughout); None below two students or
    two items, or when the totals do not vary."""
    n, k = items.shape
    if n < 2 or k < 2:
        return None
    total_var = float(items.sum(axis=1).var(ddof=1))
    if total_var <= 1e-12:
        return None
    return k / (k - 1) * (1 - float(items.var(axis=0, ddof=1).sum()) / total_var)


def _tails(totals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(totals)
    g = max(1, int(round(TAIL * n)))
    order = np.argsort(-totals, kind="stable")
    return order[:g], order[n - g:]


def _misconceptions(students_by_mis: dict[str, list[int]], has: np.ndarray, top: np.ndarray, bottom: np.ndarray,
                    explanations: dict[str, str]) -> list[dict[str, Any]]:
    in_top, in_bottom = np.zeros(len(has), bool), np.zeros(len(has), bool)
    in_top[top], in_bottom[bottom] = True, True
    top_n, bottom_n = int((in_top & has).sum()), int((in_bottom & has).sum())
    counts = Counter({m: len(set(ids)) for m, ids in students_by_mis.items()})
    out = []
    for m, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]:
        who = np.zeros(len(has), bool)
        who[students_by_mis[m]] = True
        out.append({"misconception": m, "count": count, "explanation": explanations.get(m, ""),
                    "top_share": _num((who & in_top).sum() / top_n) if top_n else None,
                    "bottom_share": _num((who & in_bottom).sum() / bottom_n) if bottom_n else None})
    return out


def _item(name_key: str, name: str, score: np.ndarray, top: np.ndarray, totals: np.ndarray, blank: int,
          unreadable: int, mistakes: dict[str, list[int]], top_i: np.ndarray, bottom_i: np.ndarray,
          explanations: dict[str, str]) -> dict[str, Any]:
    has = ~np.isnan(score)
    points = float(np.nanmax(top)) if has.any() else 0.0
    frac = score[has] / np.where(top[has] > 0, top[has], np.nan)
    difficulty = float(np.nanmean(frac)) if has.any() and np.isfinite(frac).any() else None
    x = score[has]
    discrimination = pearson(x, totals[has] - x)
    return {name_key: name, "points": points, "answers": int(has.sum()), "difficulty": _num(difficulty),
            "discrimination": _num(discrimination), "blank": blank, "unreadable": unreadable,
            "misconceptions": _misconceptions(mistakes, has, top_i, bottom_i, explanations)}


def analyse(data: ItemData) -> dict[str, Any]:
    """The item analysis as item-analysis.json holds it (see the module's docstring)."""
    s, mx = data.scores, data.maxima
    n, k = s.shape
    totals = np.nansum(s, axis=1) if k else np.zeros(n)
    mean = float(totals.mean()) if n else None
    sd = float(totals.std(ddof=1)) if n >= 2 else None
    complete = ~np.isnan(s).any(axis=0)
    alpha = cronbach_alpha(s[:, complete]) if n else None
    common_totals = s[:, complete].sum(axis=1)
    sem = (float(common_totals.std(ddof=1)) * np.sqrt(max(0.0, 1 - alpha))) if alpha is not None else None
    top_i, bottom_i = _tails(totals) if n else (np.array([], int), np.array([], int))
    parts = [_item("part", data.parts[j], s[:, j], mx[:, j], totals, data.blank[j], data.unreadable[j],
                   data.mistakes[j], top_i, bottom_i, data.explanations) for j in range(k)]
    questions = []
    for q in dict.fromkeys(data.question_of):
        cols = [j for j in range(k) if data.question_of[j] == q]
        has = ~np.isnan(s[:, cols]).all(axis=1)
        qs = np.where(has, np.nansum(s[:, cols], axis=1), np.nan)
        qm = np.where(has, np.nansum(mx[:, cols], axis=1), np.nan)
        merged: dict[str, list[int]] = {}
        for j in cols:
            for m, ids in data.mistakes[j].items():
                merged.setdefault(m, []).extend(ids)
        questions.append(_item("question", q, qs, qm, totals, sum(data.blank[j] for j in cols),
                               sum(data.unreadable[j] for j in cols), merged, top_i, bottom_i, data.explanations))
    parts = [{"part": p["part"], "question": data.question_of[j], **p} for j, p in enumerate(parts)]
    return {"students": n, "min_answers": MIN_ANSWERS, "mean": _num(mean), "sd": _num(sd), "alpha": _num(alpha),
            "sem": _num(sem), "parts": parts, "questions": questions, "groups": groups(data)}


def groups(data: ItemData) -> list[dict[str, Any]]:
    """Per question with two or more variant labels: each label's students and difficulty; the
    spread (largest minus smallest difficulty) and its flag (> GROUP_FLAG) only when every group
    has GROUP_MIN students or more, else a note that the groups are too small."""
    out = []
    s, mx = data.scores, data.maxima
    for q, labels in data.variants.items():
        cols = [j for j in range(len(data.parts)) if data.question_of[j] == q]
        named = sorted({lab for lab in labels if lab})
        if len(named) < 2 or not cols:
            continue
        qs, qm = np.nansum(s[:, cols], axis=1), np.nansum(mx[:, cols], axis=1)
        rows = []
        for lab in named:
            who = np.array([v == lab for v in labels]) & (qm > 0)
            rows.append({"variant": lab, "students": int(who.sum()),
                         "difficulty": _num(float((qs[who] / qm[who]).mean())) if who.any() else None})
        big = all(r["students"] >= GROUP_MIN for r in rows)
        diffs = [r["difficulty"] for r in rows if r["difficulty"] is not None]
        spread = _num(max(diffs) - min(diffs)) if big and len(diffs) >= 2 else None
        flag = spread is not None and spread > GROUP_FLAG
        note = (f"too small to compare (each group needs {GROUP_MIN} students)" if not big
                else f"difficulty differs by {spread:.2f} (more than {GROUP_FLAG})" if flag
                else f"difficulty within {GROUP_FLAG}")
        out.append({"question": q, "variants": rows, "spread": spread, "flag": flag, "note": note})
    return out


def review_reasons(item: dict[str, Any]) -> list[str]:
    """Why a part (or question) is worth a look: the item map's review zones; below MIN_ANSWERS
    answers only "too few answers" (no zone is judged on so few students)."""
    answers = item.get("answers", MIN_ANSWERS)
    if answers < MIN_ANSWERS:
        grouped = f"; read {item['question']}, which groups its variants" if item.get("question") else ""
        return [f"too few answers ({answers} < {MIN_ANSWERS}){grouped}"]
    why = []
    d, r = item["difficulty"], item["discrimination"]
    if d is not None and d < HARD:
        why.append(f"hard (difficulty {d:.2f} < {HARD})")
    if d is not None and d > EASY:
        why.append(f"easy (difficulty {d:.2f} > {EASY})")
    if r is None:
        why.append("discrimination undefined (no spread)")
    elif r < 0:
        why.append(f"weaker students did better (r = {r:.2f})")
    elif r < LOW_DISCRIMINATION:
        why.append(f"does not separate (r = {r:.2f} < {LOW_DISCRIMINATION})")
    return why


CSV_COLUMNS = ("item", "kind", "points", "answers", "difficulty", "discrimination", "blank", "unreadable",
               *(f"{f}_{i}" for i in (1, 2, 3) for f in ("misconception", "count", "top_share", "bottom_share")))


def csv_text(result: dict[str, Any]) -> str:
    """item-analysis.csv: one row per part, then one per question; an undefined value is empty."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for kind, key, items in (("part", "part", result["parts"]), ("question", "question", result["questions"])):
        for it in items:
            row = [it[key], kind, f"{it['points']:g}", it["answers"], _cell(it["difficulty"]), _cell(it["discrimination"]),
                   it["blank"], it["unreadable"]]
            for i in range(3):
                m = it["misconceptions"][i] if i < len(it["misconceptions"]) else None
                row += ([m["misconception"], m["count"], _cell(m["top_share"]), _cell(m["bottom_share"])]
                        if m else ["", "", "", ""])
            w.writerow(row)
    return buf.getvalue()


def _cell(x: float | None) -> str:
    return "" if x is None else f"{x:g}"
